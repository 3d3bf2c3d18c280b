"""The live signals driver: accepted items in, derivations out, on processing time.

Pending events live in memory and are never committed: the consumer commits, per
partition, only below the oldest event still pending, so after a crash the pending
events are simply consumed again. Folded evidence is saved in ``signal_state`` with each
derivation, and folding skips events it already folded, so nothing counts twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

from aiokafka import (
    AIOKafkaConsumer,
    AIOKafkaProducer,
    ConsumerRebalanceListener,
    TopicPartition,
)
from aiokafka.errors import CommitFailedError, KafkaError

from turnstream.config import Settings
from turnstream.jobs.priors import PriorsCache
from turnstream.sinks.signals import load_state, write_derivations
from turnstream.sinks.store import AsyncStore
from turnstream.streams.kafka_clients import stop_within
from turnstream.streams.liveness import Liveness
from turnstream.streams.signals import events_from_accepted
from turnstream.streams.signals.engine import Derivation, SignalsEngine
from turnstream.streams.topics import TopicNames

__all__ = ["SignalsLoop"]

log = logging.getLogger(__name__)

#: People whose folded state stays in memory between derivations; beyond it, the least
#: recently derived with nothing pending are dropped and loaded back from
#: ``signal_state`` when they next fire (one query each).
MAX_STATES_IN_MEMORY = 20_000

#: The loop fires as soon as a session is due, but not more often than this (seconds):
#: each firing writes its derivations and may commit.
MIN_FIRE_INTERVAL = 0.1


class _Handover(ConsumerRebalanceListener):
    """Partitions that move to another worker take their pending sessions with them."""

    def __init__(self, loop: SignalsLoop) -> None:
        self.loop = loop

    async def on_partitions_revoked(self, revoked: Any) -> None:
        gone = set(revoked)
        dropped = await self.loop.store.run(
            self.loop.engine.forget, lambda position: position[0] in gone
        )
        for tp in gone:
            self.loop._consumed.pop(tp, None)
        if dropped:
            log.info("handed over %d pending sessions with %d partitions", dropped, len(gone))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        return None


class SignalsLoop:
    """Consumes the accepted topic, fires due triggers every ``tick`` seconds."""

    def __init__(self, settings: Settings, store: AsyncStore, tick: float = 1.0) -> None:
        self.settings = settings
        self.store = store
        self.tick = tick
        self.names = TopicNames(settings.worker.topic_prefix)
        self.engine = SignalsEngine(
            settings.signals,
            priors_for=PriorsCache(store.store).get,
            load_state=lambda space, profile: load_state(store.store, space, profile),
            max_states=MAX_STATES_IN_MEMORY,
        )
        self.derivations = 0
        self.liveness = Liveness()
        self._parse_thread = ThreadPoolExecutor(1, thread_name_prefix="turnstream-signals")
        self._consumed: dict[TopicPartition, int] = {}

    @property
    def group(self) -> str:
        """The consumer group of the signals driver."""
        return f"{self.settings.worker.app_id}-signals"

    def _parse(self, messages: list[Any]) -> list[tuple[TopicPartition, int, list[Any]]]:
        """The signal events of each accepted message (pure; off the store thread)."""
        out = []
        for m in messages:
            tp = TopicPartition(m.topic, m.partition)
            try:
                events = events_from_accepted(json.loads(m.value))
            except (ValueError, KeyError, TypeError) as exc:
                log.error("skipping unreadable accepted message %s@%d: %s", tp, m.offset, exc)
                events = []
            out.append((tp, m.offset, events))
        return out

    def _offer(self, parsed: list[tuple[TopicPartition, int, list[Any]]], now: datetime) -> None:
        for tp, offset, events in parsed:
            self._consumed[tp] = offset + 1
            for event in events:
                self.engine.offer(event, now, position=(tp, offset))

    def _fire(self, now: datetime) -> tuple[list[Derivation], dict[TopicPartition, int]]:
        derivations = self.engine.fire_due(now)
        if derivations:
            write_derivations(self.store.store, derivations)
        safe = dict(self._consumed)
        for tp, offset in self.engine.oldest_held().items():
            safe[tp] = min(safe.get(tp, offset), offset)
        return derivations, safe

    async def run(self) -> None:
        """Consume and derive until cancelled."""
        bootstrap = self.settings.broker.bootstrap
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=self.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=int(self.settings.worker.session_timeout * 1000),
            heartbeat_interval_ms=int(self.settings.worker.session_timeout * 250),
        )
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
        consumer.subscribe([self.names.accepted], listener=_Handover(self))
        await consumer.start()
        await producer.start()
        committed: dict[TopicPartition, int] = {}
        last_tick = 0.0
        try:
            while True:
                # Wake for the next due session (the heap knows when), not only every tick.
                wait = self.tick
                upcoming = self.engine.next_due()
                if upcoming is not None:
                    ahead = (upcoming - datetime.now(UTC)).total_seconds()
                    wait = min(self.tick, max(MIN_FIRE_INTERVAL, ahead))
                fetched = await consumer.getmany(timeout_ms=int(wait * 1000))
                messages = [m for batch in fetched.values() for m in batch]
                now = datetime.now(UTC)
                if messages:
                    parsed = await asyncio.get_running_loop().run_in_executor(
                        self._parse_thread, self._parse, messages
                    )
                    await self.store.run(self._offer, parsed, now)
                since = time.monotonic() - last_tick
                upcoming = self.engine.next_due()
                due_now = upcoming is not None and upcoming <= now
                if since < (MIN_FIRE_INTERVAL if due_now else self.tick):
                    continue
                last_tick = time.monotonic()
                derivations, safe = await self.store.run(self._fire, now)
                self.derivations += len(derivations)
                sends = [
                    await producer.send(
                        self.names.inferences,
                        json.dumps(i.to_dict(), default=str).encode(),
                        key=d.profile_id.encode(),
                    )
                    for d in derivations
                    for i in d.inferences
                ]
                await asyncio.gather(*sends)
                advance = {tp: o for tp, o in safe.items() if committed.get(tp) != o}
                if advance:
                    try:
                        await consumer.commit(advance)
                        committed.update(advance)
                    except (CommitFailedError, KafkaError) as exc:
                        log.warning("signals commit failed, events will be folded again: %s", exc)
                        continue
                self.liveness.progressed(time.time())
        finally:
            await asyncio.gather(
                stop_within(producer, "inferences producer"),
                stop_within(consumer, "signals consumer"),
            )
