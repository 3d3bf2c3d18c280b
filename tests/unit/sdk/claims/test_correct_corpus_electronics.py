"""A corpus of correct replies, written as LLM sales agents write them (50 in each of en,
es, pt) over the electronics store of ``test_hostile_electronics`` and the shoe store of
``test_binding``: every number they state is the evidence's, said of the object that holds
it. Each must be approved (every claim matched): it holds the checker to false refusals,
beside the hostile cases that hold it to false approvals.

Evidence: iPhone 15 128 GB $799 / 256 GB $899, iPhone 15 Pro 128 GB $999, iPhone 15 Pro Max
256 GB $1,199, Galaxy S24 128 GB $799.99, Galaxy S24 Ultra 256 GB $1,299.99, ThinkPad X1
Carbon Gen 11 16 GB $1,899, PS5 Slim $449.99, AirPods Pro 2 $249, Crystal UHD TV 55" $499 /
65" $699, Sony WH-1000XM5 $399.99, GeForce RTX 4070 $599; Aero Runner $129.99, City Flex
$99.90 (3 in stock). The Zephyr Trail is not held: a reply may name it, never price it.

An abbreviation the agent invents and no name holds ("S24U", "15PM") is not here: a fair
checker cannot know what it names, so no_evidence is its right verdict. A name's own tail
("the 15 Pro", "the S24 Ultra", "the XM5") is here: it is written in the name.
"""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.sdk.claims import Claims, Evidence, parse_contract

from .builders import NOW
from .test_binding import RETAIL, SHOES
from .test_hostile_electronics import CONTRACT, STORE

_STORES: dict[str, tuple[dict[str, Any], Evidence]] = {
    "electronics": (CONTRACT, STORE),
    "shoes": (RETAIL, SHOES),
}

E, S = "electronics", "shoes"

# Why a reply is not yet approved (docs/claims.md, "left"): such a reply is an expected
# failure, strict, so a change that approves it must take its mark away.
WORKED_OUT = "a difference worked out ('$200 less than') is compared with the prices held"
PLACE = "a title-cased place in a later clause ('Miami Beach store') is taken for a model"
DE = "the example contract's 'de' is a list-price term: 'es de $399.99' is a list price"
DE_AFTER = (
    "a role's term counts within 6 words of its number, after it too (the rule): the 'de' "
    "of 'tienda de Madrid' makes the price before it a list price"
)

Entry = tuple[str, str] | tuple[str, str, str]

