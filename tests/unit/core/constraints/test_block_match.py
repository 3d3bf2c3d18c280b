"""Values compared by the value they name, not by their spelling: case, accents, white
space and the types document's labels in every language (``Black``, `` black ``,
``negro`` and ``preto`` are one colour; ``lana`` and ``Wool`` are ``lã``), sizes restated
with another case, space or system, and sizes written as decimals."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.core.constraints.builders import attribute, block, inference, pref
from turnstream.core.constraints.text import ValueWords
from turnstream.core.value_ids import value_ids
from turnstream.models.object_types import load_types

ACME = load_types(Path(__file__).resolve().parents[4] / "examples" / "types.toml")
IDS = value_ids(ACME)
COLOR = "item_variant.color"
MATERIAL = "item_variant.material"
BRAND = "item_variant.brand"
CLOTHING = "person.clothing_size"
SHOE = "person.shoe_size"
REF = "item_variant.ref"


@pytest.mark.parametrize(
    ("attr", "said", "named"),
    [
        (COLOR, ["preto", "Black", "negro", " black ", "PRETO", "black"], "black"),
        (MATERIAL, ["lã", "Wool", "lana", "LA", " lã "], "wool"),
        (COLOR, ["azul-marinho", "navy", "Azul Marinho", "azul_marinho"], "navy"),
        (BRAND, ["APPLE", "apple", " Apple "], "apple"),
        (CLOTHING, ["M", "m", " M "], "m"),
        (COLOR, ["Turquesa  Clara", "turquesa clara"], "turquesa clara"),
    ],
)
def test_spellings_of_one_value_name_it(attr: str, said: list[str], named: str) -> None:
    assert {IDS.of(attr, word) for word in said} == {named}


def test_numbers_as_text_name_the_number_and_refs_stay_as_they_are() -> None:
    assert {IDS.key(SHOE, v) for v in ("40", "40.0", " 40,0 ", 40, 40.0)} == {IDS.key(SHOE, 40)}
    assert IDS.key(SHOE, "40,5") == IDS.key(SHOE, 40.5) != IDS.key(SHOE, 40)
    assert IDS.of(SHOE, "1,299") == "1,299"  # a comma that may group thousands: no number
    assert IDS.of(REF, "item_variant:SKU-A") == "item_variant:SKU-A"
    assert IDS.of("item_variant.sku", "AB-12") == "AB-12"  # an identifier: exact


def test_without_types_the_built_in_words_still_name_one_value() -> None:
    plain = value_ids(None)
    assert plain.of(COLOR, "negro") == plain.of(COLOR, "Preto") == plain.of(COLOR, "black")
    assert plain.of(COLOR, "Black") != plain.of(COLOR, "white")


def test_a_label_two_values_share_names_neither() -> None:
    # ``verde`` is the pt and es word of green only; ``rosa`` of pink only: both name.
    assert IDS.of(COLOR, "Rosa") == "pink" and IDS.of(COLOR, "verde") == "green"


SHOWN = {
    "item_variant:1": {"name": "Casaco Um", "color": "Black", "material": "Wool"},
    "item_variant:2": {"name": "Casaco Dois", "color": " black ", "material": "lana"},
    "item_variant:3": {"name": "Casaco Três", "color": "negro", "material": "algodão"},
    "item_variant:4": {"name": "Casaco Quatro", "color": "Branco", "material": "lã"},
    "item_variant:5": {"name": "Casaco Cinco", "color": "white", "material": "Cotton"},
}


def _interests(got: dict[str, object]) -> list[str]:
    soft = got["soft"]
    assert isinstance(soft, list)
    return [row["values"][0] for row in soft if row["kind"] == "interest"]


def _seen(*numbers: int) -> list[object]:
    return [inference(f"i{n}", "interest", REF, f"item_variant:{n}") for n in numbers]


def test_a_hard_refusal_drops_interests_in_every_spelling_of_its_value() -> None:
    """Colour other than preto, material other than lã: only the white cotton coat
    stays an interest."""
    not_black = pref("c", COLOR, "not_in", ("preto",), "must_not")
    not_wool = pref("m", MATERIAL, "not_in", ("lã",), "must_not")
    seen = _seen(1, 2, 3, 4, 5)
    got = block([not_black, not_wool], inferences=seen, shown=SHOWN, types=ACME, language="pt")
    assert _interests(got) == ["item_variant:5"]


def test_a_stated_avoid_drops_interests_in_its_value_spelled_otherwise() -> None:
    shown = {"item_variant:1": {"name": "Fone", "brand": "APPLE"},
             "item_variant:2": {"name": "Galaxy", "brand": "samsung"}}  # fmt: skip
    avoid = pref("av", BRAND, "in", ("Apple",), "avoid")
    got = block([avoid], inferences=_seen(1, 2), shown=shown, types=ACME, language="pt")
    assert _interests(got) == ["item_variant:2"]


@pytest.mark.parametrize(("said", "inferred"), [("Black", "black"), ("azul-marinho", "navy")])
def test_a_stated_preference_absorbs_the_inferred_value_spelled_otherwise(
    said: str, inferred: str
) -> None:
    prefer = pref("p", COLOR, "in", (said,), "prefer")
    liked = inference("a", "affinity", COLOR, inferred)
    got = block([prefer], inferences=[liked], types=ACME, language="pt")
    assert [row["id"] for row in got["soft"]] == ["p"]
    assert len(got["text"].split("\n")) == 1


def test_one_constraint_said_in_two_spellings_is_one_entry() -> None:
    first = pref("a", COLOR, "not_in", ("Black",), "must_not", hours_ago=2)
    again = pref("b", COLOR, "not_in", ("preto",), "must_not")
    got = block([first, again], types=ACME, language="pt")
    assert [row["id"] for row in got["hard"]] == ["b"]
    assert got["hard"][0]["origins"] == ["event:b", "event:a"]


def test_one_value_inferred_in_two_spellings_is_one_entry_the_stronger() -> None:
    weak = inference("w", "affinity", COLOR, "Black", weight=0.3)
    strong = inference("s", "affinity", COLOR, "black", weight=0.8)
    got = block(inferences=[weak, strong], types=ACME, language="pt")
    assert [row["id"] for row in got["soft"]] == ["s"]


def test_an_inferred_liking_against_the_refusal_of_its_value_spelled_otherwise_clashes() -> None:
    refuse = pref("r", COLOR, "in", ("negro",), "avoid")
    liked = inference("a", "affinity", COLOR, "Black")
    got = block([refuse], inferences=[liked], types=ACME, language="pt")
    assert got["conflicts"] == [
        {"entries": ["a", "r"], "kept": "r", "reason": "stated_over_inferred", "ask": COLOR}
    ]


@pytest.mark.parametrize("again", ["m", " M ", "M"])
def test_a_size_restated_in_another_case_or_space_is_no_conflict(again: str) -> None:
    first = attribute("a1", CLOTHING, "M", hours_ago=2)
    later = attribute("a2", CLOTHING, again)
    got = block(attributes=[first, later], types=ACME, language="pt", asked=("tamanho",))
    assert got["conflicts"] == [] and got["ask"] == []
    assert [row["id"] for row in got["attributes"]] == ["a2"]
    assert got["text"] == "A pessoa: tamanho de roupa M"


def test_another_size_is_still_a_conflict() -> None:
    first = attribute("a1", CLOTHING, "M", hours_ago=2)
    later = attribute("a2", CLOTHING, "l")
    got = block(attributes=[first, later], types=ACME, language="pt")
    assert got["ask"] == ["item_variant.size"]  # the family's question
    assert "Pergunte antes: tamanho (disse L; antes M)" in got["text"]


def test_a_size_without_a_system_is_the_one_with_the_only_system_known() -> None:
    with_system = attribute("a1", CLOTHING, "M", system="BR", hours_ago=2)
    without = attribute("a2", CLOTHING, "M")
    got = block(attributes=[with_system, without], types=ACME, language="pt")
    assert [row["id"] for row in got["attributes"]] == ["a2"]
    assert got["conflicts"] == []


def test_a_size_in_two_systems_stays_two_facts() -> None:
    br = attribute("a1", CLOTHING, "M", system="BR", hours_ago=2)
    us = attribute("a2", CLOTHING, "M", system="US", hours_ago=1)
    without = attribute("a3", CLOTHING, "M")  # which of the two: unknown
    got = block(attributes=[br, us, without], types=ACME, language="pt")
    assert sorted(row["id"] for row in got["attributes"]) == ["a1", "a2", "a3"]


def test_an_inferred_size_is_absorbed_by_the_size_said_in_another_case() -> None:
    said = attribute("a", CLOTHING, " m ")
    bought = inference("i", "attribute", "item_variant.size", "M", polarity=None)
    got = block(attributes=[said], inferences=[bought], types=ACME, language="pt",
                asked=("tamanho",))  # fmt: skip
    assert [row["id"] for row in got["attributes"]] == ["a"]


@pytest.mark.parametrize(
    ("language", "value", "words"),
    [
        ("pt", "40.0", "40"),
        ("pt", "40.5", "40,5"),
        ("es", "40,5", "40,5"),
        ("en", "40,5", "40.5"),
        ("pt", "38-40", "38-40"),
        ("pt", "00", "00"),
        ("en", "1,299", "1,299"),
    ],
)
def test_a_size_written_as_a_decimal_reads_as_the_language_writes_numbers(
    language: str, value: str, words: str
) -> None:
    assert ValueWords(language).word(SHOE, value) == words


def test_a_shoe_size_said_twice_as_decimals_is_one_line() -> None:
    first = attribute("a1", SHOE, "40.0", hours_ago=2)
    later = attribute("a2", SHOE, "40")
    got = block(attributes=[first, later], types=ACME, language="pt")
    assert got["conflicts"] == []
    assert got["text"] == "A pessoa: número do calçado 40"


def test_the_text_says_each_fact_once_and_no_interest_in_a_value_excluded() -> None:
    """The tester's block: every spelling at once; the text has no line twice, no
    interest in a black or woollen coat, nor an Apple item beside "Prefere evitar"."""
    shown = {**SHOWN, "item_variant:6": {"name": "Fone", "brand": "APPLE"}}
    said = [
        pref("c1", COLOR, "not_in", ("preto",), "must_not"),
        pref("c2", COLOR, "not_in", ("Black",), "must_not", hours_ago=3),
        pref("m1", MATERIAL, "not_in", ("lã",), "must_not"),
        pref("b1", BRAND, "in", ("Apple",), "avoid"),
        pref("n1", COLOR, "in", ("azul-marinho",), "prefer"),
    ]
    sizes = [
        attribute("s1", CLOTHING, "M", system="BR", hours_ago=3),
        attribute("s2", CLOTHING, " m ", hours_ago=2),
        attribute("s3", CLOTHING, "M"),
        attribute("f1", SHOE, "40.0"),
    ]
    inferred = [
        *_seen(1, 2, 3, 4, 5, 6),
        inference("navy", "affinity", COLOR, "navy", weight=0.9),
        inference("wool1", "affinity", MATERIAL, "Wool", weight=0.7),
        inference("wool2", "affinity", MATERIAL, "lana", weight=0.6),
    ]
    got = block(said, sizes, inferred, shown=shown, types=ACME, language="pt",
                asked=("tamanho",))  # fmt: skip
    lines = got["text"].split("\n")
    assert len(lines) == len(set(lines))
    assert set(lines[:4]) == {
        "Obrigatório: cor que não seja preto",
        "Obrigatório: material que não seja lã",
        "Prefere: cor azul-marinho",
        "Prefere evitar: marca Apple",
    }
    assert "Demonstrou interesse em (inferido): “Casaco Cinco”" in lines
    for name in ("Um", "Dois", "Três", "Quatro", "Fone"):
        assert f"Casaco {name}" not in got["text"] and "Fone" not in got["text"]
    assert "A pessoa: tamanho de roupa M" in lines
    assert "A pessoa: número do calçado 40" in lines
    assert "Parece gostar de (inferido): cor azul-marinho" not in lines  # said: absorbed
    # ``Wool`` and ``lana`` liked are one liking, which the refusal of lã clashes with.
    assert [ln for ln in lines if ln.startswith("Pergunte antes")] == [
        "Pergunte antes: material (disse que não seja lã; inferido lã)"
    ]
