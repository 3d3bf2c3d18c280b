"""The block docs/signals.md shows in three languages is the block the code builds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.core.constraints.builders import block, inference, pref
from turnstream.core.constraints import Disliked
from turnstream.models.object_types import load_types

ROOT = Path(__file__).resolve().parents[4]
TYPES = load_types(ROOT / "examples" / "types.toml")
COLOR = "item_variant.color"


def _documented() -> list[list[str]]:
    """The three blocks of the fenced example under "The block (what the agent receives)"."""
    doc = (ROOT / "docs" / "signals.md").read_text()
    section = doc.split("## The block (what the agent receives)", 1)[1]
    [example] = re.findall(r"```\n(.*?)```", section.split("\n## ", 1)[0], re.S)
    return [part.split("\n") for part in example.strip().split("\n\n")]


@pytest.mark.parametrize(("index", "language"), [(0, "pt"), (1, "en"), (2, "es")])
def test_the_documented_block_is_the_built_one(index: int, language: str) -> None:
    refs = [f"item_variant:acme:{i}" for i in range(5)]
    said = [
        pref("black", COLOR, "in", ("black",), "must_not", hours_ago=1),
        pref("size", "item_variant.size", "eq", ("M",), "must", hours_ago=2),
        pref("navy", COLOR, "in", ("navy", "beige"), "prefer"),
    ]
    inferred = [
        inference("brisa", "affinity", "item_variant.brand", "brisa", weight=0.9),
        *(inference(f"i{i}", "interest", "item_variant.ref", r) for i, r in enumerate(refs[:4])),
    ]
    shown = {
        refs[0]: {"name": "Tênis Duna"},
        refs[1]: {"brand": "aurora", "color": "red"},
        refs[4]: {"title": "Bota Farol"},
    }
    got = block(said, inferences=inferred, disliked=[Disliked(refs[4])], types=TYPES,
                shown=shown, language=language, asked=("shoe_size",))  # fmt: skip
    assert got["text"].split("\n") == _documented()[index]
