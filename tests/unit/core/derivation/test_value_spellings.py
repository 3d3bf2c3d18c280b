"""Spellings of one value are one value for derivation, as for the block: a colour shown
as ``Black``, ``black`` and `` BLACK `` (or ``preto`` beside ``black``, a types
document's label beside its value) gives one affinity whose evidence is the sum of its
spellings', exactly what one spelling gives, under a spelling the person saw; a state
saved with the spellings apart merges them when derived; different values stay apart;
a deleted affinity stays deleted whichever spelling names it later."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.unit.core.derivation.builders import (
    CONFIG,
    at,
    engaged,
    fold_all,
    item,
    presented,
    seen,
)
from turnstream.core.derivation import Inference, ProfileState, ValueStats, derive
from turnstream.core.derivation.derive import field_counts
from turnstream.core.derivation.spellings import field_values
from turnstream.core.derivation.window import expire
from turnstream.core.value_ids import value_ids
from turnstream.models.object_types import ObjectTypes, parse_types

COLOR = "item_variant.color"
_X = {"pt": "x", "en": "x", "es": "x"}
#: Colour and brand carry a taste; the colour's document declares black and sunset with
#: their words (sunset's are in no built-in list: only the document says them).
TYPES: ObjectTypes = parse_types(
    {
        "types": {
            "item_variant": {
                "fields": {
                    "color": {
                        "labels": _X,
                        "role": "taste",
                        "values": {
                            "black": {"pt": "preto", "en": "black", "es": "negro"},
                            "sunset": {"pt": "pôr do sol", "en": "sunset", "es": "atardecer"},
                        },
                    },
                    "brand": {"labels": _X, "role": "taste"},
                }
            }
        }
    }
)
OTHERS = ("red", "blue", "green", "white", "beige")


def _events(spellings: tuple[str, ...], lists: int = 12, start: int = 0) -> list[Any]:
    """``lists`` lists of six items, all visible and seen, three lists a session, from
    list number ``start``: one item in the person's colour (spelled
    ``spellings[n % len]`` in list ``n``) and one of each other colour; the person clicks
    it and, every third list, the item after it."""
    events: list[Any] = []
    for n in range(start, start + lists):
        eid = f"0190f5a2-7b3c-7def-8127-{n:012d}"
        shift = n % 6
        colours = [spellings[n % len(spellings)], *OTHERS]
        colours = colours[shift:] + colours[:shift]
        refs = [f"item_variant:acme:{n}-{pos}" for pos in range(6)]
        items = [
            item(pos + 1, ref, color=colour, brand=f"b{(n + pos) % 4}")
            for pos, (ref, colour) in enumerate(zip(refs, colours, strict=True))
        ]
        t, session, mine = n * 100, f"s{n // 3}", (6 - shift) % 6
        events += [
            presented(f"p{n}", eid, items, visible_k=6, t=t, session=session),
            seen(f"v{n}", eid, 6, t=t + 1, session=session),
            engaged(f"c{n}", refs[mine], t=t + 2, session=session),
        ]
        if n % 3 == 0:
            events.append(engaged(f"o{n}", refs[(mine + 1) % 6], t=t + 3, session=session))
    return events


def _colour_affinities(state: ProfileState) -> list[Inference]:
    return [
        i
        for i in derive(state, {}, CONFIG, TYPES)
        if i.kind == "affinity" and i.attr == COLOR and i.status == "active"
    ]


def _said(inference: Inference) -> tuple[Any, ...]:
    """What an inference says but its spelling (and the id made of it)."""
    i = inference
    return (i.polarity, i.weight, i.confidence, i.evidence, i.origin_events)


@pytest.mark.parametrize(
    ("spellings", "one"),
    [
        (("Black", "black", " BLACK "), "black"),  # case and white space
        (("Preto", "black", "negro"), "black"),  # pt and es labels beside the en value
        (("Pôr do Sol", "sunset", "por_do_sol"), "sunset"),  # the document's own labels
        (("Café", "cafe", "CAFÉ"), "café"),  # accents, a value no one declares
        (("Navy Blue", "navy blue", "navy-blue"), "navy blue"),  # spaces and separators
    ],
)
def test_one_colour_spelled_several_ways_is_one_affinity(
    spellings: tuple[str, ...], one: str
) -> None:
    [alone] = _colour_affinities(fold_all(_events((one,))))
    assert (alone.value, alone.polarity) == (one, "prefer")
    [merged] = _colour_affinities(fold_all(_events(spellings)))
    # Summed: exactly the evidence of the colour spelled one way, under a spelling seen.
    assert _said(merged) == _said(alone)
    assert merged.evidence.events == alone.evidence.events > len(spellings)
    assert merged.value in spellings


def test_apart_each_spelling_has_too_little_evidence() -> None:
    # The same events with three different colours: none of them is a taste, which is
    # what counting the spellings apart made of one colour.
    assert _colour_affinities(fold_all(_events(("black", "sunset", "navy")))) == []


def test_the_spelling_inferred_is_the_one_shown_most() -> None:
    stats = {
        "black": ValueStats(exposure_micro=1_000_000, signal_micro=3_000_000, events=3),
        "Black": ValueStats(exposure_micro=3_000_000, signal_micro=1_000_000, events=1),
        "preto": ValueStats(exposure_micro=2_000_000),
        "red": ValueStats(exposure_micro=5_000_000),
    }
    found = field_values(COLOR, stats, value_ids(TYPES))
    assert found.names == {"black": "Black", "Black": "Black", "preto": "Black", "red": "red"}
    assert found.spellings == {"Black": ("Black", "black", "preto"), "red": ("red",)}
    assert (found.stats["Black"].exposure_micro, found.stats["Black"].events) == (6_000_000, 4)
    assert found.stats["red"] is stats["red"]
    # A spelling the state does not hold is named as what it names, else as it is.
    assert (found.name("NEGRO"), found.name("Red"), found.name("mauve")) == (
        "Black",
        "red",
        "mauve",
    )


def test_a_state_saved_with_two_spellings_merges_them_when_derived() -> None:
    state = fold_all(_events(("Black", "black")))
    # Part of the evidence settled into counts (the raw window), the rest still raw.
    expire(state, at(600), CONFIG)
    saved = json.loads(json.dumps(state.to_dict()))
    held = saved["buckets"]["self"]["values"][COLOR]
    assert {"Black", "black"} <= set(held)  # kept as shown, by either fold
    loaded = ProfileState.from_dict(saved)
    [merged] = _colour_affinities(loaded)
    once = fold_all(_events(("black",)))
    expire(once, at(600), CONFIG)
    [alone] = _colour_affinities(once)
    assert _said(merged) == _said(alone)


def test_a_deleted_affinity_stays_deleted_under_another_spelling() -> None:
    state = fold_all(_events(("Black",)))
    [found] = _colour_affinities(state)
    state.tombstones.add(found.id)
    state.inferences[found.id] = replace(found, status="deleted")
    # Later lists spell it ``black``, now the spelling shown most.
    later = _events(("black",), lists=24, start=12)
    fold_all(later, state=state)
    assert _colour_affinities(state) == []
    assert [(i.value, i.status) for i in derive(state, {}, CONFIG, TYPES)
            if i.attr == COLOR] == [("Black", "deleted")]  # fmt: skip


def test_a_value_of_several_spellings_takes_the_mean_of_their_priors() -> None:
    alone = field_counts(
        fold_all(_events(("black",))), {(COLOR, "black"): 0.3, (COLOR, "red"): 0.6}, CONFIG, TYPES
    )[COLOR]
    priors = {(COLOR, "Black"): 0.2, (COLOR, "black"): 0.4, (COLOR, "red"): 0.75}
    merged = field_counts(fold_all(_events(("Black", "black"))), priors, CONFIG, TYPES)[COLOR]
    assert set(alone) - {"black"} == set(merged) - {"Black"} == set(OTHERS)
    # 0.3 over the field's mean (0.45) in both: one value, one prior, as the space's.
    assert merged["Black"] == pytest.approx(alone["black"])
