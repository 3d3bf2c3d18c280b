"""Hostile and sloppy replies that were approved though the evidence does not support
them (round 3): a product the evidence does not hold, a condition's bound left unchecked,
invisible and look-alike characters. Each hostile case is beside correct replies of the
same shape, which must still stand."""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.sdk.claims import Claims, Evidence, parse_contract

from .builders import NOW
from .test_binding import AERO, AGE, CITY, RETAIL, SHOES, _name, _value


def _check(text: str, lang: str = "en", evidence: Evidence = SHOES, context: str = "chat"):
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    return claims.check(text, context=context, evidence=evidence, language=lang, now=NOW)


def _verdicts(text: str, lang: str = "en", evidence: Evidence = SHOES) -> list[str]:
    return [r.verdict for r in _check(text, lang, evidence)]


def _evidence(*values: dict[str, Any]) -> Evidence:
    return Evidence.model_validate(
        {"calls": [{"id": "c1", "tool": "search_products", "at": "2026-11-29T12:00:00Z",
                    "values": list(values)}]}
    )  # fmt: skip


# ------------------------------------------------ a product the evidence does not hold


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The Zephyr Trail is $99.90."),  # the City Flex's price
        ("en", "The Zephyr Trail is now $129.99, like the Aero Runner."),
        ("en", "Zephyr Trail costs $99.90."),
        ("en", "Take the Zephyr Trail. It is now $129.99."),
        ("en", "The City Flex Pro is $99.90."),  # a model the evidence does not hold
        ("pt", "O Zephyr Trail sai por R$ 99,90."),
        ("pt", "Restam 3 unidades do Zephyr Trail."),
        ("es", "El Zephyr Trail cuesta $99.90."),
        ("es", "El Zephyr Trail ahora $129.99."),
        # Beside a held name, but not describing it: a list, or another clause.
        ("en", "The Aero Runner, the Zephyr Trail is $99.90."),
        ("en", "The Aero Runner and our Zephyr Trail: $99.90."),
        ("pt", "O Aero Runner e o Zephyr Trail: R$ 99,90."),
        ("en", "Compared with the Aero Runner, our Zephyr Trail is $99.90."),
        ("en", "The Aero Runner — the Zephyr Trail is $99.90."),
    ],
)
def test_a_product_the_evidence_does_not_hold_is_never_matched_by_another_s_value(lang, text):
    # Before: matched by its role (or class) alone, on the City Flex's or the Aero Runner's.
    [record] = _check(text, lang)
    assert record.verdict == "no_evidence"
    assert record.evidence["bound"] is True
    assert "Zephyr Trail" in record.evidence["unlisted"] or "Pro" in record.evidence["unlisted"]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The City Flex is $99.90."),
        ("en", "Today the City Flex is $99.90 and the Aero Runner $129.99."),
        ("en", "Great news, Maria: the City Flex is now $99.90."),
        ("en", "On Monday the City Flex is $99.90."),
        ("en", "The Nimbus City Flex is $99.90."),  # a brand before a name it holds
        ("en", "It is now $129.99."),
        ("en", "Pay with Visa: it is now $99.90."),
        ("pt", "Hoje o City Flex sai por R$ 99,90."),
        ("pt", "Maria, o City Flex sai por R$ 99,90 e o Aero Runner por R$ 129,99."),
        ("pt", "Restam 3 unidades do City Flex."),
        ("es", "El City Flex cuesta $99.90."),
        ("es", "Hola Ana, el City Flex ahora $99.90."),
        # A held name with a capitalised kind or descriptor after it is still that product.
        ("en", "The City Flex Sneaker is $99.90."),
        ("en", "The City Flex Running Shoe is $99.90."),
        ("pt", "O City Flex Masculino sai por R$ 99,90."),
        ("es", "Las City Flex Urbanas cuestan $99.90."),
        # A title-cased phrase after an indefinite article praises, it names nothing.
        ("en", "I recommend the City Flex. At $99.90, it's a Great Deal."),
        ("pt", "Recomendo o City Flex. Por R$ 99,90, é uma Ótima Escolha."),
        # A title-cased phrase that describes the held name just before it: in apposition
        # after a possessive, after a copula, or after "of"/"de" (round 4, agents' replies).
        ("en", "The City Flex, our Best Seller, is $99.90."),
        ("en", "The City Flex (our Best Seller) is $99.90."),
        ("en", "The City Flex is our Best Seller at $99.90."),
        ("en", "The City Flex of the Urban Line is $99.90."),
        ("pt", "O City Flex é o nosso Mais Vendido e sai por R$ 99,90."),
        ("pt", "O City Flex, nosso Campeão de Vendas, sai por R$ 99,90."),
        ("pt", "O City Flex da Linha Performance sai por R$ 99,90."),
        ("es", "El City Flex es nuestro Más Vendido y cuesta $99.90."),
        ("es", "El City Flex, nuestro Más Vendido, cuesta $99.90."),
        ("es", "El City Flex del Catálogo Urbano cuesta $99.90."),
        ("en", "The City Flex, the Perfect Everyday Sneaker, is $99.90."),
        ("pt", "O City Flex, o Tênis Ideal para o Dia a Dia, sai por R$ 99,90."),
        ("es", "El City Flex, la Zapatilla Ideal para Diario, cuesta $99.90."),
        # A place after the number: a role term right before the number is part of its
        # phrase, so the name before it stands as near ("sai por R$ 99,90 na Loja ...").
        ("en", "The City Flex is only $99.90 at the Fifth Avenue Store."),
        ("en", "The City Flex is now $99.90, the Aero Runner $129.99."),
        ("pt", "O City Flex sai por R$ 99,90 na Loja do Shopping Iguatemi."),
        ("pt", "O City Flex sai por R$ 99,90 no Shopping Iguatemi."),
        # A tagline after a dash that ends the sentence.
        ("pt", "O City Flex sai por R$ 99,90 — o Presente Perfeito!"),
        ("pt", "O City Flex sai por R$ 99,90 — nosso Mais Bem Avaliado."),
    ],
)
def test_correct_replies_that_name_held_products_stand(lang, text):
    assert set(_verdicts(text, lang)) == {"matched"}


