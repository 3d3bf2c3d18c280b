"""The block as a colleague writes it (issue 36, point 1): objects by name, never a raw
ref, a few objects at most, nothing both excluded and interesting, ``exclude`` said,
attributes once, a stated entry absorbing an inferred one, values in the space's
language, and questions built from what is asked and unknown and from conflicts."""

from __future__ import annotations

import re

import pytest

from tests.unit.core.constraints.builders import (
    COLOR,
    SIZE,
    attribute,
    block,
    inference,
    pref,
)
from tests.unit.core.constraints.builders import TYPES as SIZED
from turnstream.core.constraints import Disliked
from turnstream.models.object_types import parse_types

REF = re.compile(r"[a-z_]+:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+")


def _labels(pt: str, en: str, es: str) -> dict[str, str]:
    return {"pt": pt, "en": en, "es": es}


TYPES = parse_types(
    {
        "types": {
            "item_variant": {
                "labels": _labels("variante", "item", "variante"),
                "fields": {
                    "color": {
                        "labels": _labels("cor", "colour", "color"),
                        "role": "taste",
                        "values": {
                            "black": _labels("preto", "black", "negro"),
                            "navy": _labels("azul-marinho", "navy", "azul marino"),
                        },
                    },
                    "brand": {"labels": _labels("marca", "brand", "marca"), "role": "taste"},
                    "size": {
                        "labels": _labels("tamanho", "size", "talla"),
                        "role": "attribute",
                        "family": "size",
                    },
                },
            },
            "person": {
                "labels": _labels("pessoa", "person", "persona"),
                "fields": {
                    "shoe_size": {
                        "labels": _labels("número do calçado", "shoe size", "número"),
                        "role": "attribute",
                        "family": "shoe_size",
                    }
                },
            },
        }
    }
)


def _interests(n: int) -> list:
    return [
        inference(f"i{i}", "interest", "item_variant.ref", f"item_variant:acme:{i}", weight=0.5)
        for i in range(n)
    ]


def test_objects_by_name_a_few_at_most_and_never_a_raw_ref() -> None:
    shown = {f"item_variant:acme:{i}": {"name": f"Tênis {i}"} for i in range(2)}
    shown["item_variant:acme:2"] = {"color": "navy", "brand": "aurora"}
    got = block(inferences=_interests(7), types=TYPES, language="pt", shown=shown)
    [line] = [x for x in got["text"].split("\n") if x.startswith("Demonstrou")]
    assert line == (
        "Demonstrou interesse em (inferido): “Tênis 0”, “Tênis 1”, "
        "variante (azul-marinho, “aurora”) e mais 4"
    )
    assert not REF.search(got["text"])
    assert {r["values"][0] for r in got["soft"]} <= {f"item_variant:acme:{i}" for i in range(7)}


def test_an_object_with_nothing_to_name_it_is_counted_never_written_as_a_ref() -> None:
    for language, counted in (("en", "3 items"), ("pt", "3 itens"), ("es", "3 artículos")):
        text = block(inferences=_interests(3), types=TYPES, language=language)["text"]
        assert text.endswith(counted) and not REF.search(text)


def test_a_disliked_object_is_excluded_said_and_never_an_interest() -> None:
    disliked = [Disliked("item_variant:acme:1"), Disliked("item_variant:acme:9")]
    shown = {"item_variant:acme:1": {"title": "Bota Duna"}}
    got = block(
        inferences=_interests(3), disliked=disliked, types=TYPES, language="pt", shown=shown
    )
    assert got["exclude"] == ["item_variant:acme:1", "item_variant:acme:9"]
    assert "item_variant:acme:1" not in {r["values"][0] for r in got["soft"]}
    assert "Não mostrar de novo: “Bota Duna” e mais 1" in got["text"].split("\n")
    assert "Bota Duna" not in next(x for x in got["text"].split("\n") if "interesse" in x)
    en = block(disliked=disliked, types=TYPES, language="en")["text"]
    assert en == "Do not show again: 2 items"


def test_an_object_that_breaks_what_the_person_requires_is_no_interest() -> None:
    """Clicked in black, then "not black": a black object is not offered as an interest
    (the hard rule and the interest would contradict each other); an object of another
    colour, or one whose colour was not shown, stays; a preferred colour rules out
    nothing."""
    shown = {
        "item_variant:acme:0": {"color": "black", "name": "Bota Noite"},
        "item_variant:acme:1": {"color": "navy", "name": "Bota Mar"},
        "item_variant:acme:2": {"name": "Bota Sem Cor"},
    }
    not_black = pref("p", COLOR, "in", ("black",), "must_not")
    got = block([not_black], inferences=_interests(3), types=TYPES, language="pt", shown=shown)
    assert {r["values"][0] for r in got["soft"]} == {"item_variant:acme:1", "item_variant:acme:2"}
    assert "Bota Noite" not in got["text"]
    assert "Obrigatório: cor que não seja preto" in got["text"].split("\n")
    only_navy = pref("q", COLOR, "eq", ("navy",), "must")
    kept = block([only_navy], inferences=_interests(3), types=TYPES, language="pt", shown=shown)
    assert {r["values"][0] for r in kept["soft"] if r["kind"] == "interest"} == {
        "item_variant:acme:1",
        "item_variant:acme:2",
    }
    soft = pref("r", COLOR, "in", ("navy",), "prefer")
    loose = block([soft], inferences=_interests(3), types=TYPES, language="pt", shown=shown)
    assert len([r for r in loose["soft"] if r["kind"] == "interest"]) == 3