EN: list[Entry] = [
    (E, "Hi Jordan! The iPhone 15 starts at $799 for 128 GB."),
    (E, "Great question, Priya. The iPhone 15 Pro is $999 and comes with 128 GB of storage."),
    (E, "For $799 you get the iPhone 15 with 128 GB."),
    (E, "The iPhone 15's price is $799 for the 128 GB model and $899 for 256 GB."),
    (E, "**iPhone 15 Pro Max** \u2013 $1,199 (256 GB) 🔥"),
    (
        E,
        "Here's a quick comparison:\n\n| Phone | Storage | Price |\n|---|---|---|\n"
        "| iPhone 15 | 128 GB | $799 |\n| Galaxy S24 | 128 GB | $799.99 |\n"
        "| Galaxy S24 Ultra | 256 GB | $1,299.99 |",
    ),
    (E, "The Galaxy S24 Ultra is our Best Seller at $1,299.99."),
    (E, "Black Friday Deal: the Galaxy S24 is just $799.99! 🎉"),
    (E, "The iPhone 15 Pro ($999) and the iPhone 15 Pro Max ($1,199) both have the A17 Pro chip."),
    (E, "The Galaxy S24 costs $799.99, while the S24 Ultra costs $1,299.99."),
    (E, "If you're on a budget, the AirPods Pro 2 are $249, and the Sony WH-1000XM5 are $399.99."),
    (E, "The WH-1000XM5's price is $399.99."),
    (E, "The ThinkPad X1 Carbon Gen 11 (16 GB RAM) is $1,899."),
    (E, "For gaming, I'd suggest the GeForce RTX 4070 at $599."),
    (E, "The RTX 4070 is $599 — a great upgrade for 1440p gaming."),
    (E, "Sure, Alex! The PS5 Slim is $449.99 at our Downtown Chicago store."),
    (E, "The 55-inch Crystal UHD TV is $499, and the 65-inch model is $699."),
    (E, "Want a bigger screen? The Crystal UHD TV in 65 inches is $699."),
    (E, "- AirPods Pro 2: $249\n- Sony WH-1000XM5: $399.99"),
    (E, "The iPhone 15 Pro Max in Natural Titanium is $1,199."),
    (E, "The iPhone 15 in Pink is $799 with 128 GB."),
    (E, "You can get the iphone 15 for $799."),
    (E, "The iPhone 15 Pro is $999, which is $200 less than the Pro Max at $1,199.", WORKED_OUT),
    (E, "The 15 Pro is $999."),
    (
        E,
        "Between the iPhone 15 at $799, the Galaxy S24 at $799.99 and the iPhone 15 Pro at $999, "
        "I'd go with the Pro.",
    ),
    (E, "Our Top Pick for Music Lovers: the Sony WH-1000XM5, now only $399.99."),
    (E, "Yes, we have the Galaxy S24 Ultra with 256 GB for $1,299.99."),
    (E, "Thanks for waiting, Sam. I checked: the ThinkPad X1 Carbon Gen 11 is $1,899.00."),
    (E, "The iPhone 15 with 256 GB costs $899."),
    (E, '**Crystal UHD TV**\n- 55": $499\n- 65": $699'),
    (E, "AirPods Pro 2 — $249. Great noise cancelling! 🎧"),
    (E, 'The PS5 Slim ($449.99) pairs well with the 65" Crystal UHD TV ($699).'),
    (E, "Hi! 👋 The Galaxy S24 with 128 GB is $799.99."),
    (E, "At $1,899, the ThinkPad X1 Carbon Gen 11 is our best business laptop."),
    (E, "The GeForce RTX 4070's price is $599."),
    (S, "Hi Maria! The City Flex is $99.90."),
    (S, "The Aero Runner is $129.99 and the City Flex is $99.90."),
    (S, "**Aero Runner** \u2013 $129.99\n**City Flex** \u2013 $99.90"),
    (S, "Only 3 left in stock of the City Flex! 🏃"),
    (S, "The City Flex's price is $99.90."),
    (S, "For $129.99 you get the Aero Runner, our Best Seller."),
    (S, "We don't carry the Zephyr Trail, but the City Flex is $99.90."),
    (S, "The Aero Runner in Black is $129.99."),
    (S, "Black Friday Deal: the City Flex is now $99.90!"),
    (S, "Between the Aero Runner ($129.99) and the City Flex ($99.90), the City Flex is lighter."),
    (S, "the aero runner is $129.99."),
    (S, "| Shoe | Price |\n|---|---|\n| Aero Runner | $129.99 |\n| City Flex | $99.90 |"),
    (S, "The City Flex is $99.90 at our Miami Beach store, and we have 3 in stock.", PLACE),
    (S, "Great choice, Tom! The Aero Runner costs $129.99."),
    (S, "The City Flex, Our Most Comfortable Sneaker, is $99.90."),
]

