"""The derivation driver: accepted items in; exposures, inferences and their events out,
on processing time. It runs on the one batch loop (:mod:`turnstream.entrypoints.kafka.batch_loop`).

Pending events live in memory and are never committed: the loop commits, per partition,
only below the oldest event still pending, so after a crash the pending events are
simply consumed again. Folded evidence is saved in ``signal_state`` with each
derivation, and folding skips events it already folded, so nothing counts twice.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import msgspec
from aiokafka import TopicPartition

from turnstream.adapters.clickhouse.derivations import DerivationSink
from turnstream.adapters.clickhouse.priors import settled_spaces
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.adapters.kafka.clients import BACKLOG_FETCH
from turnstream.adapters.kafka.topology import Topology
from turnstream.config import Settings
from turnstream.core.derivation import events_from_accepted, holds_no_events
from turnstream.core.derivation.engine import Derivation, PersonKey, SignalsEngine
from turnstream.core.derivation.first_fit import FirstFits
from turnstream.core.liveness import Liveness
from turnstream.entrypoints.kafka.batch_loop import Step
from turnstream.service.derive import derive_due
from turnstream.service.rederive import Rederived, rederive_people

__all__ = [
    "MAX_STATES_IN_MEMORY",
    "MIN_FIRE_INTERVAL",
    "DerivationDriver",
    "Parsed",
    "parse_accepted",
]

log = logging.getLogger(__name__)

#: People whose folded state stays in memory between derivations; beyond it, the least
#: recently derived with nothing pending are dropped and loaded back from
#: ``signal_state`` when they next fire (one query per firing for all of them).
MAX_STATES_IN_MEMORY = 20_000

#: The driver fires as soon as a session is due, but not more often than this (seconds):
#: each firing writes its derivations and may commit.
MIN_FIRE_INTERVAL = 0.1

#: Per accepted message: its partition, its offset and its signal events.
Parsed = list[tuple[TopicPartition, int, list[Any]]]


#: msgspec's decoder reads an accepted message (~600 bytes for a mixed item) in 3.3 µs of
#: CPU against 8.8 for ``json.loads`` (bench/derivation_parse.py); it reads integers
#: beyond 64 bits exactly (orjson turns them into floats, so it is not used here).
_decode = msgspec.json.Decoder().decode


def _loads(value: bytes) -> Any:
    """An accepted message's JSON, as ``json.loads`` reads it. What msgspec refuses and
    the standard library reads (``NaN``, ``1e400``, a lone surrogate, a byte-order mark)
    is read by ``json.loads``, so the events are the same whichever reads it."""
    try:
        return _decode(value)
    except msgspec.DecodeError:
        return json.loads(value)


def parse_accepted(messages: list[Any]) -> Parsed:
    """Per consumer record of the accepted topic: its partition, offset and signal
    events; an unreadable message is logged and gives none."""
    out = []
    partitions: dict[tuple[str, int], TopicPartition] = {}
    for m in messages:
        tp = partitions.get((m.topic, m.partition))
        if tp is None:
            tp = partitions[(m.topic, m.partition)] = TopicPartition(m.topic, m.partition)
        if m.value is not None and holds_no_events(m.value):  # a turn without interactions
            out.append((tp, m.offset, []))
            continue
        try:
            events = events_from_accepted(_loads(m.value))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # AttributeError: valid JSON that is not an object (``[1, 2]``, ``"x"``).
            log.error("skipping unreadable accepted message %s@%d: %s", tp, m.offset, exc)
            events = []
        out.append((tp, m.offset, events))
    return out


class DerivationDriver:
    """The accepted topic: hold events per session, fire due triggers every ``tick``
    seconds at most (sooner when the next session is due)."""

    name = "derivation"
    tick_when_idle = True
    prepare_concurrency = 1
    consumer_options = BACKLOG_FETCH
    max_records: int | None = None
    producer_options = {"acks": "all"}

    def __init__(
        self,
        settings: Settings,
        topology: Topology,
        store: AsyncStore,
        engine: SignalsEngine,
        sink: DerivationSink,
        tick: float = 1.0,
        first_fits: FirstFits | None = None,
    ) -> None:
        """``first_fits``: which new spaces to fit before the night (none: no such fit);
        :attr:`run_fit` runs the fit of the spaces due (set by the app: off this loop)."""
        self.settings = settings
        self.store = store
        self.engine = engine
        self.sink = sink
        self.tick = tick
        self.inferences_topic = topology.names.inferences
        processor = topology.derivation
        self.group = processor.group
        self.topics = processor.reads
        self.derivations = 0
        #: CPU seconds of the store thread spent holding events and firing (its own
        #: thread's time: chDB's work for the driver's queries and inserts included,
        #: ingestion's calls on the same thread not).
        self.cpu_seconds = 0.0
        self.liveness = Liveness()
        self._consumed: dict[TopicPartition, int] = {}
        self._last_fire = 0.0
        # The engine's next due time as of its last change, read by the fetch stage
        # while the store thread may be changing the engine.
        self._next_due: datetime | None = None
        self.first_fits = first_fits
        self._settled_read = False
        self.run_fit: Callable[[list[str]], None] | None = None

    def poll_seconds(self) -> float:
        """Wake for the next due session (the heap knows when), not only every tick."""
        upcoming = self._next_due
        if upcoming is None:
            return self.tick
        ahead = (upcoming - datetime.now(UTC)).total_seconds()
        return min(self.tick, max(MIN_FIRE_INTERVAL, ahead))

    def prepare(self, messages: list[Any]) -> Parsed:
        """The signal events of each accepted message (pure; off the store thread)."""
        return parse_accepted(messages)

    def _offer(self, parsed: Parsed, now: datetime) -> None:
        started = time.thread_time()
        # One call for the batch, each event held as offer holds it at ``(tp, offset)``
        # (bench/offer_cost.py: the cost per accepted message).
        self.engine.offer_many(now, parsed)
        consumed = self._consumed
        for tp, offset, _ in parsed:
            consumed[tp] = offset + 1
        self._next_due = self.engine.next_due()
        self.cpu_seconds += time.thread_time() - started

    def rederive(self, people: Sequence[PersonKey], since: datetime | None = None) -> Rederived:
        """Derive ``people`` again with their spaces' latest priors and write what
        changed (the priors job's :data:`~turnstream.jobs.rederive.Rederive`). Blocking,
        from the jobs thread (never the store thread's own): the call runs on the store
        thread as one unit, so never beside a firing, and a state held in memory is the
        one derived (and kept)."""
        return self.store.call(self._rederive, people, since)

    def _rederive(self, people: Sequence[PersonKey], since: datetime | None) -> Rederived:
        done = rederive_people(self.engine, self.sink, people, since)
        self.cpu_seconds += done.cpu_seconds
        return done

    def _fire(self, now: datetime) -> tuple[list[Derivation], dict[TopicPartition, int]]:
        started = time.thread_time()
        derivations = derive_due(self.engine, self.sink, now)
        self._next_due = self.engine.next_due()
        if self.first_fits is not None and derivations:
            if not self._settled_read:
                self.first_fits.settle(settled_spaces(self.sink.store, datetime.now(UTC).date()))
                self._settled_read = True
            self.first_fits.took(derivations, time.monotonic())
        safe = dict(self._consumed)
        for tp, offset in self.engine.oldest_held().items():
            safe[tp] = min(safe.get(tp, offset), offset)
        self.cpu_seconds += time.thread_time() - started
        return derivations, safe

    async def finish(self, parsed: Parsed) -> Step:
        """Hold the batch's events; when a tick has passed (or a session is due), fire
        and write what is due. The inferences to send; the offsets safe to commit."""
        now = datetime.now(UTC)
        if parsed:
            await self.store.run(self._offer, parsed, now)
        since = time.monotonic() - self._last_fire
        upcoming = self._next_due
        due_now = upcoming is not None and upcoming <= now
        if since < (MIN_FIRE_INTERVAL if due_now else self.tick):
            return Step()
        self._last_fire = time.monotonic()
        derivations, safe = await self.store.run(self._fire, now)
        self.derivations += len(derivations)
        if self.first_fits is not None and self.run_fit is not None:
            due = self.first_fits.due(time.monotonic())
            if due:
                self.run_fit(due)
        return Step(
            messages=[
                (
                    self.inferences_topic,
                    json.dumps(i.to_dict(), default=str).encode(),
                    d.profile_id.encode(),
                )
                for d in derivations
                for i in d.inferences
            ],
            offsets=safe,
        )

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        """Partitions that move to another worker take their pending sessions with them,
        and every state cached for their people goes: the next owner derives from the
        store, and so does this worker if the partition comes back."""
        sessions, states = await self.store.run(self._drop, partitions)
        if sessions or states:
            log.info("handed over %d pending sessions and %d cached states with %d partitions",
                     sessions, states, len(partitions))  # fmt: skip

    def _drop(self, partitions: set[TopicPartition]) -> tuple[int, int]:
        dropped = self.engine.drop_partitions(partitions)
        for tp in partitions:
            self._consumed.pop(tp, None)
        self._next_due = self.engine.next_due()
        return dropped

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        """The events of new partitions arrive from their last commit, and their people's
        states are read from the store. Rebalancing is eager (every partition is revoked
        first), so whatever the engine still holds is from before: a run that ended
        without a revocation (a failure) leaves sessions and states of partitions that
        may be another worker's now, and they all go. The erase tombstones are read
        again (another worker may have erased meanwhile)."""
        await self.store.run(self._drop_all, partitions)
        await self.store.run(self.engine.reload_tombstones)

    def _drop_all(self, partitions: set[TopicPartition]) -> tuple[int, int]:
        return self._drop(partitions | self.engine.partitions())