def test_a_stated_entry_absorbs_an_inferred_one_on_the_same_value() -> None:
    said = [pref("p1", COLOR, "in", ("navy", "beige"), "prefer")]
    navy = inference("a1", "affinity", COLOR, "navy", weight=0.9)
    red = inference("a2", "affinity", COLOR, "red", weight=0.9)
    got = block(said, inferences=[navy, red], types=TYPES, language="pt")
    assert [r["id"] for r in got["soft"]] == ["p1", "a2"]
    assert got["text"].split("\n") == [
        "Prefere: cor azul-marinho ou bege",
        "Parece gostar de (inferido): cor vermelho",
    ]


def test_values_in_the_spaces_language_with_a_fallback() -> None:
    said = [pref("p1", COLOR, "not_in", ("black", "ochre"), "must_not")]
    assert block(said, types=TYPES, language="pt")["text"] == (
        "Obrigatório: cor que não seja preto nem “ochre”"
    )
    assert block(said, types=TYPES, language="es")["text"] == (
        "Obligatorio: color que no sea negro ni “ochre”"
    )


def test_an_attribute_said_twice_is_one_line() -> None:
    twice = [
        attribute("s1", "person.shoe_size", 9, system="US", hours_ago=1),
        attribute("s2", "person.shoe_size", 9, system="US", hours_ago=2),
    ]
    got = block(attributes=twice, types=TYPES, language="pt")
    assert [r["id"] for r in got["attributes"]] == ["s1"]
    assert got["text"] == "A pessoa: número do calçado 9 (US)"


def test_one_size_said_on_two_fields_of_its_family_is_one_line() -> None:
    """Before, ``person.clothing_size`` M and ``person.size`` M were two lines ("A
    pessoa: tamanho de roupa M", "A pessoa: tamanho M"): one fact, said twice. The
    newest stands; another value, or another system, is no repetition."""
    twice = [
        attribute("c", "person.clothing_size", "M", hours_ago=1),
        attribute("s", "person.size", " m", hours_ago=3),
    ]
    got = block(attributes=twice, types=SIZED, language="pt")
    assert ([r["id"] for r in got["attributes"]], got["text"]) == (
        ["c"],
        "A pessoa: tamanho de roupa M",
    )
    other = [
        attribute("c", "person.clothing_size", "M", system="BR", hours_ago=1),
        attribute("s", "person.size", "M", system="US", hours_ago=3),
    ]
    assert len(block(attributes=other, types=SIZED)["attributes"]) == 2


def test_ask_the_asked_fields_no_entry_knows_and_the_fields_of_a_conflict() -> None:
    got = block(types=TYPES, language="pt", asked=("size",))
    assert got["ask"] == ["item_variant.size"]
    assert got["text"] == "Pergunte antes: tamanho"
    known = [attribute("s1", "item_variant.size", "M")]
    assert block(attributes=known, types=TYPES, language="pt", asked=("size",))["ask"] == []
    clash = [
        pref("p1", COLOR, "in", ("black",), "must", hours_ago=3),
        pref("p2", COLOR, "not_in", ("black",), "must_not", hours_ago=1),
    ]
    got = block(clash, types=TYPES, language="en")
    assert got["ask"] == [COLOR]
    assert got["text"].split("\n")[-1] == "Ask first: colour (said other than black; earlier black)"


def test_no_line_is_said_twice() -> None:
    said = [
        pref("p1", COLOR, "in", ("navy",), "prefer", hours_ago=1),
        pref("p2", COLOR, "eq", ("navy",), "prefer", hours_ago=2),
    ]
    text = block(said, types=TYPES, language="pt")["text"].split("\n")
    assert len(text) == len(set(text))


def test_said_absorbs_inferred_across_a_family_and_for_a_refusal() -> None:
    """A size said on a sibling field, or required, absorbs the same size inferred
    (one line, not "tamanho de roupa M" and "tamanho M (inferido)"); a ``must_not``
    ``not_in`` absorbs an inferred avoid of its value."""
    bought_m = [inference("m", "attribute", SIZE, "M", polarity=None)]
    clothing = [attribute("a", "person.clothing_size", "M", system="BR")]
    got = block(attributes=clothing, inferences=bought_m, types=SIZED, language="pt",
                asked=("size",))  # fmt: skip
    assert got["text"] == "A pessoa: tamanho de roupa M (BR)"
    for strength in ("must", "prefer"):
        said = [pref("h", SIZE, "in", ("M", "L"), strength)]
        got = block(said, inferences=bought_m, types=SIZED, asked=("size",))
        assert got["attributes"] == [] and "inferred" not in got["text"]
    # Another value, or another system, is no repeat: it stays (and the sizes clash).
    eu = [attribute("a", "person.clothing_size", "M", system="EU")]
    got = block(attributes=eu, inferences=bought_m, types=SIZED, asked=("size",))
    assert [r["id"] for r in got["attributes"]] == ["m", "a"]
    refuse = [pref("n", COLOR, "not_in", ("black",), "must_not")]
    skip = inference("b", "affinity", COLOR, "black", polarity="avoid")
    assert block(refuse, inferences=[skip], types=TYPES, language="pt")["text"] == (
        "Obrigatório: cor que não seja preto"
    )


