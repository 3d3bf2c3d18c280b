"""No object on both sides, no line twice (issue 36): over many generated people whose
objects often read alike (few colours, brands and prices), the block's text never names
one object both as an interest and as a no-interest, never gives two objects the same
words, and never repeats a line, in pt, en and es."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.constraints.builders import block, inference
from turnstream.core.constraints import Disliked, Presented
from turnstream.core.constraints.block import object_names
from turnstream.core.constraints.text import LANGUAGES
from turnstream.models.object_types import load_types

TYPES = load_types(Path(__file__).resolve().parents[4] / "examples" / "types.toml")
REF = re.compile(r"[a-z_]+:[A-Za-z0-9_-]+:[A-Za-z0-9_.-]+")
PEOPLE = 300


def _person(rng: random.Random) -> dict[str, Any]:
    """A person's objects (alike on purpose) and what the engine inferred about them."""
    n = rng.randint(2, 9)
    shown: dict[str, dict[str, Any]] = {}
    for i in range(n):
        values: dict[str, Any] = {"color": rng.choice(["red", "navy"])}
        if rng.random() < 0.5:
            values["brand"] = rng.choice(["aurora", "nimbus"])
        if rng.random() < 0.7:
            values["price_sale"] = rng.choice([199.9, 249.9])
        if rng.random() < 0.1:
            values["name"] = rng.choice(["Tênis Leve", "Bota"])
        shown[f"item_variant:acme:{i}"] = values
    refs = list(shown)
    infs = []
    for j, ref in enumerate(refs):
        kind = rng.choice(["interest", "implicit_negative", None])
        if kind is not None:
            polarity = "prefer" if kind == "interest" else "avoid"
            infs.append(
                inference(f"i{j}", kind, "item_variant.ref", ref, polarity=polarity,
                          weight=rng.random())
            )  # fmt: skip
    if rng.random() < 0.2:  # the engine's two kinds on one object
        ref = rng.choice(refs)
        infs.append(inference("both", "implicit_negative", "item_variant.ref", ref,
                              polarity="avoid"))  # fmt: skip
        infs.append(inference("both2", "interest", "item_variant.ref", ref))
    disliked = [Disliked(r) for r in refs if rng.random() < 0.15]
    return {"inferences": infs, "disliked": disliked, "shown": shown}


def _named(line: str, lead: str, more: str) -> list[str]:
    """The names a line gives (top-level commas; the count at the end dropped)."""
    rest = line.removeprefix(lead).strip()
    rest = re.sub(more.replace("{n}", r"\d+").replace("e mais", r"e mais") + "$", "", rest)
    names, depth, current = [], 0, ""
    for ch in rest:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            names.append(current.strip())
            current = ""
        else:
            current += ch
    names.append(current.strip())
    return [n for n in names if n and not re.fullmatch(r"\d+ \w+|1 \w+", n)]


@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_no_object_on_both_sides_and_no_line_twice(language: str) -> None:
    words = LANGUAGES[language]
    rng = random.Random(36)
    both_sides = alike = 0
    for _ in range(PEOPLE):
        person = _person(rng)
        got = block(types=TYPES, language=language, **person)
        text = got["text"]
        lines = text.split("\n")
        assert len(lines) == len(set(lines)), text
        assert not REF.search(text), text
        sides = {}
        for kind in ("interest", "implicit_negative"):
            line = next((x for x in lines if x.startswith(words[kind])), "")
            sides[kind] = set(_named(line, words[kind], " " + words["more"])) if line else set()
        assert not sides["interest"] & sides["implicit_negative"], text
        kinds = {r["values"][0]: r["kind"] for r in got["soft"]}
        refs_of = {}
        for r in got["soft"]:
            refs_of.setdefault(r["values"][0], set()).add(r["kind"])
        assert all(len(k) == 1 for k in refs_of.values()), got["soft"]
        names = object_names(kinds, person["shown"], TYPES, language)
        assert len(set(names.values())) == len(names)  # no two objects share words
        both_sides += bool(sides["interest"] and sides["implicit_negative"])
        alike += len(names) < len(kinds)
    # The generator does what it is for: both sides named often, some objects alike.
    assert both_sides > PEOPLE // 5
    assert alike > 0