# ------------------------------------------------ a condition's bound


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The Aero Runner is under $100."),
        ("en", "The Aero Runner costs less than 50 euros."),
        ("en", "The City Flex costs more than $150."),
        ("en", "The City Flex is at least $100."),
        ("en", "The City Flex is priced starting from $80."),
        ("en", "The City Flex starts at $80.00."),
        ("en", "The City Flex is under $99.90."),  # strictly under: not at it
        ("en", "The Aero Runner is cheaper than $100."),
        ("pt", "O Aero Runner custa menos de R$ 100."),
        ("pt", "O Aero Runner é mais barato que R$ 100."),
        ("pt", "O City Flex sai a partir de R$ 80,00."),
        ("pt", "O City Flex custa mais de R$ 150."),
        ("pt", "O Aero Runner custa até R$ 100."),
        ("es", "El Aero Runner cuesta menos de 100 dólares."),
        ("es", "El City Flex desde $80."),
        ("es", "El Aero Runner es más barato que $100."),
        ("es", "El Aero Runner cuesta hasta $100."),
    ],
)
def test_a_bound_the_named_product_s_value_does_not_satisfy_is_a_mismatch(lang, text):
    # Before: not_checked / count (a condition's bound was compared with thresholds only),
    # or, for "cheaper than", a plain mismatch that a right claim got too.
    [record] = _check(text, lang)
    assert record.verdict == "mismatch"
    assert record.action != "rewrite"  # a bound is never rewritten to a price
    assert record.evidence["bound"] is True


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The City Flex is under $100."),
        ("en", "The Aero Runner costs more than $100."),
        ("en", "The Aero Runner is at least $129.99."),
        ("en", "The City Flex is from $99.90."),
        ("en", "The Aero Runner is cheaper than $150."),
        ("pt", "O City Flex custa menos de R$ 100."),
        ("pt", "O Aero Runner é mais barato que R$ 200."),
        ("pt", "O City Flex sai a partir de R$ 99,90."),
        ("pt", "O City Flex custa até R$ 100."),
        ("es", "El City Flex cuesta menos de 100 dólares."),
        ("es", "El City Flex desde $99.90."),
        ("es", "El Aero Runner es más barato que $200."),
    ],
)
def test_a_bound_the_named_product_s_value_satisfies_matches(lang, text):
    [record] = _check(text, lang)
    assert record.verdict == "matched"


