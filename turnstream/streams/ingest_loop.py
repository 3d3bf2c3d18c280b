"""The ingest loop: consume a batch, rule on it, write it, fan it out, then commit.

Offsets are committed only after the batch is in the store and its fan-out messages are
acknowledged by the broker, so a crash anywhere replays the batch, and the idempotent
sink (insert tokens plus per-partition high-water marks) makes the replay a no-op.

Two stages overlap, one batch apart: while batch N is de-duplicated, written, fanned out
and committed (the store thread and the event loop), batch N+1 is fetched and prepared
(validated, turned into rows and fan-out messages) on a thread of its own. chDB releases
the GIL while it inserts, so the two stages share the machine's cores. Batches still
finish strictly in order, and each is committed only after its own write and acks.

The loop drives aiokafka directly rather than through a Faust agent: with Faust 0.15.3,
a worker restarted after SIGKILL fetched from offset 0 before seeking to its committed
offsets and then stopped committing (or stopped consuming) in 9 of 13 trials here
(``noack_take`` 8 of 9, ``take_events`` 1 of 4), which stalls the pipeline; this loop, 0
of 9. The loop runs inside the worker's Faust app as a task.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import logging
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError

from turnstream.config import Settings
from turnstream.errors import StoreError
from turnstream.models import Command
from turnstream.models.deadletter import MAX_ORIGINAL_BYTES, DeadLetter
from turnstream.sinks.bisect import Refused, refused_before, write_isolating
from turnstream.sinks.erasure import erase_subjects
from turnstream.sinks.failures import Failure, short_message
from turnstream.sinks.keys import KeyRegistry
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import AsyncStore
from turnstream.sinks.writer import RawSink, retrying
from turnstream.streams.fanout import Message, send_all
from turnstream.streams.ingest import (
    Decision,
    Source,
    dedupe,
    judge,
    refused_by_store,
    too_large_to_fan_out,
)
from turnstream.streams.kafka_clients import stop_within
from turnstream.streams.liveness import Liveness, first_offsets
from turnstream.streams.topics import ACCEPTED_TOPIC_BYTES, TopicNames

__all__ = [
    "FANOUT_MAX_BYTES",
    "IngestLoop",
    "IngestStats",
    "Prepared",
    "Settled",
    "accepted_for",
    "dead_letter_for",
    "rows_to_write",
]

log = logging.getLogger(__name__)

#: Bytes per partition the fan-out producer batches. aiokafka keeps one open batch per
#: partition and one request in flight per broker, so with its default (16 KiB) a send
#: waits for a round trip every ~30 accepted items: 85 ms of every 1,000-message batch
#: here (bench/throughput.py); at 512 KiB a batch's fan-out goes in one or two requests.
#: Below the broker's default ``message.max.bytes`` (1 MiB).
FANOUT_BATCH_BYTES = 512 * 1024

#: The largest accepted message (value and key) the loop sends; a larger one is refused
#: with reason ``too_large`` before anything is written. The worker lowers it to what the
#: accepted topic takes (``max.message.bytes``), which it creates at 4 MiB: an item of
#: the contract's 1 MiB grows when re-serialized with its defaults, by 1.5x for a turn of
#: 55,000 minimal presented items (1.94x for claims, but 1,000 of them make 140 KB), so
#: every valid item fits.
FANOUT_MAX_BYTES = ACCEPTED_TOPIC_BYTES - 1024


@dataclass
class IngestStats:
    """Counters served at ``/v1/status``."""

    messages: int = 0
    accepted: int = 0
    duplicates: int = 0
    batches: int = 0
    #: Messages in the largest batch so far.
    largest_batch: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    started_at: float = field(default_factory=time.time)

    def count(self, decisions: list[Decision], written: dict[str, int]) -> None:
        """Add one written batch."""
        self.batches += 1
        self.messages += len(decisions)
        self.largest_batch = max(self.largest_batch, len(decisions))
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
            "largest_batch": self.largest_batch,
            "dead_letters": dict(self.dead_letters),
            "rows_written": dict(self.rows),
            "uptime_seconds": round(time.time() - self.started_at, 1),
        }


def dead_letter_for(decision: Decision) -> bytes:
    """The dead-letter topic's message for a refusal: reason, path and original bytes."""
    assert decision.refusal is not None
    src = decision.source
    letter = DeadLetter(
        reason=decision.refusal.reason.value,
        field_path=decision.refusal.field_path,
        message=decision.refusal.message,
        topic=src.topic,
        partition=src.partition,
        offset=src.offset,
        received_at=datetime.now(UTC),
        original=""
        if len(decision.raw) > MAX_ORIGINAL_BYTES
        else base64.b64encode(decision.raw).decode(),
        original_size=len(decision.raw),
        original_sha256=hashlib.sha256(decision.raw).hexdigest(),
    )
    return letter.model_dump_json().encode()