ES: list[Entry] = [
    (E, "¡Hola, Lucía! El iPhone 15 de 128 GB cuesta $799."),
    (E, "El iPhone 15 Pro cuesta $999 y trae 128 GB."),
    (E, "Por $799 te llevas el iPhone 15 con 128 GB."),
    (E, "El precio del iPhone 15 Pro Max es $1,199 con 256 GB."),
    (E, "El iPhone 15 está desde $799."),
    (E, "El iPhone 15 tiene un precio a partir de $799."),
    (E, "El Galaxy S24 Ultra cuesta $1,299.99 y el Galaxy S24 $799.99."),
    (E, "**Galaxy S24 Ultra** \u2013 $1,299.99 (256 GB) 🔥"),
    (
        E,
        "| Modelo | Almacenamiento | Precio |\n|---|---|---|\n| iPhone 15 | 128 GB | $799 |\n"
        "| iPhone 15 | 256 GB | $899 |\n| iPhone 15 Pro | 128 GB | $999 |",
    ),
    (E, "Oferta de Black Friday: los AirPods Pro 2 ahora por solo $249. 🎧"),
    (E, "Los Sony WH-1000XM5 cuestan $399.99."),
    (E, "La ThinkPad X1 Carbon Gen 11 con 16 GB de RAM cuesta $1,899.", DE),
    (E, "Para jugar te recomiendo la GeForce RTX 4070 por $599."),
    (E, "La RTX 4070 cuesta $599."),
    (E, "La PS5 Slim está a $449.99 en nuestra tienda de Madrid.", DE_AFTER),
    (E, "La Crystal UHD TV de 55 pulgadas cuesta $499 y la de 65 pulgadas $699."),
    (E, 'La Crystal UHD TV de 65" cuesta $699.'),
    (E, "- AirPods Pro 2: $249\n- Sony WH-1000XM5: $399.99\n- PS5 Slim: $449.99"),
    (E, "El iPhone 15 Pro Max en Titanio Natural cuesta $1,199."),
    (E, "El iphone 15 cuesta $799."),
    (E, "El 15 Pro cuesta $999."),
    (E, "El Galaxy S24 con 128 GB cuesta $799.99, ideal si buscas algo compacto."),
    (E, "Con gusto, Carlos: el iPhone 15 con 256 GB cuesta $899."),
    (
        E,
        "Entre el iPhone 15 Pro ($999) y el iPhone 15 Pro Max ($1,199), te recomiendo el Pro Max.",
    ),
    (E, "Nuestro Más Vendido: el Galaxy S24 Ultra por $1,299.99."),
    (E, "Los AirPods Pro 2 cuestan $249 y vienen con estuche MagSafe."),
    (E, "¡Buenas noticias! La ThinkPad X1 Carbon Gen 11 está en $1,899.00."),
    (E, "El PS5 Slim cuesta $449.99 y la RTX 4070 $599."),
    (E, "Te recomiendo el iPhone 15 Pro por $999. ✨"),
    (E, "El precio de los Sony WH-1000XM5 es de $399.99.", DE),
    (E, "La Crystal UHD TV de 55 pulgadas está a $499."),
    (E, "Sí, tenemos el Galaxy S24 Ultra de 256 GB por $1,299.99."),
    (E, "El iPhone 15 Pro Max cuesta $1,199 y el iPhone 15 Pro $999."),
    (E, "Por solo $249 te llevas los AirPods Pro 2."),
    (E, "El Galaxy S24 cuesta $799.99, mientras que el S24 Ultra cuesta $1,299.99."),
    (S, "¡Hola, Ana! Las City Flex cuestan $99.90."),
    (S, "El Aero Runner cuesta $129.99 y el City Flex $99.90."),
    (S, "**Aero Runner** \u2013 $129.99\n**City Flex** \u2013 $99.90"),
    (S, "Quedan 3 unidades del City Flex. 🏃‍♀️"),
    (S, "El precio del City Flex es $99.90."),
    (S, "Por $129.99 te llevas el Aero Runner, nuestro Más Vendido."),
    (S, "No tenemos el Zephyr Trail, pero el City Flex cuesta $99.90."),
    (S, "El Aero Runner en Negro cuesta $129.99."),
    (S, "Oferta de Black Friday: el City Flex ahora $99.90."),
    (S, "Entre el Aero Runner ($129.99) y el City Flex ($99.90), el City Flex es más ligero."),
    (S, "el city flex cuesta $99.90."),
    (S, "| Zapatilla | Precio |\n|---|---|\n| Aero Runner | $129.99 |\n| City Flex | $99.90 |"),
    (S, "El City Flex está a $99.90 en nuestra tienda de Barcelona.", DE_AFTER),
    (S, "¡Excelente elección, Pedro! El Aero Runner cuesta $129.99."),
    (S, "El City Flex, la Zapatilla Más Cómoda, cuesta $99.90."),
]