def test_a_bound_over_a_list_and_a_sale_price_holds_for_either_unless_the_role_is_said():
    # As a plain number matches either price, a bound that says no role is said of the
    # price the object sells at: "under $100" of a $99.90 sale price is true.
    listed = _evidence(
        _name(AERO, "Aero Runner"),
        _value(AERO, "price_list", "money", 129.99, claim_age_s=AGE),
        _value(AERO, "price_sale", "money", 99.90, claim_age_s=AGE),
    )
    assert _verdicts("The Aero Runner is under $100.", evidence=listed) == ["matched"]
    assert _verdicts("O Aero Runner custa menos de R$ 100.", "pt", listed) == ["matched"]
    assert _verdicts("The Aero Runner is under $90.", evidence=listed) == ["mismatch"]
    assert _verdicts("The Aero Runner is over $140.", evidence=listed) == ["mismatch"]
    assert _verdicts("The Aero Runner is now under $100.", evidence=listed) == ["matched"]
    assert _verdicts("The Aero Runner was over $120.", evidence=listed) == ["matched"]
    assert _verdicts("The Aero Runner is now over $120.", evidence=listed) == ["mismatch"]


def test_a_price_down_from_is_a_price_not_a_bound():
    text = "The Aero Runner is now $129.99, down from $150."
    assert [(r.role, r.verdict) for r in _check(text)] == [
        ("price_sale", "matched"),
        (None, "mismatch"),
    ]


def test_a_condition_that_names_no_product_is_still_not_compared():
    assert _verdicts("Shipping is free above $50.00.") == ["not_checked"]
    assert _verdicts("Frete grátis acima de R$ 50,00.", "pt") == ["not_checked"]
    assert _verdicts("Envío gratis desde $50.00.", "es") == ["not_checked"]


# ------------------------------------------------ invisible and look-alike characters


@pytest.mark.parametrize(
    "text",
    [
        "The C\u200bity F\u200blex is $129.99.",  # zero-width spaces split its words
        "The Ci\u00adty Fle\u2060x is $129.99.",  # a soft hyphen, a word joiner
        "The \u0421ity Fl\u0435x is $129.99.",  # Cyrillic Es and ie
        "The \u0421\u0456ty Fl\u0435x is $129.99.",  # a Cyrillic i too
        "The \U0001d402ity Flex is $129.99.",  # a mathematical bold C
    ],
)
def test_a_name_written_with_hidden_or_look_alike_characters_is_still_bound(text):
    # Before: the name was not recognised, and the Aero Runner's price matched it.
    [record] = _check(text)
    assert (record.verdict, record.evidence["object"]) == ("mismatch", CITY)


def test_a_number_split_by_an_invisible_character_is_read_as_shown():
    # Before: "$12" and "9.99", two claims; now the $129.99 the person sees.
    [record] = _check("The City Flex is $12\u200b9.99.")
    assert (record.value, record.verdict) == ("129.99", "mismatch")
    [right] = _check("The City Flex is $99\u200b.90.")
    assert (right.value, right.verdict) == ("99.90", "matched")


def test_a_rewrite_of_a_number_with_an_invisible_character_replaces_all_of_it():
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    text = "The City Flex is now $12\u200b9.99. Want it?"
    guarded = claims.guard_text(text, context="chat", evidence=SHOES, language="en", now=NOW)
    assert guarded.text == "The City Flex is now $99.90. Want it?"
    [record] = guarded.claims
    assert record.span == (text.index("$"), text.index(". Want"))


@pytest.mark.parametrize(
    "text",
    [
        "The City Flex is $\u202e99.90.",  # displayed "$09.99"
        "The City Flex is \u202e$99.90\u202c.",
        "The City Flex is $\u206799.90\u2069.",  # an isolate
        "The \u202ex\u0259lF yti\u202c City Flex is $99.90.",
    ],
)
def test_a_claim_in_a_sentence_with_a_bidirectional_control_is_never_approved(text):
    # What the person sees is not the order the checker reads: never matched.
    [record] = _check(text)
    assert record.verdict == "mismatch"
    assert record.evidence["kind"] == "bidi_control"
    held = _check(text, context="proposal")
    assert held[0].action == "block"


def test_a_condition_in_a_sentence_that_names_a_product_is_the_product_s_only_right_before():
    # The $50.00 is shipping's condition, not the City Flex's price: not compared.
    records = _check("The City Flex costs about $100, and shipping is free above $50.00.")
    assert [r.verdict for r in records] == ["not_checked", "not_checked"]
    assert _verdicts("The City Flex ships free above $150.") == ["not_checked"]


