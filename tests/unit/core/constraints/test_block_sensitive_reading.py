"""Sensitive stated values read from their words: an allergy or intolerance to a named
food is a hard "sem X" / "without X" / "sin X"; a negated condition ("não sou celíaco")
serves no act (at most the soft avoid the rest says); "sem X" is an act only when X is
a food; "no restriction" is nothing to act on or ask; words nothing reads are asked,
never echoed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.unit.core.constraints.builders import attribute, block, pref
from turnstream.core.constraints import ToolBinding, filter_residual, render_for_tool
from turnstream.core.constraints.sensitive_reading import read_sensitive
from turnstream.models.object_types import load_types, parse_types

TYPES = load_types(Path(__file__).resolve().parents[4] / "examples" / "types.toml")
DIET = "person.diet"


def _lines(said: str, language: str, **more: object) -> list[str]:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language, **more)
    return got["text"].split("\n") if got["text"] else []


@pytest.mark.parametrize(
    ("said", "language", "line"),
    [
        ("alergia grave a amendoim", "pt", "Obrigatório: sem amendoim"),
        ("sou alérgica a frutos do mar", "pt", "Obrigatório: sem frutos do mar"),
        ("tengo alergia a los cacahuetes", "es", "Obligatorio: sin cacahuete"),
        ("soy alérgico al maní", "es", "Obligatorio: sin cacahuete"),
        ("I'm allergic to peanuts", "en", "Required: without peanuts"),
        ("severe peanut allergy", "en", "Required: without peanuts"),
        ("intolerante a ovo", "pt", "Obrigatório: sem ovo"),
        ("intolerant to eggs", "en", "Required: without eggs"),
    ],
)
def test_an_allergy_to_a_named_food_is_a_hard_act(said: str, language: str, line: str) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert got["text"].split("\n") == [line]
    [row] = got["hard"]
    assert (row["relax"], row["attr"], row["source"]) == ("never", None, "stated")
    assert got["ask"] == []
    served = json.dumps(got, ensure_ascii=False).lower()
    assert not any(w in served for w in ("alergi", "allerg", "intoler")), served


def test_a_food_is_said_in_the_blocks_language_or_quoted_and_several_are_each_acted() -> None:
    assert _lines("alergia grave a amendoim", "en") == ["Required: without peanuts"]
    assert _lines("alergia a amendoim e camarão", "pt") == [
        "Obrigatório: sem amendoim",
        "Obrigatório: sem camarão",
    ]
    # A food no list names is the person's word, quoted; what follows it is left out.
    assert _lines("alergia a kiwi desde criança", "es") == ["Obligatorio: sin “kiwi”"]
    # An allergy to what an act of the types document covers is that act.
    assert _lines("intolerante à lactose", "pt") == ["Obrigatório: sem lactose"]
    assert _lines("allergic to gluten", "en") == ["Required: gluten-free"]


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        ("alergia a ovo, leite e soja", "pt",
         ["Obrigatório: sem ovo", "Obrigatório: sem leite", "Obrigatório: sem soja"]),
        ("allergic to nuts, eggs, milk", "en",
         ["Required: without tree nuts", "Required: without eggs", "Required: without milk"]),
        ("soy alérgica al maní; a los huevos", "es",
         ["Obligatorio: sin cacahuete", "Obligatorio: sin huevo"]),
        ("evito pão, açúcar", "pt", ["Prefere evitar: pão", "Prefere evitar: açúcar"]),
        ("não tenho alergia a amendoim, ovo", "pt", []),
    ],
)  # fmt: skip
def test_a_list_of_foods_after_commas_is_every_food_of_it(
    said: str, language: str, lines: list[str]
) -> None:
    """Before, a comma ended the clause: "alergia a ovo, leite e soja" served "sem ovo"
    alone, leite and soja dropped, and nothing was asked."""
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert (_lines(said, language), got["ask"]) == (lines, [])


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        ("alergia a amendoim, kosher", "pt",
         ["Obrigatório: sem amendoim", "Pergunte antes: dieta"]),
        ("celiac; also halal", "en", ["Required: gluten-free", "Ask first: diet"]),
        ("allergies: peanuts. eggs", "en", ["Ask first: diet"]),
    ],
)  # fmt: skip
def test_a_clause_nothing_reads_beside_one_read_is_asked(
    said: str, language: str, lines: list[str]
) -> None:
    """Before, what one clause said was served and a clause nothing read was dropped
    without a word: the agent was never told there was more to know."""
    assert _lines(said, language) == lines
    assert not any(w in _served(block(attributes=[attribute("a1", DIET, said)], types=TYPES))
                   for w in ("kosher", "halal"))  # fmt: skip


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        ("não sou celíaco, só evito pão", "pt", ["Prefere evitar: pão"]),
        ("no soy celíaco, solo evito el pan", "es", ["Prefiere evitar: pan"]),
        ("I'm not coeliac, I just avoid bread", "en", ["Would rather avoid: bread"]),
        ("sem ser celíaca", "pt", []),
        ("não tenho alergia a amendoim", "pt", []),
        ("no tengo alergia al maní", "es", []),
        ("I don't have a peanut allergy", "en", []),
    ],
)
def test_a_negated_condition_serves_no_hard_act(said: str, language: str, lines: list[str]) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert got["hard"] == []
    assert _lines(said, language) == lines
    assert got["ask"] == []  # understood: nothing to ask
    assert all(row["polarity"] == "avoid" and row["act"] for row in got["soft"])


def test_a_newer_negation_outweighs_an_older_statement_and_a_negation_only_its_clause() -> None:
    said = [
        attribute("a1", DIET, "não sou celíaco", hours_ago=1),
        attribute("a2", DIET, "celíaco", hours_ago=5),
    ]
    assert block(attributes=said, types=TYPES, language="pt")["hard"] == []
    older = [
        attribute("a1", DIET, "celíaca", hours_ago=1),
        attribute("a2", DIET, "não sou celíaca", hours_ago=5),
    ]
    assert [r["act"] for r in block(attributes=older, types=TYPES)["hard"]] == ["gluten_free"]
    assert _lines("alergia a camarão, não a peixe", "pt") == ["Obrigatório: sem camarão"]
    assert _lines("allergic to peanuts but not coeliac", "en") == ["Required: without peanuts"]


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        # A negation ends where "e" / "y" / "and" starts a new statement.
        ("não sou celíaco e tenho alergia a amendoim", "pt", ["Obrigatório: sem amendoim"]),
        ("I'm not coeliac and I'm allergic to peanuts", "en", ["Required: without peanuts"]),
        ("no tengo alergia al maní pero soy celíaca", "es", ["Obligatorio: sin gluten"]),
        # ...and only there: both foods are negated.
        ("não sou alérgico a amendoim e castanha", "pt", []),
        # A bare "no" negates before a verb or a condition; in Portuguese it is "in the".
        ("no verão tenho alergia a camarão", "pt", ["Obrigatório: sem camarão"]),
        ("I have no peanut allergy", "en", []),
    ],
)
def test_a_negation_reaches_as_far_as_it_is_said(
    said: str, language: str, lines: list[str]
) -> None:
    assert _lines(said, language) == lines


@pytest.mark.parametrize(
    ("said", "language", "line"),
    [
        ("diabetes tipo 2", "pt", "Pergunte antes: dieta"),
        ("tengo una alergia", "es", "Pregunte antes: dieta"),
        ("high blood pressure", "en", "Ask first: diet"),
    ],
)
def test_words_nothing_reads_are_asked_never_echoed(said: str, language: str, line: str) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert (got["text"], got["ask"], got["hard"], got["soft"]) == (line, [DIET], [], [])
    served = json.dumps(got, ensure_ascii=False).lower()
    assert not any(w in served for w in said.lower().split() if len(w) > 3), served


def test_only_the_newest_statement_of_a_field_decides_whether_to_ask() -> None:
    said = [
        attribute("a1", DIET, "celíaca", hours_ago=1),
        attribute("a2", DIET, "diabetes tipo 2", hours_ago=5),
    ]
    assert block(attributes=said, types=TYPES, language="pt")["ask"] == []
    said = [pref("p1", DIET, "in", ("pressão alta",), "must", hours_ago=1), *said[:1]]
    got = block(preferences=said[:1], attributes=said[1:], types=TYPES, language="pt")
    assert got["text"].split("\n") == ["Obrigatório: sem glúten", "Pergunte antes: dieta"]


def test_the_reading_keeps_no_word_of_the_condition() -> None:
    reading = read_sensitive(TYPES, DIET, "não sou celíaco, só evito pão")
    assert (reading.acts, reading.negated) == ([], {"gluten_free"})
    assert [(n, food.en) for n, food in reading.avoided] == [("avoid_bread", "bread")]
    reading = read_sensitive(TYPES, DIET, ["alergia a amendoim", "vegana"])
    assert [n for n, _ in reading.acts] == ["without_peanut", "vegan"]
    assert not read_sensitive(TYPES, DIET, "alergia").understood
    # A food of more words than a food has is no food: nothing read, so asked.
    assert not read_sensitive(TYPES, DIET, "alergia a pólen de árvores de jardim").acts


def test_an_act_naming_no_objects_field_is_no_tool_argument_and_no_residual() -> None:
    """Before, such an act was residual with an unbound field ``None``: a tool that
    overfetches then failed judging its results by it."""
    binding = ToolBinding.model_validate({
        "tool": "search_products",
        "args": [{"attr": "item_variant.color", "param": "colors",
                  "negation": {"param": "exclude_colors"}}],
        "results": {"path": "items", "type": "item_variant", "id": "sku"},
        "capabilities": {"overfetch": True},
    })  # fmt: skip
    said = [pref("p1", "item_variant.color", "not_in", ("black",), "must_not"),
            pref("p2", "item_variant.gender", "eq", ("women",), "must")]  # fmt: skip
    got = block(preferences=said, attributes=[attribute("a1", DIET, "alergia a amendoim")],
                types=TYPES)  # fmt: skip
    rendered = render_for_tool(got, binding)
    assert (rendered["residual"], rendered["unbound_attrs"]) == (["p2"], ["item_variant.gender"])
    items = {"items": [{"sku": "1", "color": "navy"}, {"sku": "2", "color": "black"}]}
    residual = [r for r in got["hard"] if r["id"] in rendered["residual"]]
    assert filter_residual(items, residual, binding.results)[2] == 0  # no gender: kept


def _served(got: dict[str, object]) -> str:
    return json.dumps(got, ensure_ascii=False).lower()


@pytest.mark.parametrize(
    ("said", "language"),
    [
        ("como de tudo, sem restrição", "pt"),
        ("sem restrições", "pt"),
        ("Sem Restrições", "pt"),
        ("SEM RESTRICAO", "pt"),
        ("sem restrições alimentares", "pt"),
        ("eu como de tudo sem restrição nenhuma", "pt"),
        ("sem problemas", "pt"),
        ("não tenho restrições", "pt"),
        ("nenhuma", "pt"),
        ("Nenhuma.", "pt"),
        ("sin problemas", "es"),
        ("como de todo, sin restricciones", "es"),
        ("Sin restricción", "es"),
        ("no tengo ninguna restricción", "es"),
        ("without issues", "en"),
        ("Without any issue", "en"),
        ("no restrictions", "en"),
        ("No dietary restriction", "en"),
        ("I eat everything", "en"),
        ("I don't have any restrictions", "en"),
        ("none", "en"),
    ],
)
def test_saying_there_is_no_restriction_is_no_act_and_nothing_to_ask(
    said: str, language: str
) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert (got["text"], got["hard"], got["soft"], got["ask"]) == ("", [], [], [])
    assert read_sensitive(TYPES, DIET, said).understood
    asked = block(attributes=[attribute("a1", DIET, said)], types=TYPES, asked=("diet",))
    assert asked["ask"] == []  # known: they said there is none


@pytest.mark.parametrize(
    ("said", "language", "line"),
    [
        ("xyzzy sem sentido", "pt", "Pergunte antes: dieta"),
        ("Sem Sentido", "pt", "Pergunte antes: dieta"),
        ("sem kiwi", "pt", "Pergunte antes: dieta"),
        ("SIN SENTIDO", "es", "Pregunte antes: dieta"),
        ("sin zapatos", "es", "Pregunte antes: dieta"),
        ("without sense", "en", "Ask first: diet"),
        # "No restriction but..." is no "no restriction": what follows is asked.
        ("como de tudo menos kiwi", "pt", "Pergunte antes: dieta"),
        ("sem restrições exceto kiwi", "pt", "Pergunte antes: dieta"),
        ("como de tudo, diabetes", "pt", "Pergunte antes: dieta"),
    ],
)
def test_doing_without_what_is_no_food_is_asked_never_a_hard_act(
    said: str, language: str, line: str
) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert (got["text"], got["ask"], got["hard"], got["soft"]) == (line, [DIET], [], [])
    served = _served(got)
    assert not any(w in served for w in ("sentido", "sense", "kiwi", "zapatos", "“")), served


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        ("sem lactose", "pt", ["Obrigatório: sem lactose"]),
        ("Sem Glúten", "pt", ["Obrigatório: sem glúten"]),
        ("sem gluten", "pt", ["Obrigatório: sem glúten"]),
        ("sem amendoins", "pt", ["Obrigatório: sem amendoim"]),
        ("sem amendoim e camarão", "pt", ["Obrigatório: sem amendoim", "Obrigatório: sem camarão"]),
        ("sin huevos", "es", ["Obligatorio: sin huevo"]),
        ("Without Eggs", "en", ["Required: without eggs"]),
        # An allergy names a food no list holds; a "sem" does not.
        ("alergia a kiwi", "pt", ["Obrigatório: sem “kiwi”"]),
        ("como de tudo, mas tenho alergia a amendoim", "pt", ["Obrigatório: sem amendoim"]),
        ("sem restrições e alergia a amendoim", "pt", ["Obrigatório: sem amendoim"]),
    ],
)
def test_doing_without_a_food_is_still_a_hard_act(
    said: str, language: str, lines: list[str]
) -> None:
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert (got["text"].split("\n"), got["ask"]) == (lines, [])


def test_a_food_done_without_beside_words_that_are_none_serves_it_and_asks() -> None:
    got = block(
        attributes=[attribute("a1", DIET, "sem amendoim e sem kiwi")], types=TYPES, language="pt"
    )
    assert got["text"].split("\n") == ["Obrigatório: sem amendoim", "Pergunte antes: dieta"]
    assert "kiwi" not in _served(got)


def test_doing_without_what_a_declared_act_names_is_that_act() -> None:
    """A "sem X" of a food no list holds is an act when the types document declares
    one for it ("kiwi-free"); else the field is asked."""
    diet = {
        "labels": {"pt": "dieta", "en": "diet", "es": "dieta"},
        "role": "attribute",
        "family": "diet",
        "sensitive": True,
        "acts": {
            "kiwi_free": {
                "labels": {"pt": "nada de kiwi", "en": "no kiwi", "es": "nada de kiwi"},
                "said": ["kiwi-free"],
            }
        },
    }
    types = parse_types({"types": {"person": {"fields": {"diet": diet}}}})
    got = block(attributes=[attribute("a1", DIET, "sem kiwi")], types=types, language="pt")
    assert (got["text"], got["ask"]) == ("Obrigatório: nada de kiwi", [])
    assert [row["act"] for row in got["hard"]] == ["kiwi_free"]
    got = block(attributes=[attribute("a1", DIET, "sem manga")], types=types)
    assert (got["hard"], got["ask"]) == ([], [DIET])


def test_a_sensitive_field_the_agent_asks_is_asked_when_nothing_was_said() -> None:
    """Asked and never spoken of, the field is asked by its label (no value of it is
    known); spoken of, it is not; never asked unprompted."""
    got = block(types=TYPES, asked=("diet",), language="pt")
    assert (got["ask"], got["text"], "asked_unknown" in got) == (
        [DIET],
        "Pergunte antes: dieta",
        False,
    )
    assert block(types=TYPES, asked=("Dieta",))["ask"] == [DIET]  # by its label
    assert block(types=TYPES, asked=("person.diet", "diet"))["ask"] == [DIET]  # once
    assert block(types=TYPES)["ask"] == []  # unprompted: never
    said = [attribute("a1", DIET, "celíaca")]
    assert block(attributes=said, types=TYPES, asked=("diet",))["ask"] == []
    unread = [attribute("a1", DIET, "xyzzy sem sentido")]
    assert block(attributes=unread, types=TYPES, asked=("diet",))["ask"] == [DIET]


@pytest.mark.parametrize(
    ("strength", "op", "values", "lines"),
    [
        # Refusing a food is doing without it: hard for must_not (or must ... not_in).
        ("must_not", "in", ("gluten",), ["Required: gluten-free"]),
        ("must", "not_in", ("peanuts", "eggs"),
         ["Required: without peanuts", "Required: without eggs"]),
        ("avoid", "in", ("bread",), ["Would rather avoid: bread"]),
        ("prefer", "ne", ("sugar",), ["Would rather avoid: sugar"]),
        # Refusing a condition is saying it does not hold: no act, nothing to ask.
        ("must", "ne", ("vegan",), []),
        ("must_not", "eq", ("celíaco",), []),
        ("avoid", "in", ("vegan",), []),
        # Refusing what is neither is asked, never echoed.
        ("must_not", "in", ("kiwi",), ["Ask first: diet"]),
        # A double negation wants the value, as everywhere in the block.
        ("must_not", "not_in", ("vegan",), ["Required: vegan products only"]),
    ],
)  # fmt: skip
def test_a_preference_refusing_on_a_sensitive_field_is_read_as_refused(
    strength: str, op: str, values: tuple[str, ...], lines: list[str]
) -> None:
    """Before, the operator and the strength were left out: ``must ne vegan`` served
    "Required: vegan products only", ``must_not in gluten`` asked the diet again."""
    got = block([pref("p1", DIET, op, values, strength)], types=TYPES, language="en")
    assert (got["text"].split("\n") if got["text"] else []) == lines
    assert not any(v in _served(got) for v in ("celíaco", "kiwi"))


@pytest.mark.parametrize(
    ("said", "language", "lines"),
    [
        ("não como glúten", "pt", ["Obrigatório: sem glúten"]),
        ("não posso mais comer glúten nem leite", "pt",
         ["Obrigatório: sem glúten", "Obrigatório: sem leite"]),
        ("não sou celíaco e não como lactose", "pt", ["Obrigatório: sem lactose"]),
        ("no tomo gluten ni lactosa", "es",
         ["Obligatorio: sin gluten", "Obligatorio: sin lactosa"]),
        ("no puedo comer gluten", "es", ["Obligatorio: sin gluten"]),
        ("ya no como pan", "es", ["Obligatorio: sin pan"]),
        ("I can't eat peanuts or eggs", "en",
         ["Required: without peanuts", "Required: without eggs"]),
        ("I never drink milk", "en", ["Required: without milk"]),
        ("I do not eat wheat and I'm allergic to sesame", "en",
         ["Required: without wheat", "Required: without sesame"]),
        # A verb of eating without a food this reading knows: asked, never echoed.
        ("não como carne de porco", "pt", ["Pergunte antes: dieta"]),
        # ...and beside a food it knows: that one acted on, the field asked.
        ("não como carne nem glúten", "pt", ["Obrigatório: sem glúten", "Pergunte antes: dieta"]),
        ("não como glúten nem carne", "pt", ["Obrigatório: sem glúten", "Pergunte antes: dieta"]),
        ("I don't eat peanuts or pork", "en", ["Required: without peanuts", "Ask first: diet"]),
        ("I don't eat much", "en", ["Ask first: diet"]),
        # Negations of a condition stay what they were.
        ("não tenho alergia a amendoim", "pt", []),
        ("não sou celíaco", "pt", []),
    ],
)  # fmt: skip
def test_a_negated_verb_of_eating_is_doing_without(
    said: str, language: str, lines: list[str]
) -> None:
    """ "Não como glúten" is "sem glúten": a hard act, the condition's words never served."""
    got = block(attributes=[attribute("a1", DIET, said)], types=TYPES, language=language)
    assert _lines(said, language) == lines
    assert all(row["relax"] == "never" for row in got["hard"])
    served = set(re.findall(r"\w+", json.dumps(got, ensure_ascii=False).lower()))
    assert not served & {"como", "comer", "eat", "drink", "porco", "pork", "carne", "much"}, served


def test_not_eating_a_food_beside_a_negated_condition_keeps_the_negation() -> None:
    """ "Não sou celíaco e não como lactose": no gluten act, the lactose one."""
    reading = read_sensitive(TYPES, DIET, "não sou celíaca e não como lactose")
    assert [act.labels.pt for _, act in reading.acts] == ["sem lactose"]
    assert "gluten_free" in reading.negated
