"""Spellings of one size are one value: purchases in ``40`` then ``40.0`` (``40,0``, the
number 40), or ``M`` then ``m`` (`` M ``), infer that size, counted as often as bought,
by its plain spelling; different sizes (M and L, 40 and 41, 40 and 40.5) stay apart, and
a state saved while the spellings were counted apart merges them when read."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.unit.core.constraints.builders import attribute, block
from tests.unit.core.derivation.builders import (
    CONFIG,
    PRIORS,
    TYPES,
    A,
    B,
    C,
    at,
    fold_all,
    outcome,
)
from tests.unit.core.derivation.test_shoe_sizes import EXAMPLE, SHIRT, SNEAKERS, _bought, _derived
from turnstream.core.derivation import (
    Inference,
    ProfileState,
    SizeStats,
    derive,
    inference_id,
    size_key,
)
from turnstream.core.derivation.window import expire

SIZE = "item_variant.size"


def _sizes(*spellings: object) -> list[Inference]:
    """The inferred sizes of one purchase in each of ``spellings``."""
    events = [
        outcome(f"o{n}", (A, B, C)[n % 3], "purchase", size=s, t=n, session=f"s{n}")  # type: ignore[arg-type]
        for n, s in enumerate(spellings)
    ]
    return [i for i in derive(fold_all(events), PRIORS, CONFIG, TYPES) if i.kind == "attribute"]


@pytest.mark.parametrize(
    ("spellings", "value"),
    [
        (("40", "40.0"), "40"),
        (("40", "40,0"), "40"),
        (("40", 40), "40"),
        (("40.0", 40.0), "40"),
        (("40,5", "40.5"), "40.5"),
        (("M", "m"), "M"),
        (("M", " M "), "M"),
        (("xl", "XL"), "XL"),
        (("one size", " one  size"), "one size"),
    ],
)
def test_two_spellings_of_one_size_infer_it(spellings: tuple[object, ...], value: str) -> None:
    [size] = _sizes(*spellings)
    assert (size.attr, size.value, size.confidence) == (SIZE, value, 0.666667)
    assert (size.evidence.events, size.evidence.sessions) == (2, 2)
    assert size.origin_events == ("o0", "o1")


def test_three_spellings_count_as_three_equal_purchases() -> None:
    [mixed] = _sizes("40", "40.0", 40)
    [same] = _sizes("40", "40", "40")
    assert (mixed.value, mixed.confidence) == ("40", 0.75)
    assert (mixed.confidence, mixed.evidence) == (same.confidence, same.evidence)


@pytest.mark.parametrize(
    ("one", "other"),
    [("M", "L"), ("40", "41"), ("40", "40.5"), ("40", "40,5"), ("38-40", "38"), ("00", "0")],
)
def test_different_sizes_stay_apart(one: str, other: str) -> None:
    assert _sizes(one, other) == []  # a tie: neither is inferred
    [size] = _sizes(one, other, other)
    assert (size.value, size.confidence) == (size_key(other), 0.666667)  # 2, not 3


def test_a_size_key_is_the_plain_spelling() -> None:
    keys = {v: size_key(v) for v in ("40", " 40 ", "40,50", "2xl", "gg", "p", "xxs", "00",
                                     "007", "38-40", "1.299", "one size", "Small")}  # fmt: skip
    assert keys == {"40": "40", " 40 ": "40", "40,50": "40.5", "2xl": "2XL", "gg": "GG",
                    "p": "P", "xxs": "XXS", "00": "00", "007": "007", "38-40": "38-40",
                    "1.299": "1.299", "one size": "one size", "Small": "Small"}  # fmt: skip
    assert (size_key(41), size_key(9.5), size_key(40.0)) == ("41", "9.5", "40")
    # Digits a float does not keep stay as written (an EAN sent as a size).
    assert size_key("12345678901234567890") == "12345678901234567890"


def test_a_shoe_size_field_merges_spellings_too() -> None:
    inferred = _derived(
        _bought("o1", SNEAKERS[0], 1, shoe_size="40"),
        _bought("o2", SNEAKERS[1], 2, shoe_size="40,0"),
        _bought("o3", SHIRT, 3, size="m"),
        _bought("o4", SHIRT, 4, size="M "),
    )
    sizes = sorted((i.attr, i.value, i.confidence) for i in inferred if i.kind == "attribute")
    assert sizes == [
        ("item_variant.shoe_size", "40", 0.666667),
        ("item_variant.size", "M", 0.666667),
    ]
    # A stated size spelled otherwise agrees with the inferred one: no conflict, no question.
    said = [attribute("a1", "person.clothing_size", " m")]
    got = block(attributes=said, inferences=inferred, types=EXAMPLE, asked=("clothing_size",))
    assert got["conflicts"] == [] and got["ask"] == []


def _settled(*spellings: str) -> dict:
    """A saved state (as ``to_dict`` wrote it) whose purchases in ``spellings`` aged out
    of the raw window, their sizes kept as the spellings they came in, one count each, as
    a state saved before spellings were one keeps them."""
    events = [outcome(f"o{n}", A, "purchase", size="40", t=n, session=f"s{n}")
              for n, _ in enumerate(spellings)]  # fmt: skip
    state = fold_all(events)
    expire(state, at(len(spellings)), CONFIG)
    data = state.to_dict()
    data["buckets"]["self"]["sizes"][SIZE] = {
        s: SizeStats(1, 1, {f"s{n}"}, [(at(n), f"o{n}")], at(n)).to_dict()
        for n, s in enumerate(spellings)
    }
    return data


def test_a_state_saved_with_spellings_apart_merges_them_when_read() -> None:
    state = ProfileState.from_dict(_settled("40", "40.0", "40,0"))
    assert state.buckets["self"].sizes[SIZE] == {
        "40": SizeStats(3, 3, {"s0", "s1", "s2"}, [(at(n), f"o{n}") for n in range(3)], at(2))
    }
    [size] = derive(state, PRIORS, CONFIG, TYPES)
    assert (size.value, size.confidence, size.origin_events) == ("40", 0.75, ("o0", "o1", "o2"))
    # Written again, the state holds the one size; a new purchase adds to it.
    assert list(state.to_dict()["buckets"]["self"]["sizes"][SIZE]) == ["40"]
    fold_all([outcome("o9", B, "purchase", size=" 40.0", t=9, session="s9")], state=state)
    [size] = derive(state, PRIORS, CONFIG, TYPES)
    assert (size.value, size.evidence.events, size.evidence.sessions) == ("40", 4, 4)


def test_a_saved_letter_size_merges_and_different_sizes_stay_apart() -> None:
    state = ProfileState.from_dict(_settled("m", "M", " M", "L", "l"))
    assert {k: s.net for k, s in state.buckets["self"].sizes[SIZE].items()} == {"M": 3, "L": 2}
    [size] = derive(state, PRIORS, CONFIG, TYPES)
    assert (size.value, size.confidence) == ("M", 0.75)


def test_a_size_deleted_as_spelled_before_stays_deleted() -> None:
    state = fold_all([outcome(f"o{n}", A, "purchase", size="40", t=n) for n in range(2)])
    [now] = derive(state, PRIORS, CONFIG, TYPES)
    before = replace(now, id=inference_id("acme", "p1", "self", "attribute", SIZE, "40.0"),
                     value="40.0", status="deleted")  # fmt: skip
    state.inferences, state.tombstones = {before.id: before}, {before.id}
    assert derive(state, PRIORS, CONFIG, TYPES) == [before]
    # Another size is inferred as before.
    later = [outcome(f"n{n}", B, "purchase", size="41", t=10 + n) for n in range(3)]
    inferred = derive(fold_all(later, state=state), PRIORS, CONFIG, TYPES)
    assert [(i.value, i.status) for i in inferred] == [("40.0", "deleted"), ("41", "active")]