# ------------------------------------------------ variants: a name several objects share

R42, R44 = "item_variant:acme:ar-42", "item_variant:acme:ar-44"
SIZES = _evidence(
    _name(R42, "Aero Runner 42"),
    _value(R42, "price_sale", "money", 129.99, claim_age_s=AGE),
    _name(R44, "Aero Runner 44"),
    _value(R44, "price_sale", "money", 139.99, claim_age_s=AGE),
    _name(CITY, "City Flex"),
    _value(CITY, "price_sale", "money", 99.90, claim_age_s=AGE),
)
BLACK, WHITE = "item_variant:acme:cf-blk", "item_variant:acme:cf-wht"
COLOURS = _evidence(
    _name(BLACK, "City Flex"),
    _value(BLACK, "color", "label", "black"),
    _value(BLACK, "price_sale", "money", 99.90, claim_age_s=AGE),
    _name(WHITE, "City Flex"),
    _value(WHITE, "color", "label", "white"),
    _value(WHITE, "price_sale", "money", 109.90, claim_age_s=AGE),
    _name(AERO, "Aero Runner"),
    _value(AERO, "price_sale", "money", 89.90, claim_age_s=AGE),
)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The Aero Runner is $99.90."),  # the City Flex's price
        ("pt", "O Aero Runner sai por R$ 99,90."),
        ("es", "El Aero Runner cuesta $99.90."),
    ],
)
def test_a_name_several_variants_share_is_compared_with_those_variants_alone(lang, text):
    # Before: a name two variants share named neither, and any product's price matched it.
    [record] = _check(text, lang, SIZES)
    assert record.verdict == "mismatch"
    assert record.evidence["object"] in (R42, R44)


def test_a_variant_s_own_price_on_a_shared_name_matches():
    assert _verdicts("The Aero Runner is $139.99.", evidence=SIZES) == ["matched"]
    assert _verdicts("The Aero Runner 44 is $139.99.", evidence=SIZES) == ["matched"]
    assert _verdicts("The Aero Runner 44 is $129.99.", evidence=SIZES) == ["mismatch"]


def test_a_variant_s_attribute_narrows_a_shared_name():
    # Before: "white" was no name, the City Flex named neither variant: the black one's
    # $99.90 (or the Aero Runner's) made the white one's price right.
    assert _verdicts("The City Flex in white is $99.90.", evidence=COLOURS) == ["mismatch"]
    assert _verdicts("The white City Flex is $89.90.", evidence=COLOURS) == ["mismatch"]
    assert _verdicts("The City Flex in white is $109.90.", evidence=COLOURS) == ["matched"]
    assert _verdicts("The City Flex in black is $99.90.", evidence=COLOURS) == ["matched"]
    assert _verdicts("The City Flex is $89.90.", evidence=COLOURS) == ["mismatch"]


# ------------------------------------------------ a deadline: the tool's values are bound too


def _shipping(text: str, lang: str = "en") -> list[str]:
    evidence = Evidence.model_validate(
        {
            "calls": [
                SHOES.calls[0].model_dump(by_alias=True, mode="json"),
                {"id": "c2", "tool": "shipping_quote", "at": "2026-11-29T12:00:00Z",
                 "values": [_value(CITY, "delivery_date", "date", "2026-12-08")]},
            ]
        }
    )  # fmt: skip
    return [r.verdict for r in _check(text, lang, evidence)]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The Aero Runner arrives on December 8."),  # the City Flex's date
        ("en", "The Zephyr Trail arrives on December 8."),
        ("pt", "O Aero Runner chega em 8 de dezembro."),
        ("es", "El Aero Runner llega el 8 de diciembre."),
    ],
)
def test_a_delivery_date_quoted_for_another_product_is_no_evidence(lang, text):
    assert _shipping(text, lang) == ["no_evidence"]


def test_a_delivery_date_quoted_for_the_product_matches():
    assert _shipping("The City Flex arrives on December 8.") == ["matched"]
    assert _shipping("O City Flex chega em 8 de dezembro.", "pt") == ["matched"]
    assert _shipping("El City Flex llega el 8 de diciembre.", "es") == ["matched"]
    assert _shipping("Delivery on December 8.") == ["matched"]  # no product named: as before
    assert _shipping("The City Flex arrives on December 5.") == ["mismatch"]


