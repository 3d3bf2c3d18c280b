"""The sink's pure guards: high-water filtering and deterministic insert tokens."""

from __future__ import annotations

import random

from turnstream.adapters.clickhouse.writer import (
    filter_new,
    insert_id,
    spans_of,
    token_for,
    token_of,
)


def _row(topic: str, partition: int, offset: int) -> dict:
    return {"_topic": topic, "_partition": partition, "_offset": offset}


def test_rows_at_or_below_the_high_water_mark_are_skipped() -> None:
    rows = [_row("a", 0, o) for o in range(5)] + [_row("a", 1, 3), _row("b", 0, 0)]
    fresh = filter_new(rows, {("a", 0): 2, ("a", 1): 3})
    assert [(r["_topic"], r["_partition"], r["_offset"]) for r in fresh] == [
        ("a", 0, 3),
        ("a", 0, 4),
        ("b", 0, 0),
    ]


def test_tokens_depend_on_table_and_offset_ranges_not_row_order() -> None:
    rows = [_row("a", 0, 5), _row("a", 0, 9), _row("a", 1, 2)]
    assert token_for("turns", rows) == token_for("turns", list(reversed(rows)))
    assert token_for("turns", rows) != token_for("outcomes", rows)
    assert token_for("turns", rows) != token_for("turns", rows[:2])
    assert token_for("turns", rows) != token_for("turns", [*rows[:2], _row("a", 1, 3)])


def test_a_token_rebuilt_from_the_rows_ranges_is_the_insert_token() -> None:
    """The catch-up rebuilds an insert's token from what the raw table holds: the ranges
    per partition and the count, whatever the gaps inside a range."""
    rows = [_row("a", 0, 5), _row("a", 0, 9), _row("a", 1, 2), _row("b", 3, 7)]
    spans = {("a", 0): (5, 9), ("a", 1): (2, 2), ("b", 3): (7, 7)}
    assert token_of("turns", spans, 4) == token_for("turns", rows)
    assert token_of("turns", spans, 5) != token_for("turns", rows)


def test_insert_ids_follow_the_token_and_are_never_zero() -> None:
    token = token_for("turns", [_row("a", 0, 5)])
    assert insert_id(token) == insert_id(token) == int(token.rpartition("|")[2][:16], 16)
    assert insert_id(token) != insert_id(token_for("turns", [_row("a", 0, 6)]))
    assert 0 < insert_id(token) < 2**64
    assert insert_id("turns|1|" + "0" * 32) == 1  # 0 is what rows before migration 22 read


def test_spans_are_each_partitions_lowest_and_highest_offset_in_any_order() -> None:
    """``spans_of`` sorts instead of a min/max per row: the same spans whatever the order
    of the rows, several rows at one offset (an item's turns) and partitions interleaved."""
    rows = [_row(t, p, o) for t in ("a", "b") for p in range(3) for o in range(p, 40, 3 + p)]
    rows += [_row("a", 1, 7), _row("a", 1, 7), _row("b", 2, 0)]
    expected: dict[tuple[str, int], tuple[int, int]] = {}
    for r in rows:
        tp = (r["_topic"], r["_partition"])
        lo, hi = expected.get(tp, (r["_offset"], r["_offset"]))
        expected[tp] = (min(lo, r["_offset"]), max(hi, r["_offset"]))
    shuffled = rows[:]
    random.Random(3).shuffle(shuffled)
    assert spans_of(rows) == spans_of(shuffled) == spans_of(rows[::-1]) == expected
    assert spans_of([_row("a", 0, 4)]) == {("a", 0): (4, 4)}
    assert token_for("turns", shuffled) == token_of("turns", expected, len(rows))
