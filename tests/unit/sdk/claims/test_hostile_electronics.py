"""Hostile and sloppy replies on an electronics store, whose product names hold numbers and
whose variants differ by one ("iPhone 15" / "iPhone 15 Pro" / "iPhone 15 Pro Max", "Galaxy
S24" / "Galaxy S24 Ultra", 128 and 256 GB, a TV in 55 and 65 inches). Each hostile case is
beside correct replies of the same shape, which must still stand. The comments say what
the checker gave before names were read as phrases (``phrases.py``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from turnstream.sdk.claims import Claims, Evidence, parse_contract

from .builders import NOW
from .readers import read
from .test_binding import RETAIL

# The example contract and a category for the specs' measures (storage, RAM, screen).
CONTRACT = copy.deepcopy(RETAIL)
CONTRACT["categories"].append(
    {"id": "spec", "agents": [], "detect": {"classes": ["quantity"]},
     "evidence": {"value": {"fresh_for": "claim"}}, "actions": {"default": "warn"}}
)  # fmt: skip

_ITEM = "item_variant:lumen:"
# (id, name, sale price, measures): ids say nothing of the product (an opaque catalogue id).
_CATALOGUE: list[tuple[str, str, float, dict[str, int]]] = [
    ("v1001", "iPhone 15", 799.00, {"storage_gb": 128}),
    ("v1002", "iPhone 15", 899.00, {"storage_gb": 256}),
    ("v1003", "iPhone 15 Pro", 999.00, {"storage_gb": 128}),
    ("v1004", "iPhone 15 Pro Max", 1199.00, {"storage_gb": 256}),
    ("v1005", "Galaxy S24", 799.99, {"storage_gb": 128}),
    ("v1006", "Galaxy S24 Ultra", 1299.99, {"storage_gb": 256}),
    ("v1007", "ThinkPad X1 Carbon Gen 11", 1899.00, {"ram_gb": 16}),
    ("v1008", "PS5 Slim", 449.99, {}),
    ("v1009", "AirPods Pro 2", 249.00, {}),
    ("v1010", "Crystal UHD TV", 499.00, {"screen_inches": 55}),
    ("v1011", "Crystal UHD TV", 699.00, {"screen_inches": 65}),
    ("v1012", "Sony WH-1000XM5", 399.99, {}),
    ("v1013", "GeForce RTX 4070", 599.00, {}),
]


def _values() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tail, name, price, measures in _CATALOGUE:
        obj = _ITEM + tail
        out.append({"object": obj, "field": "name", "class": "label", "value": name,
                    "identifies": True})  # fmt: skip
        out.append({"object": obj, "field": "price_sale", "class": "money", "value": price,
                    "unit": "USD", "claim_age_s": 900})  # fmt: skip
        for field, amount in measures.items():
            # storage_gb carries its unit; screen_inches none (as the types document gives
            # it): the field's name says it.
            unit = "GB" if field.endswith("_gb") else None
            out.append({"object": obj, "field": field, "class": "quantity", "value": amount,
                        "unit": unit, "claim_age_s": 900})  # fmt: skip
    return out


STORE = Evidence.model_validate(
    {"calls": [{"id": "c1", "tool": "search_products", "at": "2026-11-29T12:00:00Z",
                "values": _values()}]}
)  # fmt: skip


def _check(text: str, lang: str = "en") -> list[Any]:
    claims = Claims(parse_contract(CONTRACT), "sales-assistant")
    return claims.check(text, context="chat", evidence=STORE, language=lang, now=NOW)


def _verdicts(text: str, lang: str = "en") -> list[tuple[str | None, str]]:
    return [(r.value, r.verdict) for r in _check(text, lang)]


# ------------------------------------------------ a variant's price said of another variant


@pytest.mark.parametrize(
    ("lang", "text", "wrong", "obj"),
    [
        # Before: all matched (the names' words were shared, so the variants named none
        # alone or named every "iPhone 15", and any of their prices made it right).
        ("en", "The iPhone 15 is $999.", "999.00", "v1001"),  # the Pro's
        ("en", "The iPhone 15 Pro is $1,199.00.", "1199.00", "v1003"),  # the Pro Max's
        ("en", "The Galaxy S24 is $1,299.99.", "1299.99", "v1005"),  # the Ultra's
        ("en", "| Model | Price |\n|---|---|\n| iPhone 15 Pro | $1,199.00 |", "1199.00", "v1003"),
        ("pt", "O iPhone 15 Pro sai por $1,199.00.", "1199.00", "v1003"),
        ("es", "El Galaxy S24 cuesta $1,299.99.", "1299.99", "v1005"),
        # The 256 GB's price said of the 128 GB: the measure narrows the shared name.
        ("en", "The iPhone 15 128 GB is $899.", "899.00", "v1001"),
        ("en", "The iPhone 15 with 128 GB is $899.", "899.00", "v1001"),
        ("pt", "O iPhone 15 de 128 GB sai por $899.", "899.00", "v1001"),
        # The 65 inch's price said of the 55 inch, and the other way round.
        ("en", "The 55 inch Crystal UHD TV is $699.", "699.00", "v1010"),
        ("en", "The Crystal UHD TV in 55 inch is $699.", "699.00", "v1010"),
        ("en", 'The 65" Crystal UHD TV is $499.', "499.00", "v1011"),
        ("pt", "A Crystal UHD TV de 55 polegadas sai por $699.", "699.00", "v1010"),
        ("es", "La Crystal UHD TV de 65 pulgadas ahora $499.", "499.00", "v1011"),
    ],
)
def test_a_right_price_on_another_variant_is_a_mismatch(lang, text, wrong, obj):
    [record] = [r for r in _check(text, lang) if r.value == wrong]
    assert record.verdict == "mismatch"
    assert record.evidence["object"] == _ITEM + obj
    assert record.evidence["bound"] is True


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The iPhone 15 with 128 GB is $899 and with 256 GB it is $799."),
        ("en", "The Crystal UHD TV comes in 55 inch for $699 and 65 inch for $499."),
        ("en", "The iPhone 15 Pro Max is $999 and the iPhone 15 Pro is $1,199."),
        ("en", "The Galaxy S24 Ultra and the Galaxy S24 cost $799.99 and $1,299.99 respectively."),
    ],
)
def test_swapped_variant_prices_in_one_sentence_are_both_mismatches(lang, text):
    # Before: the sentence named the variants together, so both prices matched (or only
    # the one said of the Pro Max was caught).
    prices = [r.verdict for r in _check(text, lang) if r.category == "price"]
    assert prices == ["mismatch", "mismatch"]


# ------------------------------------------------ a model the evidence does not hold


@pytest.mark.parametrize(
    ("lang", "text", "name"),
    [
        # Before: all matched by a held model's price ("iPhone 16" named the iPhone 15s by
        # "iPhone", "Gen 12" the Gen 11 by "ThinkPad", "RTX 4080" the 4070 by "RTX").
        ("en", "The iPhone 16 is $799.", "iPhone 16"),
        ("en", "The iPhone 16 Pro is $999.", "iPhone 16 Pro"),
        ("en", "The iPhone 15 Plus is $899.", "iPhone 15 Plus"),
        ("en", "The Galaxy S25 is $799.99.", "Galaxy S25"),
        ("en", "The Galaxy S24+ is $799.99.", "Galaxy S24+"),
        ("en", "The Galaxy S24 FE is $799.99.", "Galaxy S24 FE"),
        ("en", "The ThinkPad X1 Carbon Gen 12 is $1,899.00.", "ThinkPad X1 Carbon Gen 12"),
        ("en", "The PS5 Pro is $449.99.", "PS5 Pro"),
        ("en", "The AirPods Pro 3 are $249.00.", "AirPods Pro 3"),
        ("en", "The Sony WH-1000XM4 is $399.99.", "Sony WH-1000XM4"),
        ("en", "The WH-1000XM4 is $399.99.", "WH-1000XM4"),
        ("en", "The RTX 4080 is $599.", "RTX 4080"),
        ("en", "The GeForce RTX 4070 Ti is $599.", "GeForce RTX 4070 Ti"),
        ("en", "The RTX 4070 Super is $599.", "RTX 4070 Super"),
        ("es", "El iPhone 16 cuesta $799.", "iPhone 16"),
        ("es", "La PS5 Pro cuesta $449.99.", "PS5 Pro"),
        ("es", "El Galaxy S25 Ultra ahora $1,299.99.", "Galaxy S25 Ultra"),  # not the Ultra
        ("pt", "O iPhone 16 sai por $799.", "iPhone 16"),
        ("pt", "O Galaxy S24 FE sai por $799.99.", "Galaxy S24 FE"),
    ],
)
def test_a_model_the_evidence_does_not_hold_has_no_evidence(lang, text, name):
    [record] = _check(text, lang)
    assert record.verdict == "no_evidence"
    assert record.evidence["unlisted"] == name


# ------------------------------------------------ a measure the evidence does not hold


@pytest.mark.parametrize(
    ("lang", "text", "wrong"),
    [
        ("en", "The iPhone 15 Pro Max has 512 GB.", "512"),
        ("en", "The iPhone 15 Pro with 256 GB is $999.", "256"),  # the Pro is 128 GB
        ("en", "The ThinkPad X1 Carbon Gen 11 with 32GB of RAM is $1,899.00.", "32"),
        ("en", "The 75 inch Crystal UHD TV is $699.", "75"),
        ("es", "El iPhone 15 Pro Max tiene 512 GB.", "512"),
        ("pt", "O iPhone 15 Pro Max tem 512 GB.", "512"),
    ],
)
def test_a_measure_no_variant_holds_is_a_mismatch(lang, text, wrong):
    # Before: the same, except "The iPhone 15 Pro with 256 GB" (the Pro Max's 256 GB
    # matched it).
    [record] = [r for r in _check(text, lang) if r.value == wrong]
    assert record.verdict == "mismatch"


# ------------------------------------------------ correct replies of the same shapes


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The iPhone 15 costs $799."),
        # Before: the Pro's $999.00 was a mismatch (bound to the Pro Max by "Max").
        ("en", "The iPhone 15 Pro is $999.00 and the iPhone 15 Pro Max is $1,199.00."),
        ("en", "The Galaxy S24 is $799.99 and the Galaxy S24 Ultra is $1,299.99."),  # idem
        ("en", "The iPhone 15 with 128 GB is $799 and with 256 GB it is $899."),
        ("en", "The iPhone 15 128GB is $799; the 256GB version is $899."),
        ("en", "Both iPhone 15 models: 128 GB for $799, 256 GB for $899."),
        ("en", "The iPhone 15 (128 GB) is $799."),
        ("en", "The 128GB iPhone 15 is $799."),
        ("en", "If you want more storage, the iPhone 15 with 256 GB is $899."),
        ("en", "The iPhone 15 Pro Max comes with 256 GB and costs $1,199."),
        ("en", "The iPhone 15 Pro Max is our top pick. It is $1,199.00 with 256 GB."),
        ("en", "The Galaxy S24 Ultra 256GB is $1,299.99."),
        ("en", "The ThinkPad X1 Carbon Gen 11 with 16GB of RAM is $1,899.00."),
        ("en", "The ThinkPad X1 Carbon Gen 11 Laptop is $1,899.00."),
        ("en", "The PS5 Slim console is $449.99."),
        ("en", "AirPods Pro 2 are $249.00."),
        ("en", "The 55 inch Crystal UHD TV is $499 and the 65 inch is $699."),
        ("en", "The Crystal UHD TV comes in 55 inch for $499 and 65 inch for $699."),
        ("en", 'The 65" Crystal UHD TV is $699.'),
        ("en", "The 65-inch Crystal UHD TV is $699."),
        ("en", "The Sony WH-1000XM5 Wireless Headphones are $399.99."),
        ("en", "The WH-1000XM5 is $399.99."),
        ("en", "The RTX 4070 is $599 and the PS5 Slim is $449.99."),
        ("en", "The GeForce RTX 4070 Graphics Card is $599."),
        ("en", "The iPhone 15 Pro Max, our Best Seller, is $1,199.00."),
        # Before: no_evidence ("the Best Value" was taken for a product not held).
        ("en", "The iPhone 15 is $799 — the Best Value in the Lineup."),
        (
            "en",
            "Here are some options:\n\n- **iPhone 15** (128 GB): $799\n"
            "- **iPhone 15 Pro** (128 GB): $999\n- **Galaxy S24 Ultra** (256 GB): $1,299.99",
        ),
        (
            "en",
            "**Top Picks for You**\n\n1. **Sony WH-1000XM5** \u2013 $399.99\n"
            "2. **AirPods Pro 2** \u2013 $249.00\n3. **PS5 Slim** \u2013 $449.99",
        ),
        (
            "en",
            "| Model | Storage | Price |\n|---|---|---|\n| iPhone 15 Pro | 128 GB | $999.00 |\n"
            "| iPhone 15 Pro Max | 256 GB | $1,199.00 |",
        ),
        ("es", "El Galaxy S24 Ultra cuesta $1,299.99."),
        ("es", "Los Sony WH-1000XM5 cuestan $399.99."),
        ("es", "La Crystal UHD TV de 55 pulgadas ahora $499."),
        # Before: "2 $249" was read as $2 (and the $249 lost): a mismatch.
        ("es", "El PS5 Slim cuesta $449.99 y los AirPods Pro 2 $249."),
        ("es", "Te recomiendo el **iPhone 15 Pro** por $999."),
        ("pt", "O iPhone 15 de 128 GB sai por $799 e o de 256 GB por $899."),
        ("pt", "O Galaxy S24 com 128 GB sai por $799.99."),
        ("pt", "A Crystal UHD TV de 55 polegadas sai por $499 e a de 65 polegadas por $699."),
        # Before: the AirPods' $249 was a mismatch (the Sony's name stood nearer).
        ("pt", "Recomendo o **AirPods Pro 2** por $249 e o **Sony WH-1000XM5** por $399.99."),
        ("pt", "O PS5 Slim custa $449.99."),
        # A model's word in lower case after a name is a word of the sentence.
        ("es", "El iPhone 15 se vende a $799."),
        ("pt", "O iPhone 15 se destaca por $799."),
        ("en", "The iPhone 15 plus tax is $799."),
    ],
)
def test_correct_replies_on_an_electronics_store_stand(lang, text):
    assert {v for _, v in _verdicts(text, lang)} == {"matched"}


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "The iPhone 15 costs $799."),
        ("en", "Sony WH-1000XM5 headphones are $399.99; the RTX 4070 is $599."),
        ("en", "The ThinkPad X1 Carbon Gen 11 is $1,899.00."),
        ("es", "El iPhone 15 cuesta $799."),
        ("pt", "O PS5 Slim custa $449.99."),
    ],
)
def test_a_model_number_is_no_claim(lang, text):
    # "15", "WH-1000XM5", "4070", "X1", "11", "PS5": labels, never a quantity or a price.
    records = _check(text, lang)
    assert [r.category for r in records] == ["price"] * text.count("$")
    assert {r.verdict for r in records} == {"matched"}


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("es", "los AirPods Pro 2 $249", [("$249", "money")]),
        ("en", 'the 65" one $699', [("$699", "money")]),
        ("es", "3,49 zł 1,75 zł", [("3,49 zł", "money"), ("1,75 zł", "money")]),  # unchanged
    ],
)
def test_a_dollar_sign_before_a_number_is_that_number_s(lang, text, expected):
    assert [(t, c) for t, c, _, _ in read(text, lang)] == expected