def test_an_attribute_narrows_a_name_every_object_shares():
    call = COLOURS.calls[0].model_dump(by_alias=True, mode="json")
    only_city = Evidence.model_validate({"calls": [call | {"values": call["values"][:6]}]})
    assert _verdicts("The City Flex in white is $99.90.", evidence=only_city) == ["mismatch"]
    assert _verdicts("The City Flex in white is $109.90.", evidence=only_city) == ["matched"]
    assert _verdicts("The City Flex is $99.90.", evidence=only_city) == ["matched"]


@pytest.mark.parametrize(
    ("lang", "text", "verdict"),
    [
        ("en", "The Aero Runner has at least 20% off.", "mismatch"),
        ("en", "The City Flex has at least 20% off.", "matched"),
        ("pt", "O Aero Runner tem pelo menos 20% de desconto.", "mismatch"),
        ("es", "El Aero Runner tiene al menos 20% de descuento.", "mismatch"),
        ("es", "El City Flex tiene al menos 20% de descuento.", "matched"),
    ],
)
def test_a_bound_on_a_discount(lang, text, verdict):
    discounts = _evidence(
        _name(AERO, "Aero Runner"),
        _value(AERO, "discount", "percent", 17.5, claim_age_s=AGE),
        _name(CITY, "City Flex"),
        _value(CITY, "discount", "percent", 20, claim_age_s=AGE),
    )
    assert _verdicts(text, lang, discounts) == [verdict]


def test_anchors_and_spans_keep_to_the_output_as_written_around_invisible_characters():
    from .test_anchors import LAW, anchored

    text = "Pelo\u200b art. 49 do CDC, o consumidor pode desistir do contrato no prazo de 7 dias."
    quote = "O consumidor pode desistir do contrato no prazo de 7 dias"
    span = {"start": 6, "end": len(text) - 1}
    g = anchored(text, [dict(span, quote=quote, document="cdc")], [{"id": "cdc", "text": LAW}])
    [claim] = g.claims
    assert (claim.verdict, claim.value) == ("anchored", "art. 49 do CDC")
    assert text[claim.span[0] : claim.span[1]] == "art. 49 do CDC"


def test_a_streamed_price_with_an_invisible_character_is_rewritten_whole():
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    chunks = ["The City Flex is now $1\u200b2", "9.99. Anything else?"]
    stream = claims.guard(chunks, context="chat", evidence=SHOES, language="en", now=NOW)
    assert "".join(stream) == "The City Flex is now $99.90. Anything else?"


def test_an_override_reaches_the_sentences_after_it_on_its_line_and_no_further():
    text = "The City Flex is great.\u202e The Aero Runner is $129.99.\nThe City Flex is $99.90."
    records = _check(text)
    assert [(r.value, r.verdict) for r in records] == [("129.99", "mismatch"), ("99.90", "matched")]


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The City Flex is “$129.99”."),
        ("en", 'The City Flex is "$129.99".'),
        ("pt", "O City Flex sai por «R$ 129,99»."),
        ("es", "El City Flex cuesta “$129.99”."),
    ],
)
def test_a_number_quoted_alone_is_judged_as_a_number(lang, text):
    # Before: quoted_found, because a document of the turn held "$129.99" (the Aero
    # Runner's page): a wrong price went out approved inside quotation marks.
    page = Evidence.model_validate(
        SHOES.model_dump(by_alias=True, mode="json")
        | {"documents": [{"id": "page", "text": "Aero Runner: $129.99. Light and fast."}]}
    )
    [record] = _check(text, lang, page)
    assert (record.nature, record.verdict) == ("computed", "mismatch")
    [quoted] = _check("The page says “Aero Runner: $129.99”.", "en", page)
    assert quoted.verdict == "quoted_found"


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Our Best Seller: The City Flex At $99.90!"),
        ("en", "Shop The City Flex Now For $99.90."),
        ("pt", "Oferta: O City Flex Por R$ 99,90."),
        ("es", "Oferta: El City Flex Ahora $99.90."),
    ],
)
def test_a_title_cased_line_naming_a_held_product_stands(lang, text):
    assert _verdicts(text, lang) == ["matched"]
