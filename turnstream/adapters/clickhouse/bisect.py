"""Writing a batch the store partly refuses: split it by message until the refused
messages are isolated, write everything else.

When the store refuses a batch's rows for good (a refusal, see ``failures.py``),
retrying the batch fails identically forever. :func:`write_isolating` writes the batch
through the same idempotent :class:`~turnstream.adapters.clickhouse.writer.RawSink`; on a refusal it
writes the first half of the batch's messages, then the second, each split again while
it is refused, down to single messages. A message refused on its own is replaced by the
rows its caller gives for it (a dead letter and its idempotency key), written at once.

Exactly once holds because the halves are written strictly in the batch's order: a
prefix of the batch holds, for every partition, a prefix of that partition's messages,
so each table's per-partition high-water mark only moves forward, and a refused
message's replacement rows are written before any message after it. Replayed after a
crash, the batch meets the same refusals (they are deterministic), the rows already
written are skipped by the marks, and the same messages end up refused. The marks, not
ClickHouse's deduplication log, decide what was written: a SIGKILL in the middle of a
replacement's insert can leave its token logged and its row nowhere, and the replay's
replacement, one row at the message's offset however the batch is cut, would be dropped
as a repeat of it (the poison-batch fault test once found 23 dead letters of 24); the
sink's tokens name its life (``writer.py``), so the restarted process's insert lands.

A replacement's rows are written table after table too, its dead letter before its key
(``RAW_TABLES``): a crash between them leaves the dead letter, which the replay finds
(:func:`refused_before`) and completes with the key. A key without its dead letter is
never left; nor would it make the message a duplicate, since a key taken by the message's
own source is not a duplicate of it (``core/ingest.dedupe``).

What a refused message leaves: the tables are written one after another (``RAW_TABLES``),
so the rows it has in the tables before the one that refused it were written with its
batch before the refusal was known; they stay (the dead letter names the table that
refused). Its rows in that table and the ones after it are not written, and it sends no
accepted message.

A transient or broken failure met during the split is raised as it is: the caller backs
off and writes the whole batch again, which skips what landed.

A replayed batch whose messages were already written skips their rows, so a message
refused the first time would not be refused again, and would pass for accepted (its
accepted message sent). :func:`refused_before` reads which messages of the batch the
store refused before (their ``store_refused`` dead letters), so that the replay decides
them the same way; it asks the store only when the batch's partitions already hold dead
letters at or past its first offsets.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from turnstream.adapters.clickhouse.failures import Failure, classify, short_message
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.core.ingest import Reason, Source
from turnstream.core.rows import BatchRows, Rows, as_dicts
from turnstream.errors import StoreError

__all__ = ["Isolated", "IsolatingSink", "Refused", "refused_before", "write_isolating"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Refused:
    """A message the store refused on its own: which table, and the store's words."""

    source: Source
    table: str
    reason: str


@dataclass
class Isolated:
    """What :func:`write_isolating` did: rows written per table, the messages refused
    (in batch order), and how many writes it took."""

    written: Counter[str] = field(default_factory=Counter)
    refused: list[Refused] = field(default_factory=list)
    writes: int = 0


def write_isolating(
    sink: RawSink,
    rows: BatchRows,
    order: Sequence[Source],
    replace: Callable[[Refused], Rows],
) -> Isolated:
    """Write ``rows`` (every row's source is in ``order``, the batch's messages in
    consumption order); bisect by message on a refusal. Blocking.

    ``replace(refused)`` gives the rows that stand for a refused message instead of its
    own. Raises the first :class:`StoreError` that is not a refusal.
    """
    done = Isolated()
    if not any(rows.values()):
        return done
    tagged: dict[str, list[tuple[int, dict[str, Any]]]] = {}

    def part(lo: int, hi: int) -> BatchRows:
        if lo == 0 and hi == len(order):
            return rows  # the whole batch as it came: most batches are not refused
        if not tagged:  # index the rows by message once, at the first refusal
            index = {source: i for i, source in enumerate(order)}
            for table, batch in rows.items():
                tagged[table] = [(index[_source(r)], r) for r in as_dicts(batch)]
        return {t: [r for i, r in batch if lo <= i < hi] for t, batch in tagged.items()}

    def attempt(lo: int, hi: int) -> None:
        done.writes += 1
        try:
            done.written.update(sink.write(part(lo, hi)))
            return
        except StoreError as exc:
            if classify(exc) is not Failure.refused:
                raise
            error = exc
        if hi - lo > 1:
            mid = (lo + hi) // 2
            attempt(lo, mid)
            attempt(mid, hi)
            return
        refused = Refused(order[lo], error.table or "", short_message(str(error)))
        log.warning(
            "the store refused %s:%d@%d (%s): %s",
            refused.source.topic,
            refused.source.partition,
            refused.source.offset,
            refused.table,
            refused.reason,
        )
        done.refused.append(refused)
        _write_replacement(sink, replace(refused), refused, done)

    attempt(0, len(order))
    return done


def _source(row: dict[str, Any]) -> Source:
    return Source(row["_topic"], row["_partition"], row["_offset"])


def _write_replacement(sink: RawSink, rows: Rows, refused: Refused, done: Isolated) -> None:
    """The rows standing for a refused message; refused too, they are left out (the
    dead-letter topic still gets the message)."""
    done.writes += 1
    try:
        done.written.update(sink.write(rows))
    except StoreError as exc:
        if classify(exc) is not Failure.refused:
            raise
        log.error(
            "the store also refused the dead letter of %s:%d@%d: %s",
            refused.source.topic,
            refused.source.partition,
            refused.source.offset,
            short_message(str(exc)),
        )


def refused_before(sink: RawSink, sources: Sequence[Source]) -> dict[Source, str]:
    """The messages among ``sources`` that the store refused when they were first
    written, with their dead letter's message. Blocking."""
    first: dict[tuple[str, int], tuple[int, int]] = {}
    for s in sources:
        lo, hi = first.get((s.topic, s.partition), (s.offset, s.offset))
        first[(s.topic, s.partition)] = (min(lo, s.offset), max(hi, s.offset))
    marks = sink.high_water("dead_letters")
    ranges = [
        (topic, partition, lo, hi)
        for (topic, partition), (lo, hi) in sorted(first.items())
        if marks.get((topic, partition), -1) >= lo
    ]
    if not ranges:
        return {}
    rows = sink.store.query(
        "SELECT _topic, _partition, _offset, any(message) FROM dead_letters "
        "WHERE reason = {reason:String} AND arrayExists("
        "r -> r.1 = _topic AND r.2 = _partition AND _offset BETWEEN r.3 AND r.4, "
        "{ranges:Array(Tuple(String, UInt16, UInt64, UInt64))}) "
        "GROUP BY _topic, _partition, _offset",
        {"reason": Reason.store_refused.value, "ranges": ranges},
    ).rows
    wanted = set(sources)
    found = {Source(t, int(p), int(o)): message for t, p, o, message in rows}
    return {source: message for source, message in found.items() if source in wanted}


class IsolatingSink:
    """The ingest use case's raw tables (``service/ports.RawTables``): a
    :class:`RawSink` written through :func:`write_isolating`."""

    def __init__(self, sink: RawSink) -> None:
        self.sink = sink

    def write(
        self, rows: BatchRows, order: Sequence[Source], replace: Callable[[Refused], Rows]
    ) -> Isolated:
        return write_isolating(self.sink, rows, order, replace)

    def refused_before(self, sources: Sequence[Source]) -> dict[Source, str]:
        return refused_before(self.sink, sources)

    def forget(self) -> None:
        """Read the high-water marks again before the next write."""
        self.sink.forget()
