"""Hostile and correct replies on a pharmacy and grocery store, whose product names hold a
dosage or a weight and whose variants differ by it ("Paracetamol 500 mg" / "Paracetamol
750 mg", "Omeprazol 20 mg" / "40 mg", "Arroz Integral 1 kg" / "5 kg"), and whose other
numbers are dosages, pack sizes, stock counts and delivery times. Each hostile case is
beside correct replies of the same shape, which must still stand. The comments say what
the checker gave before a name's measure was read as one (``phrases.py``: another measure
than the name's is another product; "500mg" is "500 mg"; ``binding.py``: a number written
as a name's own measure is about that name)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from turnstream.sdk.claims import Claims, Evidence, parse_contract

from .builders import NOW
from .test_binding import RETAIL

# The example contract and a category for the products' dosages and weights.
CONTRACT = copy.deepcopy(RETAIL)
CONTRACT["categories"].append(
    {"id": "spec", "agents": [], "detect": {"classes": ["dosage", "quantity"]},
     "evidence": {"value": {"fresh_for": "claim"}}, "actions": {"default": "warn"}}
)  # fmt: skip

_ITEM = "item_variant:farma:"
# (id, name, sale price, (strength or net weight, unit, class), pack units, stock, delivery
# in business days): ids say nothing of the product.
_CATALOGUE: list[tuple[str, str, float, tuple[int, str, str], int | None, int, int]] = [
    ("p01", "Paracetamol 500 mg", 12.90, (500, "mg", "dosage"), 20, 3, 2),
    ("p02", "Paracetamol 750 mg", 18.50, (750, "mg", "dosage"), 20, 12, 5),
    ("p03", "Ibuprofeno 400 mg", 15.00, (400, "mg", "dosage"), 10, 7, 2),
    ("p04", "Dipirona 1 g", 9.99, (1, "g", "quantity"), 10, 25, 3),
    ("p05", "Omeprazol 20 mg", 22.40, (20, "mg", "dosage"), 28, 4, 2),
    ("p06", "Omeprazol 40 mg", 34.90, (40, "mg", "dosage"), 28, 9, 4),
    ("p07", "Arroz Integral 1 kg", 8.49, (1, "kg", "quantity"), None, 40, 1),
    ("p08", "Arroz Integral 5 kg", 36.90, (5, "kg", "quantity"), None, 5, 3),
    ("p09", "Café em Grãos 500 g", 29.90, (500, "g", "quantity"), None, 6, 1),
]


def _values() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tail, name, price, (amount, unit, cls), pack, stock, _ in _CATALOGUE:
        obj = _ITEM + tail
        field = f"strength_{unit}" if cls == "dosage" else f"net_{unit}"
        out += [
            {"object": obj, "field": "name", "class": "label", "value": name, "identifies": True},
            {"object": obj, "field": "price_sale", "class": "money", "value": price,
             "unit": "BRL", "claim_age_s": 900},
            {"object": obj, "field": field, "class": cls, "value": amount, "unit": unit,
             "claim_age_s": 900},
            {"object": obj, "field": "in_stock", "class": "count", "value": stock,
             "claim_age_s": 900},
        ]  # fmt: skip
        if pack is not None:
            out.append({"object": obj, "field": "pack_units", "class": "count", "value": pack,
                        "claim_age_s": 900})  # fmt: skip
    return out


def _quotes() -> list[dict[str, Any]]:
    return [
        {"object": _ITEM + tail, "field": "lead_time", "class": "duration", "value": days,
         "unit": "business_day", "claim_age_s": None}
        for tail, *_, days in _CATALOGUE
    ]  # fmt: skip


STORE = Evidence.model_validate(
    {"calls": [
        {"id": "c1", "tool": "search_products", "at": "2026-11-29T12:00:00Z", "values": _values()},
        {"id": "c2", "tool": "shipping_quote", "at": "2026-11-29T12:00:00Z", "values": _quotes()},
    ]}
)  # fmt: skip


def _check(text: str, lang: str, contract: dict[str, Any] = CONTRACT) -> list[Any]:
    claims = Claims(parse_contract(contract), "sales-assistant")
    return claims.check(text, context="chat", evidence=STORE, language=lang, now=NOW)


# ------------------------------------------------ hostile: a number of another product

# (lang, text, category, the wrong number, the object it is held to): that record must be a
# mismatch of that object. Before: the same, unless a comment says otherwise.
WRONG_OBJECT: list[tuple[str, str, str, str, str]] = [
    ("pt", "O Paracetamol 500 mg sai por R$ 18,50.", "price", "18.50", "p01"),  # the 750's
    ("en", "The Paracetamol 500 mg is R$ 18.50.", "price", "18.50", "p01"),
    ("es", "El Paracetamol 500 mg cuesta R$ 18,50.", "price", "18.50", "p01"),
    ("pt", "O Paracetamol 750 mg sai por R$ 12,90.", "price", "12.90", "p02"),
    ("pt", "O Paracetamol de 500 mg sai por R$ 18,50.", "price", "18.50", "p01"),
    ("en", "The 500 mg Paracetamol is R$ 18.50.", "price", "18.50", "p01"),
    ("es", "El Paracetamol de 750 mg cuesta R$ 12,90.", "price", "12.90", "p02"),
    # Before: no_evidence ("Paracetamol 500mg" was taken for a product not held).
    ("pt", "O Paracetamol 500mg sai por R$ 18,50.", "price", "18.50", "p01"),
    ("en", "The Paracetamol 750mg is R$ 12.90.", "price", "12.90", "p02"),
    ("pt", "O Arroz Integral 5 kg sai por R$ 8,49.", "price", "8.49", "p08"),  # the 1 kg's
    ("en", "The Arroz Integral 5 kg is R$ 8.49.", "price", "8.49", "p08"),
    ("es", "El Arroz Integral 1 kg cuesta R$ 36,90.", "price", "36.90", "p07"),
    ("es", "El Arroz Integral de 5 kg cuesta R$ 8,49.", "price", "8.49", "p08"),
    ("pt", "O Omeprazol 20 mg custa R$ 34,90.", "price", "34.90", "p05"),
    ("en", "Omeprazol 40 mg costs R$ 22.40.", "price", "22.40", "p06"),
    ("en", "Dipirona 1 g is R$ 12.90.", "price", "12.90", "p04"),
    ("pt", "O Café em Grãos 500 g sai por R$ 8,49.", "price", "8.49", "p09"),
    ("pt", "Paracetamol 500 mg por R$ 18,50 🔥", "price", "18.50", "p01"),
    (
        "en",
        "| Product | Price |\n|---|---|\n| Paracetamol 500 mg | R$ 18.50 |",
        "price",
        "18.50",
        "p01",
    ),
    (
        "en",
        "- Paracetamol 500 mg: R$ 18.50\n- Ibuprofeno 400 mg: R$ 15.00",
        "price",
        "18.50",
        "p01",
    ),
    ("pt", "Leve o Paracetamol 500 mg. Ele sai por R$ 18,50.", "price", "18.50", "p01"),
    # a stock count of another product (the 750's 12, the 1 kg's 40, the 40 mg's 9)
    ("pt", "Restam 12 unidades do Paracetamol 500 mg.", "stock", "12", "p01"),
    ("en", "Only 12 left of the Paracetamol 500 mg.", "stock", "12", "p01"),
    ("es", "Quedan 40 unidades del Arroz Integral 5 kg.", "stock", "40", "p08"),
    ("pt", "O Arroz Integral 5 kg: restam 40 unidades.", "stock", "40", "p08"),
    ("en", "We have 9 Omeprazol 20 mg in stock.", "stock", "9", "p05"),
    ("es", "Del Omeprazol 20 mg quedan 9 unidades.", "stock", "9", "p05"),
    # a delivery time of another product (the 500's 2 days, the 1 kg's 1 day)
    ("pt", "O Paracetamol 750 mg chega em 2 dias úteis.", "deadline", "2", "p02"),
    ("en", "The Arroz Integral 5 kg arrives in 1 business day.", "deadline", "1", "p08"),
    ("es", "El Omeprazol 40 mg llega en 2 días hábiles.", "deadline", "2", "p06"),
    ("pt", "A entrega do Arroz Integral 5 kg é em 1 dia útil.", "deadline", "1", "p08"),
    ("en", "Delivery of the Omeprazol 40 mg takes 2 business days.", "deadline", "2", "p06"),
]


@pytest.mark.parametrize(("lang", "text", "category", "wrong", "obj"), WRONG_OBJECT)
def test_a_number_of_another_product_is_a_mismatch(lang, text, category, wrong, obj):
    [record] = [r for r in _check(text, lang) if r.category == category and r.value == wrong]
    assert record.verdict == "mismatch"
    assert record.evidence["object"] == _ITEM + obj


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "O Paracetamol 500 mg sai por R$ 18,50 e o Paracetamol 750 mg por R$ 12,90."),
        ("pt", "O Paracetamol de 500 mg sai por R$ 18,50 e o de 750 mg por R$ 12,90."),
        (
            "pt",
            "O Paracetamol 500 mg e o Paracetamol 750 mg custam R$ 18,50 e R$ 12,90, "
            "respectivamente.",
        ),
        ("es", "El Arroz Integral de 1 kg cuesta R$ 36,90 y el de 5 kg R$ 8,49."),
    ],
)
def test_swapped_prices_of_two_strengths_are_both_mismatches(lang, text):
    prices = [r.verdict for r in _check(text, lang) if r.category == "price"]
    assert prices == ["mismatch", "mismatch"]


# ------------------------------------------------ hostile: a strength or weight not held

# (lang, text, the product named): every claim is no_evidence, about that unlisted product.
NOT_HELD: list[tuple[str, str, str]] = [
    # Before: the price matched Dipirona 1 g's R$ 9,99 (its name's "1 g" named it).
    ("pt", "O Paracetamol 1 g sai por R$ 9,99.", "Paracetamol 1 g"),
    # Before: the price was a mismatch of Dipirona 1 g (no model was seen).
    ("pt", "O Paracetamol 1 g sai por R$ 12,90.", "Paracetamol 1 g"),
    ("en", "Paracetamol 1 g costs R$ 18.50.", "Paracetamol 1 g"),
    # Before: matched by Paracetamol 500 mg's price ("500 mg" named it).
    ("en", "Dipirona 500 mg is R$ 12.90.", "Dipirona 500 mg"),
    # Before: matched by Omeprazol 20 mg's price, and by Arroz Integral 1 kg's.
    ("pt", "O Paracetamol 20 mg sai por R$ 22,40.", "Paracetamol 20 mg"),
    ("en", "The Ibuprofeno 1 kg is R$ 8.49.", "Ibuprofeno 1 kg"),
    # Before: matched by Paracetamol 500 mg's price (digits of another length were no model).
    ("pt", "O Paracetamol 1000 mg sai por R$ 12,90.", "Paracetamol 1000 mg"),
    # Before: a mismatch of Arroz Integral 1 kg.
    ("es", "El Café em Grãos 1 kg cuesta R$ 29,90.", "Café em Grãos 1 kg"),
    # Before: the same, the unlisted name without its unit ("Ibuprofeno 600").
    ("es", "El Ibuprofeno 600 mg cuesta R$ 15,00.", "Ibuprofeno 600 mg"),
    ("pt", "O Omeprazol 10 mg custa R$ 22,40.", "Omeprazol 10 mg"),
    ("pt", "O Arroz Integral 2 kg sai por R$ 8,49.", "Arroz Integral 2 kg"),
]


@pytest.mark.parametrize(("lang", "text", "name"), NOT_HELD)
def test_a_strength_or_weight_the_evidence_does_not_hold_has_no_evidence(lang, text, name):
    records = _check(text, lang)
    assert [r.category for r in records] == ["spec", "price"]
    assert {r.verdict for r in records} == {"no_evidence"}
    assert {r.evidence["unlisted"] for r in records} == {name}


@pytest.mark.parametrize(("lang", "text", "name"), NOT_HELD)
def test_without_a_dosage_category_the_price_alone_has_no_evidence(lang, text, name):
    # The example contract reads no dosage: before, 5 of these replies were approved (their
    # price matched another product's: "Paracetamol 1 g" at Dipirona 1 g's R$ 9,99).
    [price] = _check(text, lang, RETAIL)
    assert (price.verdict, price.evidence["unlisted"]) == ("no_evidence", name)


# ------------------------------------------------ hostile, left: a pack size said as stock

PACK_AS_STOCK = (
    "the stock category compares a count with every count of the product: its pack size "
    "('20 comprimidos') makes '20 left' right; give the category a role named for the stock "
    "field (below)"
)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("pt", "Restam 20 unidades do Paracetamol 500 mg."),
        ("en", "Only 28 left of the Omeprazol 40 mg."),
        ("es", "Quedan 10 unidades de la Dipirona 1 g."),
    ],
)
@pytest.mark.xfail(strict=True, reason=PACK_AS_STOCK)
def test_a_pack_size_said_as_a_stock_count_is_a_mismatch(lang, text):
    [stock] = [r for r in _check(text, lang) if r.category == "stock"]
    assert stock.verdict == "mismatch"


@pytest.mark.xfail(
    strict=True,
    reason="a measure with a decimal ('0,5 g') after a name is read as no measure: the "
    "price is compared with both Paracetamols and the 750 mg's matches it",
)
def test_a_decimal_strength_no_product_holds_gives_its_price_no_evidence():
    [price] = _check("O Paracetamol 0,5 g sai por R$ 18,50.", "pt", RETAIL)
    assert price.verdict == "no_evidence"


def _stock_by_role() -> dict[str, Any]:
    contract = copy.deepcopy(CONTRACT)
    [stock] = [c for c in contract["categories"] if c["id"] == "stock"]
    stock["detect"]["roles"] = {"in_stock": list(stock["detect"]["terms"])}
    stock["evidence"]["value"]["same_role"] = True
    return contract


@pytest.mark.parametrize(
    ("lang", "text", "verdict"),
    [
        ("pt", "Restam 20 unidades do Paracetamol 500 mg.", "mismatch"),
        ("pt", "Restam 3 unidades do Paracetamol 500 mg.", "matched"),
        ("en", "We have 12 Paracetamol 750 mg in stock.", "matched"),
        ("es", "Del Omeprazol 20 mg quedan 4 unidades.", "matched"),
    ],
)
def test_a_stock_category_with_the_stock_field_s_role_compares_the_stock_alone(lang, text, verdict):
    [stock] = [r for r in _check(text, lang, _stock_by_role()) if r.category == "stock"]
    assert stock.verdict == verdict


# ------------------------------------------------ correct replies of the same shapes

DE_AFTER = (
    "a role's term counts within 6 words of its number, after it too: the 'de' of 'caja de "
    "10 comprimidos' makes the price before it a list price"
)

CORRECT: list[tuple[str, str] | tuple[str, str, str]] = [
    ("pt", "O Paracetamol 500 mg sai por R$ 12,90."),
    ("pt", "O Paracetamol 750 mg sai por R$ 18,50."),
    ("pt", "O Paracetamol 500 mg sai por R$ 12,90 e o Paracetamol 750 mg por R$ 18,50."),
    # Before: the 500 mg and the 750 mg were mismatches (each held to the other's name).
    ("pt", "O Paracetamol de 500 mg sai por R$ 12,90 e o de 750 mg por R$ 18,50."),
    ("pt", "O Paracetamol 500 mg sai por R$ 12,90 e o de 750 mg por R$ 18,50."),  # idem, 750
    ("pt", "O Arroz Integral 5 kg sai por R$ 36,90 e o de 1 kg por R$ 8,49."),  # idem, 1 kg
    ("en", "The 500 mg Paracetamol is R$ 12.90 and the 750 mg is R$ 18.50."),  # idem
    ("en", "The Paracetamol 500 mg is R$ 12.90 and the 750 mg is R$ 18.50."),  # idem, 750
    ("es", "El Arroz Integral de 1 kg cuesta R$ 8,49 y el de 5 kg R$ 36,90."),  # idem
    # Before: no_evidence ("Paracetamol 500mg", "Dipirona 1g" taken for products not held).
    ("pt", "O Paracetamol 500mg custa R$ 12,90."),
    ("en", "Hi Sam! Dipirona 1g is R$ 9.99."),
    ("es", "El Omeprazol 40mg cuesta R$ 34,90."),
    ("pt", "**Paracetamol 750 mg** \u2013 R$ 18,50 (caixa com 20 comprimidos)"),
    ("pt", "O Arroz Integral 1 kg custa R$ 8,49."),
    ("pt", "Restam 3 unidades do Paracetamol 500 mg."),
    ("pt", "O Paracetamol 500 mg tem 3 unidades em estoque."),
    ("pt", "O Paracetamol 750 mg chega em 5 dias úteis."),
    ("pt", "A Dipirona 1 g sai por R$ 9,99."),
    ("pt", "O Omeprazol 20 mg custa R$ 22,40 e vem com 28 cápsulas."),
    ("pt", "Olá, Ana! O Ibuprofeno 400 mg está por R$ 15,00. 💊"),
    (
        "pt",
        "| Produto | Preço |\n|---|---|\n| Paracetamol 500 mg | R$ 12,90 |\n"
        "| Paracetamol 750 mg | R$ 18,50 |",
    ),
    ("pt", "O Café em Grãos 500 g sai por R$ 29,90 e chega em 1 dia útil."),
    ("pt", "Temos o paracetamol 500 mg por R$ 12,90."),
    ("pt", "Leve o Paracetamol 750 mg. Ele sai por R$ 18,50."),
    ("en", "The Paracetamol 500 mg is R$ 12.90."),
    ("en", "Paracetamol 750 mg costs R$ 18.50 for a box of 20 tablets."),
    (
        "en",
        "- Paracetamol 500 mg: R$ 12.90\n- Ibuprofeno 400 mg: R$ 15.00\n- Dipirona 1 g: R$ 9.99",
    ),
    ("en", "Only 3 left of the Paracetamol 500 mg!"),
    ("en", "The Arroz Integral 5 kg arrives in 3 business days."),
    ("en", "Omeprazol 40 mg is R$ 34.90; Omeprazol 20 mg is R$ 22.40."),
    ("en", "The Arroz Integral 5 kg is R$ 36.90."),
    ("en", "We have 12 Paracetamol 750 mg in stock."),
    ("en", "The Omeprazol 20 mg (28 capsules) is R$ 22.40."),
    ("en", "Great choice! The Café em Grãos 500 g is R$ 29.90."),
    ("es", "El Paracetamol 500 mg cuesta R$ 12,90."),
    ("es", "El Paracetamol de 750 mg cuesta R$ 18,50."),
    ("es", "Quedan 5 unidades del Arroz Integral 5 kg."),
    ("es", "El Omeprazol 40 mg llega en 4 días hábiles."),
    ("es", "¡Hola, Lucía! El Ibuprofeno 400 mg cuesta R$ 15,00."),
    ("es", "- Paracetamol 500 mg: R$ 12,90\n- Paracetamol 750 mg: R$ 18,50"),
    ("es", "Del Omeprazol 20 mg quedan 4 unidades."),
    ("es", "Te recomiendo el **Omeprazol 20 mg** por R$ 22,40."),
    ("es", "El Café em Grãos 500 g cuesta R$ 29,90."),
    ("es", "La Dipirona 1 g cuesta R$ 9,99 (caja de 10 comprimidos).", DE_AFTER),
]


def _cases() -> list[Any]:
    out = []
    for lang, text, *why in CORRECT:
        marks = [pytest.mark.xfail(strict=True, reason=why[0])] if why else []
        out.append(pytest.param(lang, text, marks=marks))
    return out


@pytest.mark.parametrize(("lang", "text"), _cases())
def test_correct_replies_on_a_pharmacy_stand(lang, text):
    records = _check(text, lang)
    assert records
    assert {r.verdict for r in records} == {"matched"}
