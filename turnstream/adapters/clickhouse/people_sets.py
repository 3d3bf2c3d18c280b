"""The people of a value and day, as the daily aggregates keep them: capped sets of
person keys in levels, exact below a bound, an estimate above it, and erasable.

A person's key is ``sipHash64(profile_id)`` (64 bits: two people of a value collide with
odds of about 45 in 2^64 among 10 of them). Each key falls in one of :data:`LEVELS`
levels by its leading bits: level ``j`` holds the keys in ``[2^(64-2(j+1)), 2^(64-2j))``,
so a key lands in level ``j`` with probability ``3/4 · 4^-j`` (the last level takes the
rest, ``4^-(LEVELS-1)``). Each level keeps at most :data:`CAP` keys
(``groupUniqArray(CAP)``: a set, so a person seen in many batches counts once; a capped
set merges to ``min(CAP, |union|)`` keys, whatever the order of merges). The level is a
column of the aggregate's key, so a value and day has one row per level its people
fall in (1.3 on average for the long tail of values seen by a few people a day), not
one per level: reading 8 state columns per row made the job 5 times slower.

Since migration 17 the keys are a plain ``Array(UInt64)`` that merges as
``groupUniqArrayArray(CAP)`` (:func:`people_type`), not an aggregate state: the same keys
and the same capped union, but a read takes the array as it is stored, where a state
was rebuilt into a hash set per row first. Merging a space's rows over 90 days took half
the CPU (0.68 to 0.35 s at 10M presented items, 0.92M rows); the job's whole people side
1.33x less at 10M, 1.11x at 30M (rows hold more keys there). Migration 11 wrote states
(:func:`state_type`, :func:`people_state`); they stay here for it.

What that gives, per value over any days merged:

- **Exact below the cap.** When no level is full, the levels hold every person: the
  count is exact. A level fills only when it holds ``CAP`` people, so any value with
  fewer than ``CAP`` people is counted exactly, and a floor of at most ``CAP`` is decided
  exactly: a full level means ``CAP`` people or more.
- **Approximate above it.** With levels below ``j`` full and the levels from ``j`` up
  not, those hold every person whose key is under ``2^(64-2j)``, a sample of rate
  ``4^-j``: the estimate is their count times ``4^j`` (relative error about 1/sqrt(n)
  for the n keys counted, n between ``CAP/4`` and ``CAP`` or so).
- **Bounded.** At most ``LEVELS · CAP`` keys per value and day, whatever the traffic:
  for fewer than ``CAP`` people, one key each.
- **Erasable.** The keys are plain arrays: an erasure rewrites each array that holds an
  erased key without it (:func:`without_keys`). A key can identify a person (the key of
  a known profile id can be looked up), so erasure removes it. Removing a key from a full
  level leaves it one short of full, which then reads as exact: the count can only come
  out lower, never higher, so no value passes the floor on fewer people than it has.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "CAP",
    "LEVELS",
    "count_people",
    "level_bounds",
    "level_of",
    "merged_people",
    "merged_size",
    "people_keys",
    "people_state",
    "people_type",
    "person_key",
    "state_type",
    "without_keys",
]

#: Keys kept per level, per value and day. 64: covers any floor up to 64 people
#: (the floor is 10 by default), and keeps an estimate within ~15-25% above it.
CAP = 64
#: Levels; the last takes keys under 2^50 (1 in 16,384 people): it fills at ~1M people
#: per value and day, past which the estimate reads as that lower bound.
LEVELS = 8


def person_key(profile_id: str) -> str:
    """The SQL of a person's key: ``sipHash64`` of the profile id expression."""
    return f"sipHash64({profile_id})"


def level_bounds(level: int) -> tuple[int | None, int | None]:
    """The keys of a level: ``[low, high)``; ``None`` for an open end."""
    high = None if level == 0 else 1 << (64 - 2 * level)
    low = None if level == LEVELS - 1 else 1 << (64 - 2 * (level + 1))
    return low, high


def level_of(key: str) -> str:
    """The SQL of the level (``UInt8``) of the key expression ``key``."""
    branches = ", ".join(f"{key} >= {level_bounds(j)[0]}, {j}" for j in range(LEVELS - 1))
    return f"toUInt8(multiIf({branches}, {LEVELS - 1}))"


def people_type() -> str:
    """The column type of a level's people: up to :data:`CAP` keys, merged as a set."""
    return f"SimpleAggregateFunction(groupUniqArrayArray({CAP}), Array(UInt64))"


def people_keys(key: str) -> str:
    """The people of a ``SELECT ... GROUP BY`` (by level), from the key ``key``."""
    return f"groupUniqArray({CAP})({key})"


def merged_people(column: str) -> str:
    """The SQL of the people column ``column`` merged over a ``GROUP BY``: the capped
    union of its keys (what the engine keeps when it merges rows)."""
    return f"groupUniqArrayArray({CAP})({column})"


def merged_size(column: str) -> str:
    """The SQL of the keys of the people column ``column`` merged over a ``GROUP BY``."""
    return f"length({merged_people(column)})"


def without_keys(column: str, erased: str) -> str:
    """The SQL of a people column without the keys of the array expression ``erased``."""
    return f"arrayFilter(k -> NOT has({erased}, k), {column})"


def state_type() -> str:
    """Migration 11's column type of a level's people: an aggregate state."""
    return f"AggregateFunction(groupUniqArray({CAP}), UInt64)"


def people_state(key: str) -> str:
    """Migration 11's people of a ``SELECT ... GROUP BY``: a state, from the key ``key``."""
    return f"groupUniqArrayState({CAP})({key})"


def count_people(sizes: Sequence[int]) -> tuple[int, bool]:
    """The distinct people the level sizes (``sizes[j]``: the merged level ``j``) stand
    for, and whether the count is exact.

    Exact when no level is full; otherwise the levels above the highest full one are a
    sample of rate ``4^-j``, scaled up (never below the people the levels hold). A value
    whose every level is full reads as the last level's lower bound.
    """
    if len(sizes) != LEVELS:
        raise ValueError(f"expected {LEVELS} level sizes (got {len(sizes)})")
    full = [j for j, n in enumerate(sizes) if n >= CAP]
    if not full:
        return sum(sizes), True
    above = full[-1] + 1
    scaled = CAP << (2 * (LEVELS - 1)) if above == LEVELS else sum(sizes[above:]) << (2 * above)
    return max(scaled, sum(sizes)), False
