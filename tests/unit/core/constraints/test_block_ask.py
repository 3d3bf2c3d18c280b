"""``ask`` as an agent's developer reads it (issue 36, point 1): one question per notion
(a size is a size, whichever field says it), none for what a standing entry already
knows, and a conflict's question naming what each side said."""

from __future__ import annotations

import pytest

from tests.unit.core.constraints.builders import (
    COLOR,
    SIZE,
    attribute,
    block,
    inference,
    pref,
    rule,
)

CLOTHING = "person.clothing_size"


def _asks(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.startswith(("Ask", "Pergunte", "Pregunte"))]


@pytest.mark.parametrize(
    "known",
    [
        [attribute("a1", SIZE, "M")],
        [attribute("a1", CLOTHING, "M", system="BR")],  # a sibling field of the family
    ],
)
def test_an_asked_notion_with_a_known_value_is_not_asked(known: list) -> None:
    for asked in (("size",), ("clothing_size",), (SIZE,), (CLOTHING,)):
        got = block(attributes=known, language="pt", asked=asked)
        assert got["ask"] == [] and not _asks(got["text"]), (asked, got["text"])


def test_a_stated_requirement_or_preference_naming_the_value_knows_it() -> None:
    for said in (
        pref("h", SIZE, "eq", ("M",), "must"),
        pref("s", SIZE, "in", ("M", "L"), "prefer"),
    ):
        assert block([said], asked=("size",))["ask"] == []
    # An exclusion names no size, and an inferred interest is no size at all.
    other = pref("n", SIZE, "not_in", ("XS",), "must_not")
    assert block([other], asked=("size",))["ask"] == [SIZE]
    seen = inference("i", "interest", "item_variant.ref", "item_variant:acme:1")
    assert block(inferences=[seen], asked=("size",))["ask"] == [SIZE]


@pytest.mark.parametrize(
    ("language", "line"),
    [("pt", "Pergunte antes: tamanho"), ("en", "Ask first: size"), ("es", "Pregunte antes: talla")],
)
def test_nothing_known_asks_once_by_the_fields_label(language: str, line: str) -> None:
    got = block(language=language, asked=("size", "clothing_size", SIZE))
    assert got["ask"] == [SIZE]
    assert got["text"] == line


def test_a_conflict_asks_once_naming_both_sides() -> None:
    """The block ``make run`` printed: a hard size M, a stated clothing size M, an
    inferred XS; it asked "tamanho" and "tamanho de roupa" as two lines."""
    said = [pref("h", SIZE, "eq", ("M",), "must")]
    person = [attribute("a", CLOTHING, "M", system="BR")]
    bought = [inference("xs", "attribute", SIZE, "XS", polarity=None)]
    got = block(said, person, bought, language="pt", asked=("size",))
    assert len(got["conflicts"]) == 2
    assert {c["ask"] for c in got["conflicts"]} == {SIZE}
    assert got["ask"] == [SIZE]
    assert _asks(got["text"]) == ["Pergunte antes: tamanho (disse M; inferido XS)"]
    en = block(said, person, bought, language="en", asked=("size",))["text"]
    assert _asks(en) == ["Ask first: size (said M; inferred XS)"]


def test_a_conflict_between_two_statements_names_the_newer_and_the_earlier() -> None:
    said = [
        pref("old", COLOR, "in", ("navy",), "must", hours_ago=3),
        pref("new", COLOR, "not_in", ("navy",), "must_not", hours_ago=1),
    ]
    got = block(said, language="es")
    assert _asks(got["text"]) == [
        "Pregunte antes: color (dijo que no sea azul marino; antes azul marino)"
    ]


def test_company_rules_that_clash_ask_the_person_nothing() -> None:
    rules = [
        rule("r1", 1, "Só preto.", COLOR, "in", "black"),
        rule("r2", 2, "Nunca preto.", COLOR, "not_in", "black"),
    ]
    got = block(rules=rules, language="pt")
    assert got["conflicts"] and "ask" not in got["conflicts"][0]
    assert got["ask"] == [] and not _asks(got["text"])


def test_an_asked_name_is_a_field_never_one_of_the_blocks_words() -> None:
    got = block(language="pt", asked=("or",), types=None)
    assert _asks(got["text"]) == ["Pergunte antes: “or”"]


@pytest.mark.parametrize(
    ("language", "line"),
    [("pt", "Pergunte antes: cor"), ("en", "Ask first: colour"), ("es", "Pregunte antes: color")],
)
def test_an_asked_taste_no_entry_knows_is_asked(language: str, line: str) -> None:
    """``asked=["color"]``: a taste field is asked like an attribute when no standing
    entry, stated or inferred, names a value of it; a refusal names none."""
    for asked in (("color",), (COLOR,)):
        got = block(language=language, asked=asked)
        assert got["ask"] == [COLOR] and got["text"] == line
    refused = pref("n", COLOR, "not_in", ("black",), "must_not")
    assert block([refused], asked=("color",))["ask"] == [COLOR]
    for known in (
        {"preferences": [pref("p", COLOR, "in", ("navy",), "prefer")]},
        {"preferences": [pref("h", COLOR, "eq", ("navy",), "must")]},
        {"inferences": [inference("i", "affinity", COLOR, "navy")]},
    ):
        assert block(language=language, asked=("color",), **known)["ask"] == [], known
    skipped = inference("i", "affinity", COLOR, "black", polarity="avoid")
    assert block(inferences=[skipped], asked=("color",))["ask"] == [COLOR]
