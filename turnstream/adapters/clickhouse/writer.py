"""The raw-table sink: exact under redelivery, restarts and differently cut batches.

Two guards make a write idempotent:

* every insert carries a deduplication token built from its rows' topic, partition and
  offset range, and from the sink's life, so retrying the same batch in the same process
  is dropped by ClickHouse itself;
* each table remembers, per source partition, the highest offset it holds (read back
  from the table after a start, a rebalance or a failed store call), and rows at or
  below it are skipped, so a batch cut differently after a crash never writes a row twice.

An insert of one batch into one table is one part (raw tables are not partitioned), so
it lands whole or not at all, which is what makes the high-water mark exact.

The raw part and the parts of the table's materialized views are committed one after
the other, not together: a crash (or a view's failure) in between leaves the raw table
holding the insert and a summary without it, and the high-water mark would then skip
it for ever. So every raw row carries its insert's id (``_insert``, from the token),
and ``sink_marks`` records, per table and source partition, the highest offset whose
insert returned, its views included (migration 22). When the marks are read again
(a start, a rebalance, a failed store call), the summaries of a table holding rows above
its confirmed marks are repaired: what those rows can have touched (the summaries' days,
or for ``stated`` its rows) is replaced by its recomputation from the raw table
(``adapters/clickhouse/summaries.py``), and only then are the marks confirmed. Nothing is written
twice on the strength of a deduplication log, which a SIGKILL can lose (issue 35: a
summary pushed again counted a batch twice; ``idempotency_keys`` once held one twice).

Nor is anything dropped on the strength of one: ClickHouse logs an insert's token before
it commits the insert's part, so a SIGKILL in between leaves the token in the table's
deduplication log and the rows nowhere (chDB 26.9: one token so among 50 SIGKILLs of a
loop of one-row inserts). The restarted process's insert of the same rows with that
token would be taken for a repeat and dropped without an error; a refused message's
dead letter, whose insert is one row at one offset however the batch is cut, was lost
so (the poison-batch fault test, 23 dead letters of 24). So a token also names the
sink's life (:attr:`RawSink.life`, drawn when the sink is made): a retry in the same
process keeps its token, a new process never repeats an earlier one's, and across
processes the marks alone skip what landed.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Iterable
from typing import Any

from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.summaries import repair
from turnstream.core.rows import (
    COLUMNS,
    BatchRows,
    Block,
    Spans,
    as_dicts,
    spans_of,
    table_columns,
)

__all__ = [
    "RawSink",
    "filter_new",
    "insert_columns",
    "insert_id",
    "insert_rows",
    "spans_of",
    "token_for",
    "token_of",
]

log = logging.getLogger(__name__)

HighWater = dict[tuple[str, int], int]

#: The columns of ``sink_marks`` (migration 22).
MARK_COLUMNS = ("table", "_topic", "_partition", "_offset")


def filter_new(rows: Iterable[dict[str, Any]], high_water: HighWater) -> list[dict[str, Any]]:
    """The rows whose source offset is above what the table already holds."""
    return [r for r in rows if r["_offset"] > high_water.get((r["_topic"], r["_partition"]), -1)]


def token_of(table: str, spans: Spans, count: int, life: str = "") -> str:
    """The insert token of ``count`` rows spanning, per source (topic, partition), the
    offsets ``(lowest, highest)``, written by the sink of ``life``
    (:attr:`RawSink.life`)."""
    text = ";".join(f"{t}:{p}:{lo}-{hi}" for (t, p), (lo, hi) in sorted(spans.items()))
    return f"{table}|{count}|" + hashlib.sha256(f"{life}#{text}".encode()).hexdigest()[:32]


def token_for(table: str, rows: list[dict[str, Any]], life: str = "") -> str:
    """A deterministic insert token: the table, each source partition's offset range
    and the sink's life."""
    return token_of(table, spans_of(rows), len(rows), life)


def insert_id(token: str) -> int:
    """The id an insert's rows carry in ``_insert`` (a UInt64 from the token's hash;
    never 0, which rows written before migration 22 read)."""
    return int(token.rpartition("|")[2][:16], 16) or 1


def insert_columns(table: str, rows: list[dict[str, Any]], ident: int) -> list[list[Any]]:
    """``rows`` of ``table`` as the store inserts them, column by column (clickhouse-connect
    takes them as they are, ``column_oriented``): their values in the order of
    :data:`~turnstream.core.rows.COLUMNS`, then ``ident`` (``_insert``).

    Each column is read by ``map(itemgetter)`` (C), and goes to the store as a column: as
    rows (a tuple per row, ``zip``), clickhouse-connect pivoted them back to columns, and
    the two steps cost ~2.7 s of cProfile per 20,000 items. The times of
    :data:`~turnstream.core.rows.MS_TIMES` go as milliseconds since the epoch, which
    clickhouse-connect writes as they are (as ``datetime`` it converts each value in
    Python)."""
    columns = table_columns(table, rows)
    columns.append([ident] * len(rows))
    return columns


