"""The ingest driver: the Kafka loop's adapter for the ingest use case
(:mod:`turnstream.service.ingest`), which validates, de-duplicates, writes, dead-letters
and erases; the driver adds what is the loop's own.

It runs on the one batch loop (:mod:`turnstream.entrypoints.kafka.batch_loop`), which commits a
batch only after :meth:`IngestDriver.finish` and the fan-out are done. ``prepare`` (the
prepare thread) hands the batch to the use case's prepare stage
(:class:`~turnstream.entrypoints.kafka.prepare_process.PrepareStage`:
in the prepare process, :mod:`turnstream.entrypoints.kafka.prepare_process`, or on the thread);
``finish`` (the store thread) runs the use case's store calls in order, each until it
succeeds: a store that fails (an outage, a broken schema) is retried with back-off
(:func:`retrying`), each failure noted in the driver's liveness record with the offsets
the batch is stuck on, and the batch's offsets are committed only after. Input never
halts the driver: what the store refuses for good is dead-lettered by the use case.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiokafka import TopicPartition

from turnstream.adapters.clickhouse.failures import Failure, classify, short_message
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.adapters.kafka.clients import BACKLOG_FETCH
from turnstream.adapters.kafka.topology import FANOUT_MAX_BYTES, Topology
from turnstream.config import Settings
from turnstream.core.ingest import Decision
from turnstream.core.liveness import Liveness
from turnstream.entrypoints.kafka.batch_loop import Step
from turnstream.entrypoints.kafka.prepare import Prepared
from turnstream.entrypoints.kafka.prepare_process import PrepareStage
from turnstream.errors import StoreError
from turnstream.service.ingest import Ingest, IngestBatch

__all__ = [
    "FANOUT_BATCH_BYTES",
    "IngestDriver",
    "IngestStats",
    "next_offsets",
    "retrying",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

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


class IngestDriver:
    """The input topics in batches through the ingest use case; the batch loop sends
    the fan-out and commits."""

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
        ingest: Ingest,
        stage: PrepareStage,
    ) -> None:
        """``stage``: the prepare stage ``ingest`` was built with (started and closed
        here)."""
        self.settings = settings
        self.store = store
        self.ingest = ingest
        self.stage = stage
        self.stats = IngestStats()
        self.liveness = Liveness()
        #: The largest accepted message sent (``topology.FANOUT_MAX_BYTES``).
        self.fanout_max_bytes = FANOUT_MAX_BYTES
        processor = topology.ingest
        self.group = processor.group
        self.topics = processor.reads
        self.max_records: int | None = settings.worker.batch_size
        #: In the child, the next batch is prepared while the last one is handed back
        #: (the child waited on the parent's pickling ~40% of the time, round nine).
        self.prepare_concurrency = 1 if stage.process is None else 2

    def poll_seconds(self) -> float:
        """A batch is what arrived within ``worker.batch_seconds`` (or ``batch_size``)."""
        return self.settings.worker.batch_seconds

    def prepare(self, messages: list[Any]) -> Prepared:
        """The use case's prepare stage (:class:`PrepareStage`, which gives a
        :class:`Prepared`; no store access, so it runs beside the store thread). Blocking."""
        if messages and self.stats.first_batch_at is None:
            self.stats.first_batch_at = time.time()
        return self.ingest.prepare(messages, self.fanout_max_bytes)  # type: ignore[return-value]

    def start(self) -> None:
        """Start the prepare process, if there is one (else the first batch does)."""
        self.stage.start()

    def close(self) -> None:
        """Stop the prepare process, if there is one."""
        self.stage.close()

    def _failed(
        self, stuck_at: Callable[[], dict[tuple[str, int], int]]
    ) -> Callable[[StoreError, Failure], None]:
        """The ``on_failure`` of a store call for a batch stuck at ``stuck_at()`` (found
        only when a call fails: a walk over the batch's messages)."""

        def note(exc: StoreError, failure: Failure) -> None:
            # A failure may have landed some tables: read the marks again before retrying.
            self.ingest.raw.forget()
            self.liveness.failed(
                short_message(str(exc)),
                failure.value,
                time.time(),
                stuck_at(),
                error_class=type(exc).__name__,
            )

        return note

    async def _run(self, batch: IngestBatch, noted: Callable[[StoreError, Failure], None]) -> None:
        """Run the batch's store calls in order, each until it succeeds."""
        for what, call in batch.calls():
            await retrying(self.store, call, what, on_failure=noted)

    async def finish(self, prepared: Prepared) -> Step:
        """One prepared batch through the store (backing off while it fails); its
        fan-out and offsets."""
        batch = self.ingest.batch(prepared)
        await self._run(batch, self._failed(prepared.stuck_at))
        settled = batch.settled
        assert settled is not None
        return Step(
            messages=settled.messages(),
            offsets=next_offsets(prepared.messages),
            done=lambda: self.stats.count(settled.decisions, settled.written, settled.accepted),
        )

    # -- handover --------------------------------------------------------------------

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        """Another worker may write the partitions next: forget the high-water marks."""
        self.ingest.raw.forget()

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        """Another worker may have written them meanwhile: read the marks (and the
        erase tombstones) again."""
        self.ingest.reset()


def next_offsets(messages: list[Any]) -> dict[TopicPartition, int]:
    """The offset to commit per partition: past the highest offset of ``messages``."""
    highest: dict[tuple[str, int], int] = {}
    for m in messages:
        tp = (m.topic, m.partition)
        if m.offset >= highest.get(tp, -1):
            highest[tp] = m.offset
    return {TopicPartition(t, p): offset + 1 for (t, p), offset in highest.items()}


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

    A refusal of the data never gets here from the ingest use case (it bisects them,
    ``adapters/clickhouse/bisect.py``), so what does is a store that fails now (transient) or that
    needs an operator (broken): both only delay, since the loop holds its offsets until
    this returns. ``on_failure`` hears of every failure (the loop's liveness record).
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
