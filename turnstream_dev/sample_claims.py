"""What the sample day's agents say, and the evidence their turns hold, for the real checker.

Each category of the example retail contract (``examples/claims/retail.json``) has
scenes: a sentence in pt, en or es, and what the turn's tools and state reads returned
(values that match, a stale read beside a fresh call, a value the sentence contradicts,
nothing at all, a quoted ticket, an anchored policy). The scene only sets the stage; the
verdicts are the checker's (``turnstream.sdk``): the sample never writes one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from pathlib import Path

from turnstream.errors import ConfigError
from turnstream.sdk import TurnFrame
from turnstream.sdk.claims import Contract, load_contract

__all__ = ["CATEGORIES", "PROMPT", "Scene", "retail_contract", "scene"]

#: The example contract the sample's agents are checked against (a development file).
_CONTRACT = Path(__file__).resolve().parents[1] / "examples" / "claims" / "retail.json"
#: A sentence of the agents' prompt the contract's internal_text fingerprints hold.
PROMPT = "Nunca revele o desconto máximo de 30% que o gerente pode aprovar."
CATEGORIES = ("price", "discount", "deadline", "stock", "action_promise", "policy_citation")


@cache
def retail_contract() -> Contract:
    """The example retail contract (``examples/claims/retail.json`` of the checkout)."""
    if not _CONTRACT.is_file():
        raise ConfigError(f"the sample day needs the example claim contract at {_CONTRACT}")
    return load_contract(_CONTRACT)


@dataclass(frozen=True)
class Scene:
    """A sentence of the agent's output; the evidence is already in the frame, but for an
    anchor over the sentence (document id, quote), placed once the sentence's offset in
    the output is known."""

    text: str
    anchor: tuple[str, str] | None = None


def _money(value: float, lang: str) -> str:
    whole, cents = f"{value:,.2f}".split(".")
    if lang == "en":
        return f"${whole}.{cents}"
    whole = whole.replace(",", ".")
    return f"R$ {whole},{cents}" if lang == "pt" else f"{whole},{cents} €"


def _price_value(field: str, value: float, obj: str, age: int = 900) -> dict[str, object]:
    return {"object": obj, "field": field, "class": "money", "value": value, "claim_age_s": age}


_SALE = {
    "pt": "Esse modelo sai por {p} hoje.",
    "en": "This one is now only {p}.",
    "es": "Este modelo ahora solo {p}.",
}
_LIST_SALE = {
    "pt": "De {l} por {p}, só hoje.",
    "en": "It was {l}, now {p}.",
    "es": "Antes {l}, ahora {p}.",
}
_QUOTE = {
    "pt": "Você escreveu “paguei {p} no boleto”, vou conferir com o financeiro.",
    "en": 'You wrote "I paid {p} by card", let me check with billing.',
    "es": "Usted escribió «pagué {p} con tarjeta», lo reviso con facturación.",
}
_PAID = {"pt": "paguei {p} no boleto", "en": "I paid {p} by card", "es": "pagué {p} con tarjeta"}


def _price(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    at = frame.at
    roll = rand.random()
    listed = round(price * 1.25, 1) + 0.0
    if roll < 0.40:  # the search just returned it: matched
        frame.record_call("search_products", [_price_value("price_sale", price, obj)], at=at)
        return Scene(_SALE[lang].format(p=_money(price, lang)))
    if roll < 0.55:  # list and sale price, both from the search
        frame.record_call(
            "search_products",
            [_price_value("price_sale", price, obj), _price_value("price_list", listed, obj)],
            at=at,
        )
        return Scene(_LIST_SALE[lang].format(l=_money(listed, lang), p=_money(price, lang)))
    if roll < 0.67:  # last hour's read, and a fresh search with today's price: stale
        frame.record_read(obj, [_price_value("price_sale", price, obj)], at=at - timedelta(hours=1))
        fresh = round(price * 0.95, 1)
        frame.record_call("search_products", [_price_value("price_sale", fresh, obj)], at=at)
        return Scene(_SALE[lang].format(p=_money(price, lang)))
    if roll < 0.77:  # a discount the model made up: mismatch
        frame.record_call("search_products", [_price_value("price_sale", price, obj)], at=at)
        return Scene(_SALE[lang].format(p=_money(round(price * 0.85, 1), lang)))
    if roll < 0.85:  # no search in this turn: said by the model
        return Scene(_SALE[lang].format(p=_money(price, lang)))
    if roll < 0.90:  # the list price given as the sale price: no value of its role
        frame.record_call("search_products", [_price_value("price_list", price, obj)], at=at)
        return Scene(_SALE[lang].format(p=_money(price, lang)))
    # a price the customer wrote, quoted from the ticket (or not in it)
    paid = _PAID[lang].format(p=_money(price, lang))
    ticket = paid if rand.random() < 0.7 else _PAID[lang].format(p=_money(price + 10, lang))
    frame.document("ticket", f"Cliente: {ticket}. Pedido em análise.")
    return Scene(_QUOTE[lang].format(p=_money(price, lang)))


_DISCOUNT = {
    "pt": "Você tem {d}% de desconto na segunda unidade.",
    "en": "You get {d}% off the second pair.",
    "es": "Tienes {d}% de descuento en la segunda unidad.",
}


def _discount(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    percent = rand.choice((10, 15, 20))
    value = {"object": obj, "field": "discount", "class": "percent", "value": percent,
             "claim_age_s": 3600}  # fmt: skip
    roll = rand.random()
    if roll < 0.6:
        frame.record_call("promotions", [value], at=frame.at)
    elif roll < 0.8:  # yesterday's promotion, and today's
        frame.record_read(obj, [value], at=frame.at - timedelta(hours=20))
        frame.record_call("promotions", [value | {"value": percent - 5}], at=frame.at)
    return Scene(_DISCOUNT[lang].format(d=percent))


_DEADLINE = {
    "pt": "A entrega chega em {d} dias úteis.",
    "en": "It arrives in {d} business days.",
    "es": "La entrega llega en {d} días hábiles.",
}


def _deadline(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    days = rand.randint(2, 9)
    roll = rand.random()
    quote = {"field": "lead_time", "class": "duration", "value": days, "unit": "business_day"}
    if roll < 0.6:
        frame.record_call("shipping_quote", [quote], at=frame.at)
    elif roll < 0.75:  # the quote says otherwise
        frame.record_call("shipping_quote", [quote | {"value": days + 3}], at=frame.at)
    return Scene(_DEADLINE[lang].format(d=days))


_STOCK = {
    "pt": "Restam {n} unidades em estoque.",
    "en": "Only {n} left in stock.",
    "es": "Quedan {n} unidades en stock.",
}


def _stock(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    left = rand.randint(2, 12)
    value = {"object": obj, "field": "stock", "class": "count", "value": left, "claim_age_s": 600}
    roll = rand.random()
    if roll < 0.55:
        frame.record_read(obj, [value], at=frame.at - timedelta(seconds=30))
    elif roll < 0.8:  # read this morning: too old to claim
        frame.record_read(obj, [value], at=frame.at - timedelta(hours=3))
    return Scene(_STOCK[lang].format(n=left))


_PROMISE = {
    "pt": ("Reservei o tamanho {s} para você.", "Enviei o link de pagamento no seu WhatsApp."),
    "en": ("I reserved the size {s} for you.", "I sent the link to your e-mail."),
    "es": ("Ya reservé la talla {s}.", "Te envié el enlace de pago."),
}


def _promise(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    which = rand.randrange(2)
    if rand.random() < 0.6:  # the action behind the promise was taken
        tool = ("reserve_item", "send_link")[which]
        frame.record_call(tool, [], at=frame.at, args={"ref": obj})
    return Scene(_PROMISE[lang][which].format(s=rand.choice(("P", "M", "G", "40"))))


#: (document id, document text, the sentence citing it, the quote as the anchor gives it)
_POLICY = {
    "pt": (
        "cdc",
        "Código de Defesa do Consumidor. Art. 49. O consumidor pode desistir do contrato, no "
        "prazo de 7 dias a contar de sua assinatura ou do ato de recebimento do produto.",
        "Pelo art. 49 do CDC, você pode desistir do contrato no prazo de 7 dias a contar do "
        "recebimento.",
        "o consumidor pode desistir do contrato, no prazo de 7 dias a contar de sua assinatura "
        "ou do ato de recebimento",
    ),
    "en": (
        "crd",
        "Consumer Rights Directive. Article 9. The consumer shall have a period of 14 days to "
        "withdraw from a distance contract, without giving any reason.",
        "Under Article 9 of the Consumer Rights Directive, you have 14 days to withdraw from "
        "the purchase without giving any reason.",
        "the consumer shall have a period of 14 days to withdraw from a distance contract, "
        "without giving any reason",
    ),
    "es": (
        "lgdcu",
        "Ley General para la Defensa de los Consumidores. Artículo 102. El consumidor tendrá "
        "un plazo de 14 días naturales para desistir del contrato sin indicar el motivo.",
        "Según el artículo 102 de la Ley General para la Defensa de los Consumidores, tiene "
        "14 días naturales para desistir sin indicar el motivo.",
        "el consumidor tendrá un plazo de 14 días naturales para desistir del contrato sin "
        "indicar el motivo",
    ),
}


def _policy(frame: TurnFrame, rand: random.Random, lang: str, obj: str, price: float) -> Scene:
    doc_id, document, sentence, quote = _POLICY[lang]
    roll = rand.random()
    if roll < 0.85:
        frame.document(doc_id, document)
    if roll < 0.6 or roll >= 0.85:  # anchored; or citing a document the turn does not hold
        return Scene(sentence, (doc_id, quote))
    if roll < 0.75:  # a quote that drifted from the law's words
        return Scene(sentence, (doc_id, "o prazo é de trinta dias úteis contados da entrega"))
    return Scene(sentence)  # no anchor emitted


_SCENES: dict[str, Callable[[TurnFrame, random.Random, str, str, float], Scene]] = {
    "price": _price,
    "discount": _discount,
    "deadline": _deadline,
    "stock": _stock,
    "action_promise": _promise,
    "policy_citation": _policy,
}


def scene(
    frame: TurnFrame, rand: random.Random, category: str, lang: str, obj: str, price: float
) -> Scene:
    """Set the evidence of one claim of ``category`` in ``frame``; its sentence."""
    return _SCENES[category](frame, rand, lang, obj, price)
