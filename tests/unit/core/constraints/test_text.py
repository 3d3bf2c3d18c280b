"""The block's text: one line per standing entry, in the space's language."""

from __future__ import annotations

import pytest

from tests.unit.core.constraints.builders import COLOR, PRICE, attribute, block, pref, rule
from turnstream.core.constraints import render_text

MATERIAL = "item_variant.material"
PREFS = [
    pref("p_old", COLOR, "in", ("black",), "must", hours_ago=5),  # loses to p_black
    pref("p_black", COLOR, "in", ("black",), "must_not", hours_ago=1),
    pref("p_price", PRICE, "lte", (700,), "must", hours_ago=2),
    pref("p_navy", COLOR, "in", ("navy",), "prefer", hours_ago=3),
    pref("p_wool", MATERIAL, "eq", ("wool",), "avoid", hours_ago=4),
]
ATTRS = [attribute("a_size", "person.size", "M", system="BR")]
RULES = [rule("r1", 1, "Never offer discontinued plans.")]


def _text(language: str, labels: dict[str, str] | None = None) -> list[str]:
    got = block(PREFS, ATTRS, rules=RULES, language=language, labels=labels)
    assert got["text"] == render_text(got, language, labels)
    return got["text"].split("\n")


def test_english_lines() -> None:
    assert _text("en") == [
        "required: color not black",
        "required: monthly price at most 700",
        "preferred: color one of navy",
        "avoid: material = wool",
        "the person: size M (BR)",
        "Never offer discontinued plans.",
    ]


def test_portuguese_lines_with_labels() -> None:
    labels = {COLOR: "cor", PRICE: "mensalidade", "person.size": "tamanho"}
    assert _text("pt", labels) == [
        "exigido: cor sem black",
        "exigido: mensalidade no máximo 700",
        "preferido: cor um de navy",
        "evitar: material igual a wool",
        "a pessoa: tamanho M (BR)",
        "Never offer discontinued plans.",
    ]


def test_spanish_lines() -> None:
    assert _text("es") == [
        "requerido: color sin black",
        "requerido: monthly price como máximo 700",
        "preferido: color uno de navy",
        "evitar: material igual a wool",
        "la persona: size M (BR)",
        "Never offer discontinued plans.",
    ]


def test_the_loser_of_a_conflict_is_left_out_but_stays_in_the_block() -> None:
    got = block(PREFS)
    assert [h["id"] for h in got["hard"] if h.get("lost")] == ["p_old"]
    assert "color one of black" not in got["text"]
    assert "required: color not black" in got["text"]


@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("en", "required: monthly price between 100 and 250.5"),
        ("pt-BR", "exigido: monthly price entre 100 e 250.5"),
        ("es", "requerido: monthly price entre 100 y 250.5"),
        ("de", "required: monthly price between 100 and 250.5"),
    ],
)
def test_between_in_words(language: str, line: str) -> None:
    got = block([pref("p1", PRICE, "between", (100.0, 250.5), "must")], language=language)
    assert got["text"] == line


@pytest.mark.parametrize(
    ("op", "values", "strength", "line"),
    [
        ("eq", (False,), "must", "required: copay = false"),
        ("eq", ("x",), "must_not", "required: copay not x"),
        ("gt", (10,), "must", "required: copay over 10"),
        ("lte", (10,), "must_not", "required: copay over 10"),
        ("lt", (10,), "must", "required: copay under 10"),
        ("gte", (10,), "must", "required: copay at least 10"),
        ("between", (1, 5), "must_not", "required: copay not between 1 and 5"),
        ("in", ("a", "b"), "must", "required: copay one of a, b"),
    ],
)
def test_operators_in_english_words(op: str, values: tuple, strength: str, line: str) -> None:
    got = block([pref("p1", "health_plan.copay", op, values, strength)])
    assert got["text"] == line


def test_asking_for_whom_is_a_line() -> None:
    assert block(delivery_elsewhere=True, language="pt")["text"] == "pergunte antes: para quem é"


def test_a_block_with_nothing_to_say_has_an_empty_text() -> None:
    got = block(rules=[rule("r1", 1, "")])
    assert got["text"] == ""
    assert block()["text"] == ""
