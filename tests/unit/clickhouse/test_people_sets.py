"""The people levels without a store: which keys each level takes, exact counts below the
cap, estimates above it, and the SQL pieces the views, the job and erasure share."""

from __future__ import annotations

import random

import pytest

from turnstream.adapters.clickhouse.people_sets import (
    CAP,
    LEVELS,
    count_people,
    level_bounds,
    level_of,
    merged_size,
    people_keys,
    people_state,
    people_type,
    state_type,
    without_keys,
)


def _level_of(key: int) -> int:
    for level in range(LEVELS):
        low, high = level_bounds(level)
        if (low is None or key >= low) and (high is None or key < high):
            return level
    raise AssertionError(f"no level takes {key}")


def _levels(keys: list[int]) -> list[int]:
    """What the capped level sets hold for these keys (each level at most CAP)."""
    sizes = [0] * LEVELS
    for key in set(keys):
        level = _level_of(key)
        sizes[level] = min(CAP, sizes[level] + 1)
    return sizes


def test_the_levels_split_the_key_space_without_gaps_or_overlaps() -> None:
    assert level_bounds(0) == (1 << 62, None)
    assert level_bounds(1) == (1 << 60, 1 << 62)
    assert level_bounds(LEVELS - 1) == (None, 1 << 50)
    for level in range(LEVELS - 1):
        assert level_bounds(level)[0] == level_bounds(level + 1)[1]
    assert [_level_of(k) for k in (0, (1 << 50) - 1, 1 << 50, 1 << 62, (1 << 64) - 1)] == [
        7,
        7,
        6,
        0,
        0,
    ]


@pytest.mark.parametrize("people", [0, 1, 9, 10, 11, 63])
def test_below_the_cap_the_count_is_exact(people: int) -> None:
    rng = random.Random(people)
    keys = [rng.getrandbits(64) for _ in range(people)]
    # Seen many times each: a set counts a person once.
    assert count_people(_levels(keys * 3)) == (people, True)


def test_a_full_level_stands_for_at_least_the_cap() -> None:
    sizes = [CAP, 0, 0, 0, 0, 0, 0, 0]
    people, exact = count_people(sizes)
    assert not exact and people >= CAP


@pytest.mark.parametrize("people", [200, 5_000, 100_000])
def test_above_the_cap_the_estimate_is_within_a_third(people: int) -> None:
    rng = random.Random(people)
    errors = []
    for _ in range(20 if people < 10_000 else 5):
        keys = [rng.getrandbits(64) for _ in range(people)]
        estimate, exact = count_people(_levels(keys))
        assert not exact
        errors.append(abs(estimate - people) / people)
    # Relative error about 1/sqrt(the 16 to 64 keys the estimate counts).
    assert sorted(errors)[len(errors) // 2] < 0.2
    assert max(errors) < 0.6


def test_every_level_full_reads_as_the_last_level_bound() -> None:
    assert count_people([CAP] * LEVELS) == (CAP << (2 * (LEVELS - 1)), False)
    with pytest.raises(ValueError, match="8 level sizes"):
        count_people([1, 2])


def test_the_sql_pieces_name_every_level() -> None:
    level = level_of("person")
    assert level.startswith(f"toUInt8(multiIf(person >= {1 << 62}, 0, person >= {1 << 60}, 1")
    assert level.endswith(f"person >= {1 << 50}, 6, 7))")
    assert without_keys("people", "erased") == "arrayFilter(k -> NOT has(erased, k), people)"
    # Arrays since migration 17; migration 11's states stay as they were.
    assert people_type() == "SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64))"
    assert people_keys("key") == "groupUniqArray(64)(key)"
    assert merged_size("people") == "length(groupUniqArrayArray(64)(people))"
    assert state_type() == "AggregateFunction(groupUniqArray(64), UInt64)"
    assert people_state("key") == "groupUniqArrayState(64)(key)"