def insert_rows(table: str, rows: list[dict[str, Any]], ident: int) -> list[tuple[Any, ...]]:
    """The same values as :func:`insert_columns`, row by row (a tuple per row)."""
    return list(zip(*insert_columns(table, rows, ident), strict=True))


class RawSink:
    """Writes rows (:data:`~turnstream.core.rows.BatchRows`: per table a dict per row or
    a :class:`~turnstream.core.rows.Block`) to the raw tables. Blocking."""

    def __init__(self, store: Store) -> None:
        self.store = store
        #: Part of every insert token: a token that a SIGKILL left in a deduplication
        #: log without its part never matches a later process's insert (module doc).
        self.life = secrets.token_hex(8)
        self._high_water: dict[str, HighWater] = {}

    def forget(self) -> None:
        """Drop the cached high-water marks (after a rebalance another worker may have
        written the partitions this one gets back)."""
        self._high_water.clear()

    def high_water(self, table: str) -> HighWater:
        """The highest offset ``table`` holds per source (topic, partition)."""
        return self._marks(table)

    def _marks(self, table: str) -> HighWater:
        marks = self._high_water.get(table)
        if marks is None:
            result = self.store.query(
                f"SELECT _topic, _partition, max(_offset) FROM {table} GROUP BY _topic, _partition"
            )
            marks = {(t, int(p)): int(o) for t, p, o in result.rows}
            self._catch_up(table, marks)
            self._high_water[table] = marks
        return marks

    def _catch_up(self, table: str, marks: HighWater) -> None:
        """Repair the table's summaries where its rows above the confirmed marks can have
        left them short (or, pushed again, over), then confirm the table's marks."""
        confirmed = {
            (t, int(p)): int(o)
            for t, p, o in self.store.query(
                "SELECT _topic, _partition, max(_offset) FROM sink_marks "
                "WHERE table = {table:String} GROUP BY _topic, _partition",
                {"table": table},
            ).rows
        }
        behind = {tp: o for tp, o in marks.items() if o > confirmed.get(tp, -1)}
        if not behind:
            return
        # No insert is written again: each summary's days (or rows) that the inserts
        # above the marks touched are replaced by their recomputation from the raw rows
        # (adapters/clickhouse/summaries.py), which a second run, after a crash in this one, repeats
        # to the same rows. A table no summary reads has nothing to repair.
        repair(self.store, table, {tp: confirmed.get(tp, -1) for tp in behind})
        self._confirm(table, behind)

    def _confirm(self, table: str, marks: HighWater) -> None:
        """Record that every insert of ``table`` up to ``marks`` is in its views too."""
        self.store.insert(
            "sink_marks",
            [(table, t, p, o) for (t, p), o in marks.items()],
            MARK_COLUMNS,
        )

    def write(self, rows: BatchRows) -> dict[str, int]:
        """Insert what is new; returns the rows written per table."""
        written: dict[str, int] = {}
        done: list[tuple[str, str, int, int]] = []
        for table in RAW_TABLES:
            # Every table's marks, with or without rows here: reading them catches the
            # table's views up after a start, whatever the batch holds.
            marks = self._marks(table)
            batch = rows.get(table)
            if not batch:
                continue
            block = batch if isinstance(batch, Block) else None
            spans = block.spans if block is not None else spans_of(batch)  # type: ignore[arg-type]
            if all(lo > marks.get(tp, -1) for tp, (lo, _) in spans.items()):
                fresh = batch  # every row is above the marks: the usual batch
            else:
                block = None
                fresh = filter_new(as_dicts(batch), marks)
                if not fresh:
                    continue
                spans = spans_of(fresh)
            token = token_of(table, spans, len(fresh), self.life)
            ident = insert_id(token)
            if block is not None:  # columns already: the prepare process made them
                columns = [*block.columns, [ident] * len(block)]
            else:
                columns = insert_columns(table, fresh, ident)  # type: ignore[arg-type]
            self.store.insert(
                table,
                columns,
                [*COLUMNS[table], "_insert"],
                token,
                column_oriented=True,
            )
            for tp, (_, hi) in spans.items():
                marks[tp] = hi
                done.append((table, tp[0], tp[1], hi))
            written[table] = len(fresh)
        if done:
            # Every insert above returned: its views hold it too.
            self.store.insert("sink_marks", done, MARK_COLUMNS)
        return written
