"""A table's rows as a block of columns (what the prepare process hands back): inserted as
the same columns the dict rows give, masked by source, and back to dicts where the rare
paths (a refusal's bisection, a restart's high-water marks, forgotten rows) need them."""

from __future__ import annotations

import pickle
from datetime import UTC, datetime, timedelta
from typing import Any

from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.writer import RawSink, insert_columns, insert_id, token_for
from turnstream.core.rows import Block, as_dicts, spans_of

AT = datetime(2026, 11, 1, 10, 0, 0, 123456, tzinfo=UTC)


def _rows() -> list[dict[str, Any]]:
    return [
        {
            "dedup_key": f"k{o}",
            "space_id": "acme",
            "kept_from": AT,
            "ingested_at": AT + timedelta(milliseconds=o // 3),
            "_topic": "t",
            "_partition": p,
            "_offset": o,
        }
        for p in (0, 1)
        for o in range(p, 12, 2)
    ]


class _Recording:
    """A store that records what it is asked to insert."""

    def __init__(self) -> None:
        self.inserts: list[tuple[str, list[list[Any]], str]] = []

    def insert(self, table: str, data: Any, columns: Any, token: str = "", **_: Any) -> None:
        if table != "sink_marks":
            self.inserts.append((table, data, token))


def _sink(marks: dict[tuple[str, int], int] | None = None) -> tuple[RawSink, _Recording]:
    store = _Recording()
    sink = RawSink(store)  # type: ignore[arg-type]
    for table in RAW_TABLES:
        sink._high_water[table] = dict(marks or {})
    return sink, store


def test_a_block_is_the_columns_the_dict_rows_insert() -> None:
    rows = _rows()
    block = Block.of("idempotency_keys", rows)
    ident = insert_id(token_for("idempotency_keys", rows))
    assert [*block.columns, [ident] * len(rows)] == insert_columns("idempotency_keys", rows, ident)
    assert block.spans == spans_of(rows) and len(block) == len(rows)
    # As dicts again (times in ticks), they insert the same columns.
    assert insert_columns("idempotency_keys", block.dicts(), ident) == [
        *block.columns,
        [ident] * len(rows),
    ]
    assert as_dicts(rows) is rows
    again = pickle.loads(pickle.dumps(block))
    assert (again.table, again.columns, again.spans) == (block.table, block.columns, block.spans)


def test_a_block_without_some_sources_drops_exactly_their_rows() -> None:
    rows = _rows()
    block = Block.of("idempotency_keys", rows)
    assert block.without(set()) is block  # nothing dropped: the block as it is, no copy
    assert block.without({("t", 0, 99), ("u", 0, 0)}) is block
    dropped = {("t", 0, 0), ("t", 1, 11), ("t", 1, 5)}
    left = block.without(dropped)
    assert left is not None
    kept = [r for r in rows if (r["_topic"], r["_partition"], r["_offset"]) not in dropped]
    expected = Block.of("idempotency_keys", kept)
    assert (left.columns, left.spans) == (expected.columns, expected.spans)
    assert left.spans[("t", 0)] == (2, 10) and left.spans[("t", 1)] == (1, 9)
    everything = {(r["_topic"], r["_partition"], r["_offset"]) for r in rows}
    assert block.without(everything) is None


def test_the_sink_writes_a_block_as_it_writes_its_rows() -> None:
    rows = _rows()
    for marks in ({}, {("t", 0): 4}):  # all above the marks; some at or below them
        by_block, block_store = _sink(marks)
        by_dicts, dict_store = _sink(marks)
        by_dicts.life = by_block.life  # one life: the same tokens
        written = by_block.write({"idempotency_keys": Block.of("idempotency_keys", rows)})
        assert written == by_dicts.write({"idempotency_keys": rows})
        assert block_store.inserts == dict_store.inserts
        assert written["idempotency_keys"] == (12 if not marks else 9)


def test_two_blocks_joined_are_the_block_of_their_rows_in_order() -> None:
    rows = _rows()
    # Cut where partition 1's offsets are split across the two (its span is the join's).
    first, second = rows[:8], rows[8:]
    joined = Block.of("idempotency_keys", first).joined(Block.of("idempotency_keys", second))
    whole = Block.of("idempotency_keys", rows)
    assert joined.columns == whole.columns
    assert joined.spans == whole.spans == {("t", 0): (0, 10), ("t", 1): (1, 11)}
    assert joined.table == "idempotency_keys" and len(joined) == len(rows)
    # A partition only in the second block keeps its own span.
    other = [dict(r, _partition=7) for r in rows[:2]]
    with_other = Block.of("idempotency_keys", rows).joined(Block.of("idempotency_keys", other))
    assert with_other.spans[("t", 7)] == (0, 2)
    assert with_other.spans[("t", 0)] == whole.spans[("t", 0)]