def test_a_statement_on_an_object_field_names_the_object_never_its_ref() -> None:
    """A space without types takes a preference on ``item_variant.ref``: its line, and
    the question of its conflict with an inferred interest, name the object."""
    named, unnamed = "item_variant:acme:1", "item_variant:acme:2"
    said = [pref("n", "item_variant.ref", "in", (named, unnamed), "must_not")]
    seen = [inference("i", "interest", "item_variant.ref", named)]
    got = block(said, inferences=seen, types=TYPES, language="pt",
                shown={named: {"name": "Tênis Duna"}})  # fmt: skip
    assert not REF.search(got["text"]), got["text"]
    assert got["text"].split("\n")[0] == "Obrigatório: variante que não seja “Tênis Duna” e mais 1"


def test_a_size_required_and_said_is_said_once_by_the_requirement() -> None:
    """``Obrigatório: tamanho M`` and "A pessoa: tamanho M" (said on the field or on a
    sibling of its family in the same system) are one line, the hard one; the JSON keeps
    both. Another value, another system or a requirement of several sizes stays."""
    required = [pref("h", SIZE, "eq", ("M",), "must")]
    for said in (
        attribute("a", SIZE, "M"),
        attribute("a", "person.clothing_size", "M", system="BR"),
        attribute("a", "person.clothing_size", "M"),
    ):
        got = block(required, attributes=[said], types=SIZED, language="pt")
        assert got["text"] == "Obrigatório: tamanho M", said
        assert [r["id"] for r in got["attributes"]] == ["a"]
    for said in (
        attribute("a", "person.clothing_size", "M", system="EU"),
        attribute("a", SIZE, "L"),
    ):
        got = block(required, attributes=[said], types=SIZED, language="pt")
        assert len(got["text"].split("\n")) == 2, said
    several = [pref("h", SIZE, "in", ("M", "L"), "must")]
    got = block(several, attributes=[attribute("a", SIZE, "M")], types=SIZED, language="pt")
    assert got["text"].split("\n") == ["Obrigatório: tamanho M ou L", "A pessoa: tamanho M"]


@pytest.mark.parametrize(
    ("said", "kept", "asked"),
    [
        # A preference no value meeting the requirement can meet: the newest stands.
        ([pref("h", COLOR, "in", ("blue",), "must", hours_ago=3),
          pref("s", COLOR, "in", ("red",), "prefer", hours_ago=1)],
         "s", "Ask first: colour (said red; earlier blue)"),
        ([pref("h", COLOR, "in", ("blue",), "must", hours_ago=1),
          pref("s", COLOR, "in", ("red",), "prefer", hours_ago=3)],
         "h", "Ask first: colour (said blue; earlier red)"),
        ([pref("h", "item_variant.price_sale", "lte", (100,), "must", hours_ago=3),
          pref("s", "item_variant.price_sale", "gte", (200,), "prefer", hours_ago=1)],
         "s", "Ask first: price (said from 200; earlier up to 100)"),
        # An avoid of the only values a requirement allows.
        ([pref("h", COLOR, "in", ("blue",), "must", hours_ago=3),
          pref("s", COLOR, "in", ("blue",), "avoid", hours_ago=1)],
         "s", "Ask first: colour (said other than blue; earlier blue)"),
    ],
)  # fmt: skip
def test_a_stated_preference_a_requirement_rules_out_is_a_conflict(
    said: list, kept: str, asked: str
) -> None:
    """Before, "Required: colour blue" and "Prefers: colour red" (or "price up to 100"
    and "prefers from 200") stood side by side, no conflict, nothing asked: the agent was
    told to want what it must never show."""
    got = block(said, types=SIZED, language="en")
    [conflict] = got["conflicts"]
    assert (conflict["kept"], conflict["reason"]) == (kept, "current_utterance")
    assert got["text"].split("\n")[-1] == asked
    assert (
        sum(line.startswith(("Required", "Prefers", "Would")) for line in got["text"].split("\n"))
        == 1
    )


def test_a_stated_preference_a_requirement_allows_stands_beside_it() -> None:
    said = [
        pref("h", COLOR, "in", ("blue", "red"), "must", hours_ago=3),
        pref("s", COLOR, "in", ("red",), "prefer", hours_ago=1),
        pref("p", "item_variant.price_sale", "lte", (500,), "must", hours_ago=3),
        pref("q", "item_variant.price_sale", "gte", (100,), "prefer", hours_ago=1),
    ]
    got = block(said, types=SIZED, language="en")
    assert (got["conflicts"], got["ask"]) == ([], [])
