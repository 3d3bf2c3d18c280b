"""A field the space's types document does not label is said by the built-in words of
its name in the block's language (``field_words.toml``), else by its name in words."""

from __future__ import annotations

import pytest

from tests.unit.core.constraints.builders import attribute, block, pref
from turnstream.core.constraints.text import builtin_field_labels


@pytest.mark.parametrize(
    ("language", "line", "hard"),
    [
        ("es", "La persona: talla de ropa M", "Obligatorio: color que no sea negro"),
        ("pt", "A pessoa: tamanho de roupa M", "Obrigatório: cor que não seja preto"),
        ("en", "The person: clothing size M", "Required: colour other than black"),
    ],
)
def test_a_space_without_types_says_common_fields_in_its_language(
    language: str, line: str, hard: str
) -> None:
    got = block(
        [pref("p1", "item_variant.color", "not_in", ("black",), "must_not")],
        [attribute("a1", "person.clothing_size", "M")],
        types=None,
        language=language,
    )
    lines = got["text"].splitlines()
    assert line in lines and hard in lines
    assert "clothing size" not in got["text"] or language == "en"


def test_a_field_nobody_knows_is_its_name_in_words_and_labels_win() -> None:
    got = block([pref("p1", "gadget.wire_gauge", "eq", ("12",), "must")], types=None,
                language="pt")  # fmt: skip
    assert "wire gauge" in got["text"]
    labelled = block([pref("p1", "item_variant.size", "eq", ("M",), "must")], types=None,
                     language="pt", labels={"item_variant.size": "manequim"})  # fmt: skip
    assert "manequim" in labelled["text"] and "tamanho" not in labelled["text"]


def test_builtin_labels_match_names_without_case_or_separators() -> None:
    got = builtin_field_labels(["person.Shoe-Size", "item.PRICE_SALE", "x.unknown"], "es")
    assert got == {"person.Shoe-Size": "número de calzado", "item.PRICE_SALE": "precio"}


@pytest.mark.parametrize("language", ["pt", "es", "en"])
def test_without_types_a_known_size_answers_size_in_any_language(language: str) -> None:
    got = block([], [attribute("a1", "person.clothing_size", "M")], types=None,
                language=language, asked=("size", "talla", "Tamanho", "color"))  # fmt: skip
    assert got["ask"] == ["color"]
    question = {"pt": "cor", "es": "color", "en": "colour"}[language]
    assert got["text"].splitlines()[-1].endswith(question)
    # Nothing known: one question per notion, however many names ask it.
    empty = block([], [], types=None, language=language, asked=("size", "talla", "cor", "color"))
    assert empty["ask"] == ["size", "cor"]


@pytest.mark.parametrize(
    ("language", "lines"),
    [
        ("es", ["Obligatorio: talla M", "Prefiere: material algodón", "Pregunte antes: título"]),
        ("pt", ["Obrigatório: tamanho M", "Prefere: material algodão", "Pergunte antes: título"]),
        ("en", ["Required: size M", "Prefers: material cotton", "Ask first: title"]),
    ],
)
def test_fields_named_in_spanish_read_in_the_blocks_language(
    language: str, lines: list[str]
) -> None:
    """A trial's Spanish catalogue without a types document: ``prenda.talla`` and a
    value written without its accent (``algodon``) read as the words they are, never
    quoted as a producer's."""
    got = block(
        [pref("p1", "prenda.talla", "eq", ("M",), "must"),
         pref("p2", "prenda.material", "in", ("algodon",), "prefer")],
        types=None, language=language, asked=("titulo",),
    )  # fmt: skip
    assert got["text"].splitlines() == lines


def test_builtin_labels_know_a_fields_words_in_any_language() -> None:
    got = builtin_field_labels(["prenda.talla", "x.Título", "x.tamanhos_em_estoque"], "en")
    assert got == {"prenda.talla": "size", "x.Título": "title",
                   "x.tamanhos_em_estoque": "sizes in stock"}  # fmt: skip