def test_two_objects_alike_are_told_apart_by_what_differs() -> None:
    shown = {
        "item_variant:acme:1": {"color": "red", "price_sale": 199.9},
        "item_variant:acme:2": {"color": "red", "price_sale": 249.9},
        "item_variant:acme:3": {"color": "red", "price_sale": 249.9},
    }
    names = object_names(shown, shown, TYPES, "pt")
    assert names == {"item_variant:acme:1": "variante (vermelho, preço 199,90)"}
    got = block(
        inferences=[
            inference("a", "interest", "item_variant.ref", "item_variant:acme:1"),
            inference("b", "implicit_negative", "item_variant.ref", "item_variant:acme:2",
                      polarity="avoid"),
            inference("c", "implicit_negative", "item_variant.ref", "item_variant:acme:3",
                      polarity="avoid"),
        ],
        types=TYPES, language="pt", shown=shown,
    )  # fmt: skip
    assert got["text"].split("\n") == [
        "Demonstrou interesse em (inferido): variante (vermelho, preço 199,90)",
        "Não demonstrou interesse em (inferido): 2 itens",
    ]


def test_the_fewest_fields_tell_them_apart_the_size_before_the_price() -> None:
    shown = {
        "item_variant:acme:1": {"color": "navy", "size": "XS", "price_sale": 69.9, "sku": "a"},
        "item_variant:acme:2": {"color": "navy", "size": "M", "price_sale": 379.9, "sku": "b"},
    }
    assert object_names(shown, shown, TYPES, "en") == {
        "item_variant:acme:1": "item (navy, size XS)",
        "item_variant:acme:2": "item (navy, size M)",
    }


def test_a_price_tells_alike_objects_apart_only_as_a_last_resort() -> None:
    """Two red interests differing in list price and stock: the stock tells them apart,
    not the price; a price only when nothing else does."""
    shown = {
        "item_variant:acme:1": {"color": "red", "price_list": 299.9, "stock": 4},
        "item_variant:acme:2": {"color": "red", "price_list": 349.9, "stock": 9},
    }
    assert object_names(shown, shown, TYPES, "pt") == {
        "item_variant:acme:1": "variante (vermelho, estoque 4)",
        "item_variant:acme:2": "variante (vermelho, estoque 9)",
    }
    for ref in shown:
        del shown[ref]["stock"]
    assert object_names(shown, shown, TYPES, "pt") == {
        "item_variant:acme:1": "variante (vermelho, preço de tabela 299,90)",
        "item_variant:acme:2": "variante (vermelho, preço de tabela 349,90)",
    }


def test_an_object_reads_longer_only_beside_a_look_alike() -> None:
    """The same person asked twice: with the state read now of a navy variant, the red
    interest keeps its short name; with that of another red variant (a look-alike named
    in the same block), both get the field that tells them apart, the changed one by its
    price as shown (no name in the block fits both)."""
    shown = {
        "item_variant:acme:1": {"color": "red", "price_sale": 199.9},
        "item_variant:acme:2": {"color": "red", "price_sale": 249.9},
        "item_variant:acme:3": {"color": "navy", "price_sale": 99.9},
    }
    liked = [inference("i", "interest", "item_variant.ref", "item_variant:acme:1")]
    seen = [Presented("item_variant:acme:2", 1), Presented("item_variant:acme:3", 1)]
    alone = block(inferences=liked, presented=seen, shown=shown, types=TYPES, language="pt")
    navy = block(inferences=liked, presented=seen, shown=shown, types=TYPES, language="pt",
                 current={"item_variant:acme:3": {"price_sale": 89.9}})  # fmt: skip
    red = block(inferences=liked, presented=seen, shown=shown, types=TYPES, language="pt",
                current={"item_variant:acme:2": {"price_sale": 229.9}})  # fmt: skip
    line = "Demonstrou interesse em (inferido): variante (vermelho)"
    assert alone["text"] == line
    assert navy["text"].split("\n") == [
        line,
        "Mudou desde que viu: variante (azul-marinho): preço caiu de 99,90 para 89,90",
    ]
    assert red["text"].split("\n") == [
        "Demonstrou interesse em (inferido): variante (vermelho, preço 199,90)",
        "Mudou desde que viu: variante (vermelho, preço 249,90): preço caiu de 249,90 para 229,90",
    ]


def test_a_person_shown_many_look_alikes_gets_short_names() -> None:
    """Names are told apart among the block's objects only: 200 red variants shown, one
    liked, reads as a red variant, not as every field that tells it from the rest."""
    shown = {
        f"item_variant:acme:{i}": {"color": "red", "size": "PMG"[i % 3], "price_sale": 50 + i}
        for i in range(200)
    }
    liked = [inference("i", "interest", "item_variant.ref", "item_variant:acme:7")]
    seen = [Presented(ref, 1) for ref in shown]
    got = block(inferences=liked, presented=seen, shown=shown, types=TYPES, language="pt")
    assert got["text"] == "Demonstrou interesse em (inferido): variante (vermelho)"
