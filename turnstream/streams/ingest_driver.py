"""The ingest driver: a batch of input messages in; rows, erasures and fan-out out.

It runs on the one batch loop (:mod:`turnstream.streams.batch_loop`), which commits a
batch only after :meth:`IngestDriver.finish` and the fan-out are done. ``prepare`` (the
prepare thread) validates and gates each message (:mod:`turnstream.core.ingest`), turns
the batch into rows (:mod:`turnstream.sinks.rows`) and fan-out messages
(:mod:`turnstream.core.messages`); ``finish`` (the store thread) de-duplicates against
the keys already taken, writes the rows through the idempotent sink (insert tokens plus
per-partition high-water marks, so a replayed batch writes nothing twice) and erases the
subjects of the batch's ``erase`` commands (:mod:`turnstream.core.erasure`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiokafka import TopicPartition

from turnstream.config import Settings
from turnstream.core.erasure import erasure_subjects
from turnstream.core.ingest import Decision, Source, dedupe, judge
from turnstream.core.messages import accepted_for, dead_letter_for
from turnstream.sinks.erasure import erase_subjects
from turnstream.sinks.keys import KeyRegistry
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import AsyncStore
from turnstream.sinks.writer import RawSink, write_with_retry
from turnstream.streams.batch_loop import Step
from turnstream.streams.fanout import Message
from turnstream.streams.topology import Topology

__all__ = ["FANOUT_BATCH_BYTES", "IngestDriver", "IngestStats", "Prepared", "rows_to_write"]

log = logging.getLogger(__name__)

#: Bytes per partition the fan-out producer batches. aiokafka keeps one open batch per
#: partition and one request in flight per broker, so with its default (16 KiB) a send
#: waits for a round trip every ~30 accepted items: 85 ms of every 1,000-message batch
#: here (bench/throughput.py); at 512 KiB a batch's fan-out goes in one or two requests.
#: Below the broker's default ``message.max.bytes`` (1 MiB).
FANOUT_BATCH_BYTES = 512 * 1024


@dataclass
class IngestStats:
    """Counters served at ``/v1/status``."""

    messages: int = 0
    accepted: int = 0
    duplicates: int = 0
    batches: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    started_at: float = field(default_factory=time.time)

    def count(self, decisions: list[Decision], written: dict[str, int]) -> None:
        """Add one written batch."""
        self.batches += 1
        self.messages += len(decisions)
        self.rows.update(written)
        for d in decisions:
            if d.duplicate:
                self.duplicates += 1
                continue
            if d.item is not None:
                self.accepted += 1
            if d.refusal is not None:
                self.dead_letters[d.refusal.reason.value] += 1

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "batches": self.batches,
            "dead_letters": dict(self.dead_letters),
            "rows_written": dict(self.rows),
            "uptime_seconds": round(time.time() - self.started_at, 1),
        }


@dataclass
class Prepared:
    """A fetched batch, validated and turned into rows and fan-out messages as if none
    of it were a duplicate (de-duplication needs the store, in the next stage)."""

    messages: list[Any]
    judged: list[Decision]
    rows: Rows
    #: Per message: (topic, value, key) of each fan-out message it sends.
    sends: list[list[Message]]


class IngestDriver:
    """The input topics in batches: rule, write, erase, fan out (the batch loop commits)."""

    name = "ingest"
    tick_when_idle = False
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
        self.names = topology.names
        processor = topology.ingest
        self.group = processor.group
        self.topics = processor.reads
        self.max_records: int | None = settings.worker.batch_size

    def poll_seconds(self) -> float:
        """A batch is what arrived within ``worker.batch_seconds`` (or ``batch_size``)."""
        return self.settings.worker.batch_seconds

    # -- stage 1: pure work on a batch, no store -------------------------------------

    def prepare(self, messages: list[Any]) -> Prepared:
        """Validate, gate and turn a batch into rows and fan-out messages. Blocking; no
        store access, so it runs beside the store thread."""
        judged = [
            judge(m.value or b"", Source(m.topic, m.partition, m.offset), self.settings)
            for m in messages
        ]
        rows: Rows = {}
        received_at = datetime.now(UTC)
        sends: list[list[Message]] = []
        for message, decision in zip(messages, judged, strict=True):
            for table, batch in rows_for(decision, self.settings, received_at).items():
                rows.setdefault(table, []).extend(batch)
            out: list[Message] = []
            if decision.refusal is not None:
                letter = dead_letter_for(decision, received_at)
                out.append((self.names.dead_letters, letter, message.key))
            if decision.item is not None and decision.profile_id is not None:
                out.append(
                    (self.names.accepted, accepted_for(decision), decision.profile_id.encode())
                )
            sends.append(out)
        return Prepared(messages, judged, rows, sends)

    # -- stage 2: de-duplicate against the store, write ------------------------------

    def settle(self, prepared: Prepared) -> list[Decision]:
        """De-duplicate a prepared batch against the keys already taken (one store
        look-up) and take its new keys. Blocking; on the store thread."""
        taken = self.keys.lookup(d.dedup_key for d in prepared.judged)
        decisions = []
        for decision in prepared.judged:
            final = dedupe(decision, taken.get)
            if not final.duplicate:
                taken.setdefault(final.dedup_key, final.source)  # a second copy in the batch
                # Taken now, before the write: the next batch is settled before this one
                # is committed. A crash forgets it, and a redelivery from the same source
                # is never a duplicate of itself.
                self.keys.remember(final.dedup_key, final.source)
            decisions.append(final)
        return decisions

    def write_batch(self, messages: list[Any]) -> list[Decision]:
        """Prepare, settle and write a batch, without fan-out or commit (what the driver
        does to the store; for benchmarks and tools). Blocking."""
        prepared = self.prepare(messages)
        decisions = self.settle(prepared)
        self.sink.write(rows_to_write(prepared, decisions))
        return decisions

    async def finish(self, prepared: Prepared) -> Step:
        """Settle, write and erase one prepared batch; its fan-out and offsets."""
        decisions = await self.store.run(self.settle, prepared)
        written = await write_with_retry(self.store, self.sink, rows_to_write(prepared, decisions))
        subjects = erasure_subjects(decisions)
        if subjects:  # every erase of the batch in one go: one statement per table
            erasures = await self.store.run(erase_subjects, self.store.store, subjects)
            log.info(
                "erased %d subjects (%d rows)",
                len(erasures),
                sum(sum(e.deleted.values()) for e in erasures),
            )
        offsets: dict[TopicPartition, int] = {}
        for m in prepared.messages:
            tp = TopicPartition(m.topic, m.partition)
            offsets[tp] = max(offsets.get(tp, 0), m.offset + 1)
        return Step(
            messages=(
                m
                for d, out in zip(decisions, prepared.sends, strict=True)
                if not d.duplicate
                for m in out
            ),
            offsets=offsets,
            done=lambda: self.stats.count(decisions, written),
        )

    # -- handover --------------------------------------------------------------------

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        """Another worker may write the partitions next: forget the high-water marks."""
        self.sink.forget()

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        """Another worker may have written them meanwhile: read the marks again."""
        self.sink.forget()


def rows_to_write(prepared: Prepared, decisions: list[Decision]) -> Rows:
    """The prepared rows of a batch but those of the messages settled as duplicates."""
    duplicates = {d.source for d in decisions if d.duplicate}
    if not duplicates:
        return prepared.rows
    return {
        table: [
            r for r in batch if Source(r["_topic"], r["_partition"], r["_offset"]) not in duplicates
        ]
        for table, batch in prepared.rows.items()
    }