def accepted_for(decision: Decision) -> bytes:
    """The fan-out message of an accepted item: the item without its handle, with its
    profile id (and without its interactions when they were refused)."""
    assert decision.item is not None and decision.profile_id is not None
    exclude = {"handle", "profile_id"}
    if not decision.keep_interactions and "interactions" in type(decision.item).model_fields:
        exclude.add("interactions")
    body = decision.item.model_dump_json(by_alias=True, exclude=exclude).encode()
    tail = b',"profile_id":' + json.dumps(decision.profile_id).encode()
    if "interactions" in exclude:
        tail += b',"interactions":[]'
    return body[:-1] + tail + b"}"  # an item always has fields: body is never "{}"


@dataclass
class Prepared:
    """A fetched batch, validated and turned into rows and fan-out messages as if none
    of it were a duplicate (de-duplication needs the store, in the next stage)."""

    messages: list[Any]
    judged: list[Decision]
    rows: Rows
    #: Per message: (topic, value, key) of each fan-out message it sends.
    sends: list[list[Message]]
    ingested_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def stuck_at(self) -> dict[tuple[str, int], int]:
        """The batch's first offset per partition: where the loop waits while it fails."""
        return first_offsets((m.topic, m.partition, m.offset) for m in self.messages)


@dataclass
class Settled:
    """A batch after the store: every message's final decision (some refused by the
    store), the fan-out messages to send for each, and the rows written per table."""

    decisions: list[Decision]
    sends: list[list[Message]]
    written: dict[str, int]


class _Handover(ConsumerRebalanceListener):
    """Before partitions move, the batches in flight finish (and commit); after, the
    high-water marks are read again, since another worker may have written them."""

    def __init__(self, loop: IngestLoop) -> None:
        self.loop = loop

    async def on_partitions_revoked(self, revoked: Any) -> None:
        # aiokafka has stopped fetching: the batches already fetched are all there is.
        await self.loop.wait_idle(timeout=self.loop.settings.worker.session_timeout)
        self.loop.sink.forget()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.loop.sink.forget()


