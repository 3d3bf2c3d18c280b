"""The raw-table sink: exact under redelivery, restarts and differently cut batches.

Two guards make a write idempotent:

* every insert carries a deduplication token built from its rows' topic, partition and
  offset range, so retrying the same batch is dropped by ClickHouse itself;
* each table remembers, per source partition, the highest offset it holds (read back
  from the table after a start or a rebalance), and rows at or below it are skipped, so
  a batch cut differently after a crash never writes a row twice.

An insert of one batch into one table is one part (raw tables are not partitioned), so
it lands whole or not at all, which is what makes the high-water mark exact.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from turnstream.errors import StoreError
from turnstream.sinks.failures import Failure, classify, short_message
from turnstream.sinks.rows import COLUMNS, Rows
from turnstream.sinks.schema import RAW_TABLES
from turnstream.sinks.store import AsyncStore, Store

__all__ = ["RawSink", "filter_new", "retrying", "token_for"]

log = logging.getLogger(__name__)

T = TypeVar("T")

HighWater = dict[tuple[str, int], int]


def filter_new(rows: Iterable[dict[str, Any]], high_water: HighWater) -> list[dict[str, Any]]:
    """The rows whose source offset is above what the table already holds."""
    return [r for r in rows if r["_offset"] > high_water.get((r["_topic"], r["_partition"]), -1)]


def token_for(table: str, rows: Iterable[dict[str, Any]]) -> str:
    """A deterministic insert token: the table and each source partition's offset range."""
    ranges: dict[tuple[str, int], list[int]] = {}
    count = 0
    for r in rows:
        count += 1
        span = ranges.setdefault((r["_topic"], r["_partition"]), [r["_offset"], r["_offset"]])
        span[0] = min(span[0], r["_offset"])
        span[1] = max(span[1], r["_offset"])
    text = ";".join(f"{t}:{p}:{lo}-{hi}" for (t, p), (lo, hi) in sorted(ranges.items()))
    return f"{table}|{count}|" + hashlib.sha256(text.encode()).hexdigest()[:32]


class RawSink:
    """Writes :data:`~turnstream.sinks.rows.Rows` to the raw tables. Blocking."""

    def __init__(self, store: Store) -> None:
        self.store = store
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
            self._high_water[table] = marks
        return marks

    def write(self, rows: Rows) -> dict[str, int]:
        """Insert what is new; returns the rows written per table."""
        written: dict[str, int] = {}
        for table in RAW_TABLES:
            batch = rows.get(table)
            if not batch:
                continue
            marks = self._marks(table)
            fresh = filter_new(batch, marks)
            if not fresh:
                continue
            columns = COLUMNS[table]
            self.store.insert(
                table, [[r[c] for c in columns] for r in fresh], columns, token_for(table, fresh)
            )
            for r in fresh:
                tp = (r["_topic"], r["_partition"])
                if r["_offset"] > marks.get(tp, -1):
                    marks[tp] = r["_offset"]
            written[table] = len(fresh)
        return written


async def retrying(
    store: AsyncStore,
    call: Callable[[], T],
    what: str = "write",
    *,
    on_failure: Callable[[StoreError, Failure], None] | None = None,
    first_delay: float = 0.5,
    max_delay: float = 30.0,
) -> T:
    """Run ``call()`` on the store thread until it returns, backing off (``first_delay``
    doubling to ``max_delay``) while it raises :class:`StoreError`; never gives up.

    A refusal of the data never gets here from the ingest writer (it bisects them, see
    ``bisect.py``), so what does is a store that fails now (transient) or that needs an
    operator (broken): both only delay, since the caller holds its offsets until this
    returns. ``on_failure`` hears of every failure (the loop's liveness record).
    """
    delay = first_delay
    attempt = 1
    while True:
        try:
            return await store.run(call)
        except StoreError as exc:
            failure = classify(exc)
            if on_failure is not None:
                on_failure(exc, failure)
            log.warning(
                "store %s failed (attempt %d), retrying in %.1fs: %s (%s)",
                what,
                attempt,
                delay,
                short_message(str(exc)),
                failure.value,
            )
            await asyncio.sleep(delay)
            delay = min(delay * 2, max_delay)
            attempt += 1
