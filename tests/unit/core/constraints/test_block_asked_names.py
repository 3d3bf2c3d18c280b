"""``asked`` as an agent writes it: the block's own words (``colour``, ``storage``), a
field's label in any language, any case and accents; a name judged by its notion
throughout; a name nothing declares said back in ``asked_unknown``; and soft entries
that contradict each other."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.core.constraints.builders import (
    SIZE,
    attribute,
    block,
    inference,
    pref,
)
from turnstream.core.constraints.asked import normal, resolve_asked
from turnstream.models.object_types import load_types

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"
ACME = load_types(EXAMPLES / "types.toml")
LUMEN = load_types(EXAMPLES / "types_electronics.toml")
CLOTHING = "person.clothing_size"
BRAND = "item_variant.brand"
STORAGE = "item_variant.storage_gb"


def _asks(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.startswith(("Ask", "Pergunte", "Pregunte"))]


def test_names_are_matched_without_case_accents_or_separators() -> None:
    assert normal("Clothing-Size") == normal("clothing_size") == "clothing size"
    assert normal("NÚMERO do  calçado") == "numero do calcado"


@pytest.mark.parametrize(
    ("types", "name", "field"),
    [
        (LUMEN, "colour", "item_variant.color"),  # the en label, the block's own word
        (LUMEN, "storage", STORAGE),
        (LUMEN, "Storage_GB", STORAGE),
        (LUMEN, "armazenamento", STORAGE),
        (LUMEN, "os", "person.os"),  # an attribute before a taste of the same name
        (ACME, "cor", "item_variant.color"),
        (ACME, "tamanho", "item_variant.size"),
        (ACME, "Size", "item_variant.size"),
        (ACME, "tamanho de roupa", CLOTHING),
        (ACME, "Numero do calcado", "item_variant.shoe_size"),  # the notion of person.shoe_size
        (ACME, "ITEM_VARIANT.COLOR", "item_variant.color"),
    ],
)
def test_a_name_means_a_field_by_name_family_or_label(types, name: str, field: str) -> None:
    assert resolve_asked([name], types).fields == (field,)


def test_a_label_of_two_fields_means_the_attribute() -> None:
    """``sistema`` is lumen's pt label of the taste ``item_variant.os``; ``sistema do
    celular`` the attribute's; ``operating system`` only the taste's."""
    assert resolve_asked(["operating system"], LUMEN).fields == ("item_variant.os",)
    assert resolve_asked(["sistema do celular"], LUMEN).fields == ("person.os",)


def test_lumen_asked_by_the_blocks_own_words_asks() -> None:
    for name in ("colour", "storage", "Colour"):
        got = block(types=LUMEN, language="en", asked=(name,))
        assert got["ask"] and _asks(got["text"]), name
        assert "asked_unknown" not in got
    got = block(types=ACME, language="pt", asked=("cor", "tamanho", "Size"))
    assert got["ask"] == ["item_variant.color", SIZE] and "asked_unknown" not in got


def test_a_name_nothing_declares_is_said_back() -> None:
    got = block(types=LUMEN, language="en", asked=("frobnicate", "size", "colour"))
    assert got["asked_unknown"] == ["frobnicate", "size"]
    assert got["ask"] == ["item_variant.color"]


@pytest.mark.parametrize("name", ["size", "clothing_size", "tamanho", SIZE, CLOTHING])
def test_every_name_of_a_notion_is_judged_alike(name: str) -> None:
    """An inferred size XL: known whichever name of the size is asked; said M and
    inferred XL: the same conflict and question, worded by the family."""
    xl = inference("xl", "attribute", SIZE, "XL", polarity=None)
    known = block(inferences=[xl], types=ACME, language="pt", asked=(name,))
    assert known["ask"] == [] and [a["id"] for a in known["attributes"]] == ["xl"]
    said = attribute("m", CLOTHING, "M")
    both = block(attributes=[said], inferences=[xl], types=ACME, language="pt", asked=(name,))
    assert _asks(both["text"]) == ["Pergunte antes: tamanho (disse M; inferido XL)"]
    assert [c["ask"] for c in both["conflicts"]] == [SIZE]


def test_nothing_known_asks_the_family_in_the_same_words() -> None:
    for name in ("size", "clothing_size", CLOTHING):
        got = block(types=ACME, language="pt", asked=(name,))
        assert _asks(got["text"]) == ["Pergunte antes: tamanho"], name


@pytest.mark.parametrize(
    ("op", "values", "strength"),
    [
        ("gte", (128,), "must"),
        ("lte", (512,), "prefer"),
        ("between", (128, 512), "must"),
        ("in", (128, 256), "prefer"),
        ("eq", (256,), "must"),
    ],
)
def test_a_wanting_requirement_or_preference_asks_nothing(op, values, strength) -> None:
    said = pref("s", STORAGE, op, values, strength)
    got = block([said], types=LUMEN, language="en", asked=("storage_gb",))
    assert got["ask"] == [] and not _asks(got["text"]), got["text"]


def test_a_refusal_still_asks() -> None:
    said = pref("n", "item_variant.color", "not_in", ("black",), "must_not")
    got = block([said], types=ACME, language="pt", asked=("cor",))
    assert _asks(got["text"]) == ["Pergunte antes: cor"]


SHOWN = {
    "item_variant:lumen:1": {"name": "Nova", "brand": "Apple", "storage_gb": 256},
    "item_variant:lumen:2": {"name": "Onda", "brand": "Samsung", "storage_gb": 128},
}


def test_an_object_of_a_value_said_avoided_is_no_interest() -> None:
    avoid = pref("av", BRAND, "in", ("Apple",), "avoid")
    seen = [
        inference(f"i{n}", "interest", "item_variant.ref", f"item_variant:lumen:{n}")
        for n in (1, 2)
    ]
    got = block([avoid], inferences=seen, types=LUMEN, language="en", shown=SHOWN)
    interests = [r["values"][0] for r in got["soft"] if r["kind"] == "interest"]
    assert interests == ["item_variant:lumen:2"]
    assert "Nova" not in got["text"] and "Onda" in got["text"]


def test_an_inferred_liking_of_a_value_said_avoided_is_a_conflict_asked() -> None:
    avoid = pref("av", BRAND, "in", ("Apple",), "avoid")
    liked = inference("apple", "affinity", BRAND, "Apple")
    got = block([avoid], inferences=[liked], types=LUMEN, language="en")
    assert got["conflicts"][0]["kept"] == "av"
    assert "Seems to like" not in got["text"]
    assert _asks(got["text"]) == ["Ask first: brand (said other than Apple; inferred Apple)"]


def test_a_preference_for_other_values_leaves_an_inferred_liking() -> None:
    """Preferring Samsung or Motorola refuses nothing: no conflict, both lines, the
    stated first and the inferred one saying so."""
    prefer = pref("p", BRAND, "in", ("Samsung", "Motorola"), "prefer")
    liked = inference("apple", "affinity", BRAND, "Apple")
    got = block([prefer], inferences=[liked], types=LUMEN, language="en")
    assert got["conflicts"] == [] and got["ask"] == []
    assert got["text"].split("\n") == [
        "Prefers: brand Samsung or Motorola",
        "Seems to like (inferred): brand Apple",
    ]


@pytest.mark.parametrize(
    "name", ["price", "preço", "Precio", "price_sale", "item_variant.price_sale"]
)
def test_a_state_field_is_asked_by_any_of_its_names_as_by_its_type_field(name: str) -> None:
    """Before, ``item_variant.price_sale`` asked "Pergunte antes: preço" while ``price``,
    the block's own word for it, came back in ``asked_unknown``, also beside "Obrigatório:
    preço até 500" in the same block."""
    got = block(types=ACME, language="pt", asked=(name,))
    assert (got["text"], "asked_unknown" in got) == ("Pergunte antes: preço", False)
    limit = [pref("p", "item_variant.price_sale", "lte", (500,), "must")]
    got = block(limit, types=ACME, language="pt", asked=(name,))
    assert (got["text"], got["ask"], "asked_unknown" in got) == (
        "Obrigatório: preço até 500",
        [],
        False,
    )