PT: list[Entry] = [
    (E, "Olá, João! O iPhone 15 de 128 GB sai por $799."),
    (E, "O iPhone 15 Pro custa $999 e vem com 128 GB."),
    (E, "Por $799 você leva o iPhone 15 com 128 GB."),
    (E, "O preço do iPhone 15 Pro Max é $1,199 com 256 GB."),
    (E, "O iPhone 15 sai a partir de $799."),
    (E, "O iPhone 15 está por apenas $799."),
    (E, "O Galaxy S24 Ultra custa $1,299.99 e o Galaxy S24 $799.99."),
    (E, "**Galaxy S24 Ultra** \u2013 $1,299.99 (256 GB) 🔥"),
    (
        E,
        "| Modelo | Armazenamento | Preço |\n|---|---|---|\n| iPhone 15 | 128 GB | $799 |\n"
        "| iPhone 15 | 256 GB | $899 |\n| iPhone 15 Pro Max | 256 GB | $1,199 |",
    ),
    (E, "Oferta de Black Friday: os AirPods Pro 2 por apenas $249. 🎧"),
    (E, "Os Sony WH-1000XM5 custam $399.99."),
    (E, "O ThinkPad X1 Carbon Gen 11 com 16 GB de RAM custa $1,899.", DE),
    (E, "Para games, recomendo a GeForce RTX 4070 por $599."),
    (E, "A RTX 4070 sai por $599."),
    (E, "O PS5 Slim sai por $449.99 na nossa loja de São Paulo."),
    (E, "A Crystal UHD TV de 55 polegadas custa $499 e a de 65 polegadas $699."),
    (E, 'A Crystal UHD TV de 65" sai por $699.'),
    (E, "- AirPods Pro 2: $249\n- Sony WH-1000XM5: $399.99\n- PS5 Slim: $449.99"),
    (E, "O iPhone 15 Pro Max na cor Titânio Natural sai por $1,199."),
    (E, "O iphone 15 custa $799."),
    (E, "O 15 Pro custa $999."),
    (E, "O Galaxy S24 com 128 GB custa $799.99, ótimo se você quer algo compacto."),
    (E, "Claro, Ana: o iPhone 15 com 256 GB sai por $899."),
    (E, "Entre o iPhone 15 Pro ($999) e o iPhone 15 Pro Max ($1,199), recomendo o Pro Max."),
    (E, "Nosso Mais Vendido: o Galaxy S24 Ultra por $1,299.99."),
    (E, "Os AirPods Pro 2 custam $249 e vêm com estojo MagSafe."),
    (E, "Boa notícia! O ThinkPad X1 Carbon Gen 11 está saindo por $1,899.00."),
    (E, "O PS5 Slim custa $449.99 e a RTX 4070 $599."),
    (E, "Recomendo o iPhone 15 Pro por $999. ✨"),
    (E, "O preço dos Sony WH-1000XM5 é $399.99."),
    (E, "A Crystal UHD TV de 55 polegadas está por $499."),
    (E, "Sim, temos o Galaxy S24 Ultra de 256 GB por $1,299.99."),
    (E, "O iPhone 15 Pro Max custa $1,199 e o iPhone 15 Pro $999."),
    (E, "Por apenas $249 você leva os AirPods Pro 2."),
    (E, "O Galaxy S24 custa $799.99, enquanto o S24 Ultra custa $1,299.99."),
    (S, "Oi, Maria! O City Flex sai por R$ 99,90."),
    (S, "O Aero Runner custa R$ 129,99 e o City Flex R$ 99,90."),
    (S, "**Aero Runner** \u2013 R$ 129,99\n**City Flex** \u2013 R$ 99,90"),
    (S, "Restam só 3 unidades do City Flex! 🏃"),
    (S, "O preço do City Flex é R$ 99,90."),
    (S, "Por R$ 129,99 você leva o Aero Runner, nosso Mais Vendido."),
    (S, "Não temos o Zephyr Trail, mas o City Flex sai por R$ 99,90."),
    (S, "O Aero Runner na cor Preto sai por R$ 129,99."),
    (S, "Oferta de Black Friday: o City Flex por apenas R$ 99,90!"),
    (S, "Entre o Aero Runner (R$ 129,99) e o City Flex (R$ 99,90), o City Flex é mais leve."),
    (S, "o city flex sai por R$ 99,90."),
    (S, "| Tênis | Preço |\n|---|---|\n| Aero Runner | R$ 129,99 |\n| City Flex | R$ 99,90 |"),
    (S, "O City Flex sai por R$ 99,90 na nossa loja do Rio de Janeiro."),
    (S, "Ótima escolha, Pedro! O Aero Runner custa R$ 129,99."),
    (S, "O City Flex, o Tênis Mais Confortável da Loja, sai por R$ 99,90."),
]

