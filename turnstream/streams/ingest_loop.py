"""The ingest loop: consume a batch, rule on it, write it, fan it out, then commit.

Offsets are committed only after the batch is in the store and its fan-out messages are
acknowledged by the broker, so a crash anywhere replays the batch, and the idempotent
sink (insert tokens plus per-partition high-water marks) makes the replay a no-op.

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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError

from turnstream.config import Settings
from turnstream.models import Command
from turnstream.models.deadletter import MAX_ORIGINAL_BYTES, DeadLetter
from turnstream.sinks.erasure import erase_subject
from turnstream.sinks.keys import KeyRegistry
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import AsyncStore
from turnstream.sinks.writer import RawSink, write_with_retry
from turnstream.streams.ingest import Decision, Source, dedupe, judge
from turnstream.streams.topics import TopicNames

__all__ = ["IngestLoop", "IngestStats", "accepted_for", "dead_letter_for"]

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
    """The fan-out message of an accepted item: the item without its handle."""
    assert decision.item is not None
    body = decision.item.model_dump(mode="json", by_alias=True, exclude={"handle"})
    body["profile_id"] = decision.profile_id
    if not decision.keep_interactions and "interactions" in body:
        body["interactions"] = []
    return json.dumps(body, separators=(",", ":")).encode()


class _ForgetMarks(ConsumerRebalanceListener):
    """After a rebalance another worker may have written our new partitions."""

    def __init__(self, sink: RawSink) -> None:
        self.sink = sink

    async def on_partitions_revoked(self, revoked: Any) -> None:
        self.sink.forget()

    async def on_partitions_assigned(self, assigned: Any) -> None:
        self.sink.forget()


class IngestLoop:
    """Consumes the input topics in batches until cancelled."""

    def __init__(self, settings: Settings, store: AsyncStore) -> None:
        self.settings = settings
        self.store = store
        self.sink = RawSink(store.store)
        self.keys = KeyRegistry(store.store)
        self.stats = IngestStats()
        self.names = TopicNames(settings.worker.topic_prefix)

    def decide_batch(self, messages: list[Any]) -> list[Decision]:
        """Rule on each message in order, taking idempotency keys as it goes. Blocking."""
        judged = [
            judge(m.value or b"", Source(m.topic, m.partition, m.offset), self.settings)
            for m in messages
        ]
        # One store look-up per batch for every key the batch could take.
        taken = self.keys.lookup(d.dedup_key for d in judged)
        decisions = []
        for decision in judged:
            final = dedupe(decision, taken.get)
            if not final.duplicate:
                taken.setdefault(final.dedup_key, final.source)  # a second copy in the batch
            decisions.append(final)
        return decisions

    def rows(self, decisions: list[Decision]) -> Rows:
        """Every raw row of a batch."""
        out: Rows = {}
        ingested_at = datetime.now(UTC)
        for decision in decisions:
            for table, batch in rows_for(decision, self.settings, ingested_at).items():
                out.setdefault(table, []).extend(batch)
        return out

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
        consumer.subscribe(list(self.names.inputs), listener=_ForgetMarks(self.sink))
        await consumer.start()
        await producer.start()
        try:
            while True:
                fetched = await consumer.getmany(
                    timeout_ms=int(w.batch_seconds * 1000), max_records=w.batch_size
                )
                messages = [m for batch in fetched.values() for m in batch]
                if messages:
                    await self._handle(messages, consumer, producer)
        finally:
            with contextlib.suppress(Exception):
                await producer.stop()
            with contextlib.suppress(Exception):
                await consumer.stop()

    async def _handle(
        self, messages: list[Any], consumer: AIOKafkaConsumer, producer: AIOKafkaProducer
    ) -> None:
        decisions = await self.store.run(self.decide_batch, messages)
        written = await write_with_retry(self.store, self.sink, self.rows(decisions))
        for d in decisions:
            if isinstance(d.item, Command) and d.item.command == "erase" and d.profile_id:
                erasure = await self.store.run(
                    erase_subject, self.store.store, d.item.space_id, d.profile_id
                )
                log.info("erased a subject from %d tables", len(erasure.tables))
        for d in decisions:
            if not d.duplicate:
                self.keys.remember(d.dedup_key, d.source)
        sends = []
        for message, d in zip(messages, decisions, strict=True):
            if d.refusal is not None:
                sends.append(
                    await producer.send(
                        self.names.dead_letters, dead_letter_for(d), key=message.key
                    )
                )
            if d.item is not None and d.profile_id is not None:
                sends.append(
                    await producer.send(
                        self.names.accepted, accepted_for(d), key=d.profile_id.encode()
                    )
                )
        await asyncio.gather(*sends)  # the broker has the fan-out before we commit
        offsets: dict[TopicPartition, int] = {}
        for m in messages:
            tp = TopicPartition(m.topic, m.partition)
            offsets[tp] = max(offsets.get(tp, 0), m.offset + 1)
        try:
            await consumer.commit(offsets)
        except (CommitFailedError, KafkaError) as exc:
            # A rebalance took the partitions: the next owner replays the batch, and the
            # idempotent sink makes that a no-op.
            log.warning("commit failed, the batch will be replayed: %s", exc)
        self.stats.count(decisions, written)