class IngestLoop:
    """Consumes the input topics in batches until cancelled."""

    def __init__(self, settings: Settings, store: AsyncStore) -> None:
        self.settings = settings
        self.store = store
        self.sink = RawSink(store.store)
        self.keys = KeyRegistry(store.store)
        self.stats = IngestStats()
        self.liveness = Liveness()
        self.names = TopicNames(settings.worker.topic_prefix)
        #: The largest accepted message sent (see :data:`FANOUT_MAX_BYTES`).
        self.fanout_max_bytes = FANOUT_MAX_BYTES
        self._prepare_thread = ThreadPoolExecutor(1, thread_name_prefix="turnstream-prepare")
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    # -- stage 1: pure work on a batch, no store -------------------------------------

    def prepare(self, messages: list[Any]) -> Prepared:
        """Validate, gate and turn a batch into rows and fan-out messages. Blocking; no
        store access, so it runs beside the store thread."""
        # Each step over the whole batch before the next: interleaved per message, the
        # same calls took 18% more CPU (190 against 160 µs per item, the same process,
        # alternating, on mixed_items; the validator's and the serializer's code stays
        # in the CPU's caches this way).
        judged = [
            judge(m.value or b"", Source(m.topic, m.partition, m.offset), self.settings)
            for m in messages
        ]
        sends: list[list[Message]] = []
        for i, (message, decision) in enumerate(zip(messages, judged, strict=True)):
            out: list[Message] = []
            if decision.item is not None and decision.profile_id is not None:
                accepted = accepted_for(decision)
                key = decision.profile_id.encode()
                size = len(accepted) + len(key)
                if size > self.fanout_max_bytes:
                    decision = judged[i] = too_large_to_fan_out(
                        decision, size, self.fanout_max_bytes
                    )
                else:
                    out.append((self.names.accepted, accepted, key))
            if decision.refusal is not None:
                out.insert(0, (self.names.dead_letters, dead_letter_for(decision), message.key))
            sends.append(out)
        rows: Rows = {}
        ingested_at = datetime.now(UTC)
        for decision in judged:
            for table, batch in rows_for(decision, self.settings, ingested_at).items():
                rows.setdefault(table, []).extend(batch)
        return Prepared(messages, judged, rows, sends, ingested_at)

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

    def write_settled(self, prepared: Prepared, decisions: list[Decision]) -> Settled:
        """Write a settled batch; the messages the store refuses for good are isolated
        (``sinks/bisect.py``) and become dead letters. Blocking; on the store thread.

        Raises :class:`StoreError` for a failure that is not a refusal (the caller
        retries the whole batch: what landed is skipped)."""
        sends = list(prepared.sends)
        final = list(decisions)
        at = {d.source: i for i, d in enumerate(decisions)}
        order = [d.source for d in decisions if not d.duplicate]

        def refuse(i: int, message: str) -> Rows:
            final[i] = refused_by_store(decisions[i], message)
            key = prepared.messages[i].key
            sends[i] = [(self.names.dead_letters, dead_letter_for(final[i]), key)]
            return rows_for(final[i], self.settings, prepared.ingested_at)

        rows = rows_to_write(prepared, decisions)
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
        return Settled(final, sends, dict(done.written))

    def write_batch(self, messages: list[Any]) -> list[Decision]:
        """Prepare, settle and write a batch, without fan-out or commit (what the loop
        does to the store; for benchmarks and tools). Blocking."""
        prepared = self.prepare(messages)
        return self.write_settled(prepared, self.settle(prepared)).decisions

    # -- the loop --------------------------------------------------------------------

    async def wait_idle(self, timeout: float) -> None:
        """Wait until every fetched batch is committed (or ``timeout`` passes)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)

    async def run(self) -> None:
        """Consume, write and commit until cancelled."""
        w = self.settings.worker
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.settings.broker.bootstrap,
            group_id=w.app_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=w.batch_size,
            session_timeout_ms=int(w.session_timeout * 1000),
            heartbeat_interval_ms=int(w.session_timeout * 250),
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.broker.bootstrap,
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            max_batch_size=FANOUT_BATCH_BYTES,
        )
        consumer.subscribe(list(self.names.inputs), listener=_Handover(self))
        await consumer.start()
        await producer.start()
        # One batch prepared ahead: at most one in the queue, one being prepared.
        ready: asyncio.Queue[Prepared] = asyncio.Queue(maxsize=1)
        fetcher = asyncio.create_task(self._fetch(consumer, ready))
        get: asyncio.Future[Prepared] | None = None
        try:
            while True:
                get = asyncio.ensure_future(ready.get())
                await asyncio.wait({get, fetcher}, return_when=asyncio.FIRST_COMPLETED)
                if not get.done():
                    get.cancel()
                    fetcher.result()  # the fetcher failed: raise its error
                    raise RuntimeError("the ingest fetcher stopped")
                await self._finish(get.result(), consumer, producer)
        finally:
            if get is not None and not get.done():
                get.cancel()
            fetcher.cancel()
            with contextlib.suppress(BaseException):
                await fetcher
            self._in_flight = 0
            self._idle.set()
            await asyncio.gather(
                stop_within(producer, "ingest fan-out producer"),
                stop_within(consumer, "ingest consumer"),
            )

    async def _fetch(self, consumer: AIOKafkaConsumer, ready: asyncio.Queue[Prepared]) -> None:
        w = self.settings.worker
        loop = asyncio.get_running_loop()
        while True:
            fetched = await consumer.getmany(
                timeout_ms=int(w.batch_seconds * 1000), max_records=w.batch_size
            )
            messages = [m for batch in fetched.values() for m in batch]
            if not messages:
                continue
            self._in_flight += 1
            self._idle.clear()
            prepared = await loop.run_in_executor(self._prepare_thread, self.prepare, messages)
            await ready.put(prepared)

    def _failed(self, stuck_at: dict[tuple[str, int], int]) -> Any:
        """The ``on_failure`` of a store call for a batch stuck at ``stuck_at``."""

        def note(exc: StoreError, failure: Failure) -> None:
            # A failure may have landed some tables: read the marks again before retrying.
            self.sink.forget()
            self.liveness.failed(short_message(str(exc)), failure.value, time.time(), stuck_at)

        return note

    async def _write(self, prepared: Prepared, decisions: list[Decision]) -> Settled:
        """Write a settled batch until it is written (backing off while the store fails)."""
        return await retrying(
            self.store,
            lambda: self.write_settled(prepared, decisions),
            "write",
            on_failure=self._failed(prepared.stuck_at()),
        )

    async def _finish(
        self, prepared: Prepared, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer
    ) -> None:
        """Settle, write, erase, fan out and commit one prepared batch."""
        stuck_at = prepared.stuck_at()
        decisions = await retrying(
            self.store,
            lambda: self.settle(prepared),
            "key look-up",
            on_failure=self._failed(stuck_at),
        )
        settled = await self._write(prepared, decisions)
        decisions = settled.decisions
        subjects = list(
            dict.fromkeys(
                (d.item.space_id, d.profile_id)
                for d in decisions
                if isinstance(d.item, Command) and d.item.command == "erase" and d.profile_id
            )
        )
        if subjects:  # every erase of the batch in one go: one statement per table
            erasures = await retrying(
                self.store,
                lambda: erase_subjects(self.store.store, subjects),
                "erasure",
                on_failure=self._failed(stuck_at),
            )
            log.info(
                "erased %d subjects (%d rows)",
                len(erasures),
                sum(sum(e.deleted.values()) for e in erasures),
            )
        # The broker has the fan-out before we commit.
        await send_all(
            producer,
            (
                m
                for d, out in zip(decisions, settled.sends, strict=True)
                if not d.duplicate
                for m in out
            ),
        )
        offsets: dict[TopicPartition, int] = {}
        for m in prepared.messages:
            tp = TopicPartition(m.topic, m.partition)
            offsets[tp] = max(offsets.get(tp, 0), m.offset + 1)
        try:
            await consumer.commit(offsets)
        except (CommitFailedError, KafkaError) as exc:
            # A rebalance took the partitions: the next owner replays the batch, and the
            # idempotent sink makes that a no-op.
            log.warning("commit failed, the batch will be replayed: %s", exc)
        self.stats.count(decisions, settled.written)
        self.liveness.progressed(time.time())
        self._in_flight -= 1
        if self._in_flight <= 0:
            self._in_flight = 0
            self._idle.set()


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


def _swap_rows(rows: Rows, swapped: dict[Source, Rows]) -> Rows:
    """``rows`` with the rows of the ``swapped`` messages replaced by the ones given."""
    out: Rows = {
        table: [
            r for r in batch if Source(r["_topic"], r["_partition"], r["_offset"]) not in swapped
        ]
        for table, batch in rows.items()
    }
    for replacement in swapped.values():
        for table, batch in replacement.items():
            out.setdefault(table, []).extend(batch)
    return out
