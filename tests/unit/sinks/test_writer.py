"""The sink's pure guards: high-water filtering and deterministic insert tokens."""

from __future__ import annotations

from turnstream.sinks.writer import filter_new, token_for


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
