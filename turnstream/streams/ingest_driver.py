"""The ingest driver: a batch of input messages in; rows, erasures and fan-out out.

It runs on the one batch loop (:mod:`turnstream.streams.batch_loop`), which commits a
batch only after :meth:`IngestDriver.finish` and the fan-out are done. ``prepare`` (the
prepare thread) validates and gates each message (:mod:`turnstream.core.ingest`), turns
the batch into rows (:mod:`turnstream.sinks.rows`) and fan-out messages
(:mod:`turnstream.core.messages`), refusing an item whose accepted message the accepted
topic would not take (``too_large``); ``finish`` (the store thread) de-duplicates
against the keys already taken, writes the rows through the idempotent sink (insert
tokens plus per-partition high-water marks, so a replayed batch writes nothing twice)
and erases the subjects of the batch's ``erase`` commands (:mod:`turnstream.core.erasure`),
leaving an erase tombstone for each: an item of theirs that occurred at or before the
erase and arrives later is forgotten (its key kept, nothing else), and counted.

Input never halts the driver: a batch the store refuses is split by message until the
refused messages are isolated (:mod:`turnstream.sinks.bisect`) and dead-lettered
(``store_refused``), the rest written; a store that fails (an outage, a broken schema) is
retried with back-off (:func:`turnstream.sinks.writer.retrying`), each failure noted in
the driver's liveness record with the offsets the batch is stuck on.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from aiokafka import TopicPartition

from turnstream.config import Settings
from turnstream.core.erasure import (
    Subject,
    forget,
    forgotten,
    merge_tombstones,
    tombstones_left,
)
from turnstream.core.ingest import Decision, Source, dedupe, refused_by_store
from turnstream.core.messages import dead_letter_for
from turnstream.errors import StoreError
from turnstream.sinks.bisect import Refused, refused_before, write_isolating
from turnstream.sinks.erase_tombstones import load_tombstones, record_tombstones
from turnstream.sinks.erasure import Erasure, erase_subjects
from turnstream.sinks.failures import Failure, short_message
from turnstream.sinks.keys import KeyRegistry
from turnstream.sinks.rows import BatchRows, Block, Rows, as_dicts, rows_for
from turnstream.sinks.store import AsyncStore
from turnstream.sinks.writer import RawSink, retrying
from turnstream.streams.batch_loop import Step
from turnstream.streams.fanout import Message
from turnstream.streams.kafka_clients import BACKLOG_FETCH
from turnstream.streams.liveness import Liveness
from turnstream.streams.prepare import Prepared, prepare_batch
from turnstream.streams.prepare_process import PrepareProcess
from turnstream.streams.topology import ACCEPTED_TOPIC_BYTES, Topology

__all__ = [
    "FANOUT_BATCH_BYTES",
    "FANOUT_MAX_BYTES",
    "IngestDriver",
    "IngestStats",
    "Prepared",
    "Settled",
    "next_offsets",
    "rows_to_write",
]

log = logging.getLogger(__name__)

#: Bytes per partition the fan-out producer batches. aiokafka keeps one open batch per
#: partition and one request in flight per broker, so with its default (16 KiB) a send
#: waits for a round trip every ~30 accepted items: 85 ms of every 1,000-message batch
#: here (bench/throughput.py); at 512 KiB a batch's fan-out goes in one or two requests.
#: Below the broker's default ``message.max.bytes`` (1 MiB).
FANOUT_BATCH_BYTES = 512 * 1024

#: The largest accepted message (value and key) the driver sends; a larger one is refused
#: with reason ``too_large`` before anything is written. The bootstrap lowers it to what
#: the accepted topic takes (``max.message.bytes``), which it creates at 4 MiB: an item
#: of the contract's 1 MiB grows when re-serialized with its defaults, by 1.5x for a turn
#: of 55,000 minimal presented items (1.94x for claims, but 1,000 of them make 140 KB),
#: so every valid item fits.
FANOUT_MAX_BYTES = ACCEPTED_TOPIC_BYTES - 1024


@dataclass
class IngestStats:
    """Counters served at ``/v1/status``."""

    messages: int = 0
    accepted: int = 0
    duplicates: int = 0
    #: Items that occurred at or before their person's erase and arrived after it.
    erased: int = 0
    batches: int = 0
    #: Messages in the largest batch so far.
    largest_batch: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    started_at: float = field(default_factory=time.time)
    #: When the first batch was fetched (seconds since the epoch): how long a backlog
    #: took from its first batch in hand to its last commit (bench/throughput.py).
    first_batch_at: float | None = None

    def count(
        self, decisions: list[Decision], written: dict[str, int], accepted: list[bool]
    ) -> None:
        """Add one written batch (``accepted``: per decision, whether its item is)."""
        self.batches += 1
        self.messages += len(decisions)
        self.largest_batch = max(self.largest_batch, len(decisions))
        self.rows.update(written)
        for d, ok in zip(decisions, accepted, strict=True):
            if d.duplicate:
                self.duplicates += 1
                continue
            self.erased += d.erased
            if ok:
                self.accepted += 1
            if d.refusal is not None:
                self.dead_letters[d.refusal.reason.value] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "erased_before_arrival": self.erased,
            "batches": self.batches,
            "largest_batch": self.largest_batch,
            "dead_letters": dict(self.dead_letters),
            "rows_written": dict(self.rows),
            "uptime_seconds": round(time.time() - self.started_at, 1),
            "first_batch_at": self.first_batch_at,
        }


@dataclass
class Settled:
    """A batch after the store: every message's final decision (some refused by the
    store), the fan-out messages to send for each, and the rows written per table."""

    decisions: list[Decision]
    sends: list[list[Message]]
    written: dict[str, int]
    #: Per message: whether its item (or part of it) is accepted, after the store.
    accepted: list[bool]


class IngestDriver:
    """The input topics in batches: rule, write, erase, fan out (the batch loop commits)."""

    name = "ingest"
    tick_when_idle = False
    consumer_options = BACKLOG_FETCH
    producer_options = {
        "acks": "all",
        "enable_idempotence": True,
        "linger_ms": 5,
        "max_batch_size": FANOUT_BATCH_BYTES,
    }

    def __init__(
        self,
        settings: Settings,
        topology: Topology,
        store: AsyncStore,
        sink: RawSink,
        keys: KeyRegistry,
    ) -> None:
        self.settings = settings
        self.store = store
        self.sink = sink
        self.keys = keys
        self.stats = IngestStats()
        self.liveness = Liveness()
        self.names = topology.names
        #: The largest accepted message sent (see :data:`FANOUT_MAX_BYTES`).
        self.fanout_max_bytes = FANOUT_MAX_BYTES
        processor = topology.ingest
        self.group = processor.group
        self.topics = processor.reads
        self.max_records: int | None = settings.worker.batch_size
        #: Where batches are prepared: a child process, or (None) the calling thread.
        self.process = (
            PrepareProcess(settings, self.names, settings.worker.prepare_children_count())
            if settings.worker.prepares_in_child()
            else None
        )
        #: In the child, the next batch is prepared while the last one is handed back
        #: (the child waited on the parent's pickling ~40% of the time, round nine).
        self.prepare_concurrency = 1 if self.process is None else 2
        #: Erase tombstones, read from the store at the first batch (and again after a
        #: rebalance), then kept up to date by the erasures this driver runs.
        self.tombstones: dict[Subject, datetime] | None = None

    def poll_seconds(self) -> float:
        """A batch is what arrived within ``worker.batch_seconds`` (or ``batch_size``)."""
        return self.settings.worker.batch_seconds

    # -- stage 1: pure work on a batch, no store -------------------------------------

    def prepare(self, messages: list[Any]) -> Prepared:
        """Validate, gate and turn a batch into rows and fan-out messages
        (:func:`~turnstream.streams.prepare.prepare_batch`), in the prepare process
        when ``worker.prepare_process`` puts it there. Blocking; no store access, so it runs
        beside the store thread."""
        if messages and self.stats.first_batch_at is None:
            self.stats.first_batch_at = time.time()
        if self.process is not None and messages:
            return self.process.prepare(messages, self.fanout_max_bytes)
        return prepare_batch(messages, self.settings, self.names, self.fanout_max_bytes)

    def start(self) -> None:
        """Start the prepare process, if there is one (else the first batch does)."""
        if self.process is not None:
            self.process.start()

    def close(self) -> None:
        """Stop the prepare process, if there is one."""
        if self.process is not None:
            self.process.close()

    # -- stage 2: de-duplicate against the store, write ------------------------------

    def settle(self, prepared: Prepared) -> list[Decision]:
        """De-duplicate a prepared batch against the keys already taken (one store
        look-up) and take its new keys; forget what occurred before its person's erase.
        Blocking; on the store thread."""
        tombstones = self.tombstones
        if tombstones is None:
            tombstones = self.tombstones = load_tombstones(self.store.store)
        taken = self.keys.lookup(d.dedup_key for d in prepared.judged)
        decisions = []
        for decision, facts, erasing in zip(
            prepared.judged, prepared.erasure_facts, prepared.erases, strict=True
        ):
            final = dedupe(decision, taken.get)
            # The prepared facts, not the item: a batch prepared in the child has none.
            if not final.duplicate and forgotten(facts, erasing, tombstones):
                final = forget(final)
            if not final.duplicate:
                taken.setdefault(final.dedup_key, final.source)  # a second copy in the batch
                # Taken now, before the write: the next batch is settled before this one
                # is committed. A crash forgets it, and a redelivery from the same source
                # is never a duplicate of itself.
                self.keys.remember(final.dedup_key, final.source)
            decisions.append(final)
        return decisions

    def write_settled(self, prepared: Prepared, decisions: list[Decision]) -> Settled:
        """Write a settled batch; the messages the store refuses for good are isolated
        (``sinks/bisect.py``) and become dead letters. Blocking; on the store thread.

        Raises :class:`StoreError` for a failure that is not a refusal (the caller
        retries the whole batch: what landed is skipped)."""
        sends = list(prepared.sends)
        final = list(decisions)
        accepted = list(prepared.accepted)
        at = {d.source: i for i, d in enumerate(decisions)}
        order = [d.source for d in decisions if not d.duplicate]

        def refuse(i: int, message: str) -> Rows:
            final[i] = refused_by_store(decisions[i], message)
            accepted[i] = False
            letter = dead_letter_for(final[i], prepared.received_at)
            sends[i] = [(self.names.dead_letters, letter, prepared.messages[i].key)]
            return rows_for(final[i], self.settings, prepared.received_at)

        rows = rows_to_write(prepared, decisions)
        # Forgotten (occurred before its person's erase): its key is written, nothing else.
        forgotten_rows = {
            d.source: rows_for(d, self.settings, prepared.received_at)
            for d in decisions
            if d.erased
        }
        if forgotten_rows:
            rows = _swap_rows(rows, forgotten_rows)
            for source in forgotten_rows:
                sends[at[source]] = []
                accepted[at[source]] = False
        # A replay decides as the first time: what the store refused stays refused (its
        # own rows are not offered again; its dead letter's are, in case they were cut).
        earlier = refused_before(self.sink, order)
        if earlier:
            swapped = {source: refuse(at[source], message) for source, message in earlier.items()}
            rows = _swap_rows(rows, swapped)

        def replace(refused: Refused) -> Rows:
            table = refused.table or "the store"
            return refuse(at[refused.source], f"{table} refused it: {refused.reason}")

        done = write_isolating(self.sink, rows, order, replace)
        if done.refused:
            log.warning(
                "%d of %d messages refused by the store, the rest written (%d writes)",
                len(done.refused),
                len(order),
                done.writes,
            )
        return Settled(final, sends, dict(done.written), accepted)

    def write_batch(self, messages: list[Any]) -> list[Decision]:
        """Prepare, settle and write a batch, without fan-out or commit (what the driver
        does to the store; for benchmarks and tools). Blocking."""
        prepared = self.prepare(messages)
        return self.write_settled(prepared, self.settle(prepared)).decisions

    def _failed(
        self, stuck_at: Callable[[], dict[tuple[str, int], int]]
    ) -> Callable[[StoreError, Failure], None]:
        """The ``on_failure`` of a store call for a batch stuck at ``stuck_at()`` (found
        only when a call fails: a walk over the batch's messages)."""

        def note(exc: StoreError, failure: Failure) -> None:
            # A failure may have landed some tables: read the marks again before retrying.
            self.sink.forget()
            self.liveness.failed(
                short_message(str(exc)),
                failure.value,
                time.time(),
                stuck_at(),
                error_class=type(exc).__name__,
            )

        return note

    async def _write(
        self,
        prepared: Prepared,
        decisions: list[Decision],
        noted: Callable[[StoreError, Failure], None],
    ) -> Settled:
        """Write a settled batch until it is written (backing off while the store fails)."""
        return await retrying(
            self.store, lambda: self.write_settled(prepared, decisions), "write", on_failure=noted
        )

    async def finish(self, prepared: Prepared) -> Step:
        """Settle, write and erase one prepared batch, each until it succeeds (backing
        off while the store fails); its fan-out and offsets."""
        noted = self._failed(prepared.stuck_at)
        decisions = await retrying(
            self.store, lambda: self.settle(prepared), "key look-up", on_failure=noted
        )
        settled = await self._write(prepared, decisions, noted)
        # The batch's erases, from the prepared facts (a batch prepared in the child has
        # no items): those still accepted after the store, not duplicates.
        tombstones: dict[Subject, datetime] = {}
        if any(prepared.erases):  # most batches erase nobody: no walk over them
            tombstones = tombstones_left(
                (facts, erasing)
                for facts, erasing, d, ok in zip(
                    prepared.erasure_facts,
                    prepared.erases,
                    settled.decisions,
                    settled.accepted,
                    strict=True,
                )
                if ok and not d.duplicate
            )
        if tombstones:  # every erase of the batch in one go: one statement per table

            def erase() -> list[Erasure]:
                # The tombstone first: a crash between the two leaves it, and the
                # redelivered batch erases again.
                record_tombstones(self.store.store, tombstones)
                return erase_subjects(self.store.store, list(tombstones))

            erasures = await retrying(self.store, erase, "erasure", on_failure=noted)
            if self.tombstones is not None:
                merge_tombstones(self.tombstones, tombstones)
            log.info(
                "erased %d subjects (%d rows)",
                len(erasures),
                sum(sum(e.deleted.values()) for e in erasures),
            )
        return Step(
            messages=(
                m
                for d, out in zip(settled.decisions, settled.sends, strict=True)
                if not d.duplicate
                for m in out
            ),
            offsets=next_offsets(prepared.messages),
            done=lambda: self.stats.count(settled.decisions, settled.written, settled.accepted),
        )

    # -- handover --------------------------------------------------------------------

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        """Another worker may write the partitions next: forget the high-water marks."""
        self.sink.forget()

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        """Another worker may have written them meanwhile: read the marks (and the
        erase tombstones) again."""
        self.sink.forget()
        self.tombstones = None


def next_offsets(messages: list[Any]) -> dict[TopicPartition, int]:
    """The offset to commit per partition: past the highest offset of ``messages``."""
    highest: dict[tuple[str, int], int] = {}
    for m in messages:
        tp = (m.topic, m.partition)
        if m.offset >= highest.get(tp, -1):
            highest[tp] = m.offset
    return {TopicPartition(t, p): offset + 1 for (t, p), offset in highest.items()}


def rows_to_write(prepared: Prepared, decisions: list[Decision]) -> BatchRows:
    """The prepared rows of a batch but those of the messages settled as duplicates."""
    duplicates = {d.source for d in decisions if d.duplicate}
    if not duplicates:
        return prepared.rows
    out: BatchRows = {}
    sources = {(s.topic, s.partition, s.offset) for s in duplicates}  # as a Block names them
    for table, batch in prepared.rows.items():
        if isinstance(batch, Block):  # from the prepare process: its rows by a mask
            left = batch.without(sources)
            if left is not None:
                out[table] = left
        else:
            out[table] = [
                r
                for r in batch
                if Source(r["_topic"], r["_partition"], r["_offset"]) not in duplicates
            ]
    return out


def _swap_rows(rows: BatchRows, swapped: dict[Source, Rows]) -> BatchRows:
    """``rows`` with the rows of the ``swapped`` messages replaced by the ones given."""
    out: dict[str, list[dict[str, Any]]] = {
        table: [
            r
            for r in as_dicts(batch)
            if Source(r["_topic"], r["_partition"], r["_offset"]) not in swapped
        ]
        for table, batch in rows.items()
    }
    for replacement in swapped.values():
        for table, batch in replacement.items():
            out.setdefault(table, []).extend(batch)
    return out  # type: ignore[return-value]