CORPUS: list[tuple[str, Entry]] = (
    [("en", e) for e in EN] + [("es", e) for e in ES] + [("pt", e) for e in PT]
)


def verdicts(lang: str, store: str, text: str) -> list[str]:
    """Each claim's verdict for ``text`` checked against ``store``'s evidence."""
    contract, evidence = _STORES[store]
    claims = Claims(parse_contract(contract), "sales-assistant")
    records = claims.check(text, context="chat", evidence=evidence, language=lang, now=NOW)
    return [r.verdict for r in records]


def _params() -> list[Any]:
    return [
        pytest.param(lang, store, text, marks=pytest.mark.xfail(strict=True, reason=left[0]))
        if left
        else pytest.param(lang, store, text)
        for lang, (store, text, *left) in CORPUS
    ]


@pytest.mark.parametrize(("lang", "store", "text"), _params())
def test_a_correct_reply_is_approved(lang: str, store: str, text: str) -> None:
    found = verdicts(lang, store, text)
    assert found and set(found) == {"matched"}, found


@pytest.mark.parametrize(
    ("lang", "text", "verdict"),
    [
        # A role term before a measure is the measure's: the price after it is compared.
        ("es", "La Crystal UHD TV de 55 pulgadas cuesta $699.", "matched mismatch"),
        ("pt", "A Crystal UHD TV de 55 polegadas custa $699.", "matched mismatch"),
        # A name's last digit before a dash and a price: the price alone, compared.
        ("en", "AirPods Pro 2 — $299.", "mismatch"),
        # A price as a noun before a condition: the bound is said of the name.
        ("es", "El iPhone 15 tiene un precio a partir de $899.", "mismatch"),
    ],
)
def test_the_same_shapes_with_a_wrong_price_are_refused(lang: str, text: str, verdict: str) -> None:
    assert verdicts(lang, "electronics", text) == verdict.split()


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        # A name's own tail is written in the name: it names that object.
        ("The S24 Ultra is $1,299.99.", "matched"),
        ("The Pro Max is $1,199.", "matched"),
        ("The XM5 are $399.99.", "matched"),
        ("The X1 Carbon is $1,899.", "matched"),
        # An abbreviation no name holds names a model the evidence does not hold.
        ("The S24U is $1,299.99.", "no_evidence"),
    ],
)
def test_an_abbreviated_name(text: str, verdict: str) -> None:
    assert verdicts("en", "electronics", text) == [verdict]
