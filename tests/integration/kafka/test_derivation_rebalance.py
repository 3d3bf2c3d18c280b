"""Derivation over a rebalance: two members of one consumer group (each its batch loop,
derivation driver and engine, as two workers would have) on the real broker, over one
store (chDB). Items arrive while partitions move back and forth (A alone, B joins, A
leaves, A comes back with what it had cached, B leaves); the inferences in the store
are then those of a replay of the same items on one engine: no member derived from a
state it cached before the other member derived from the same person."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from tests.unit.core.derivation.builders import TYPES
from turnstream.adapters.clickhouse.derivations import DerivationSink
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.kafka.admin import ensure_topics, wait_until_drained
from turnstream.adapters.kafka.topology import topology_of
from turnstream.config import BrokerSettings, Settings, WorkerSettings
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation import events_from_accepted
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.entrypoints.kafka.batch_loop import BatchLoop
from turnstream.entrypoints.kafka.derivation_driver import DerivationDriver

pytestmark = pytest.mark.integration

SESSION = 6.0  # the shortest session timeout the settings take: quick rebalances
PEOPLE = 24
WAVES = 5  # items are published in waves, one between each two membership changes
PER_WAVE = 4  # items per person and wave (two sessions of two)
INFERENCE_SQL = (
    "SELECT id, profile_id, kind, status, weight, confidence, events, sessions "
    "FROM inferences FINAL WHERE status != 'retracted' ORDER BY id"
)


def _items(start: datetime) -> list[list[dict[str, Any]]]:
    """Per wave, the accepted messages of every person: clicks on a few refs (interest)
    and lists shown without a choice (implicit negatives), each wave in new sessions."""
    waves = []
    for wave in range(WAVES):
        out = []
        for person in range(PEOPLE):
            for n in range(PER_WAVE):
                i = wave * PER_WAVE + n
                at = start + timedelta(seconds=10 * i + person / 100)
                common = {
                    "space_id": "acme",
                    "profile_id": f"p{person}",
                    "source": "web",
                    "session_id": f"p{person}-w{wave}-s{n // 2}",
                    "occurred_at": at.isoformat(),
                    "idempotency_key": f"p{person}-{i}",
                }
                ref = f"item_variant:acme:{(person + i) % 3}"
                if n % 2:
                    interaction = {
                        "kind": "presented",
                        "exposure_id": str(uuid.UUID(int=person * 1000 + i, version=4)),
                        "list_id": f"l{i}",
                        "list_kind": "search_products",
                        "page": 1,
                        "delivered_at": (at - timedelta(seconds=1)).isoformat(),
                        "visible_k": 3,
                        "method": "bridge",
                        "items": [{"pos": 1, "ref": "item_variant:acme:9", "shown": {}}],
                    }
                else:
                    interaction = {"kind": "engaged", "exposure_id": None, "ref": ref,
                                   "pos": None, "action": "click"}  # fmt: skip
                out.append({"type": "interaction", **common, "interaction": interaction})
        waves.append(out)
    return waves


def _replayed(settings: Settings, waves: list[list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    """The inferences one engine derives from every item, fired once (event time)."""
    engine = SignalsEngine(settings.signals, types_for=lambda _space: TYPES)
    for message in (m for wave in waves for m in wave):
        for one in events_from_accepted(message):
            engine.offer(one, one.occurred_at)
    rows = [
        (
            i.id,
            i.profile_id,
            i.kind,
            i.status,
            i.weight,
            i.confidence,
            i.evidence.events,
            i.evidence.sessions,
        )
        for d in engine.fire_all()
        for i in d.inferences
        if i.status != "retracted"
    ]
    return _rounded(rows)


def _rounded(rows: Iterable[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Rows with weight and confidence rounded (the store keeps floats), sorted."""
    return sorted((*r[:4], round(r[4], 9), round(r[5], 9), *r[6:]) for r in rows)


class Member:
    """One worker's derivation: its engine (kept across runs, as a worker's loop keeps
    it over a restart), driver and loop; ``start`` joins the group, ``leave`` leaves."""

    def __init__(self, settings: Settings, shared: AsyncStore) -> None:
        sink = DerivationSink(shared.store)
        self.engine = SignalsEngine(
            settings.signals,
            types_for=lambda _space: TYPES,
            load_states=sink.load_states,
            load_tombstones=sink.load_tombstones,
        )
        topology = topology_of(settings)
        self.driver = DerivationDriver(settings, topology, shared, self.engine, sink, tick=0.2)
        self.loop = BatchLoop(settings, self.driver, on_held=self._held)
        self.held: set[Any] = set()
        self.task: asyncio.Task[None] | None = None
        self.stopping = False

    async def _held(self, partitions: set[Any]) -> None:
        self.held = partitions

    def start(self) -> None:
        self.stopping = False
        self.task = asyncio.create_task(self.loop.run_forever(lambda: self.stopping))

    async def leave(self) -> None:
        self.stopping = True
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None


async def _until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def _scenario(bootstrap: str, store: Store) -> None:
    name = f"reb{uuid.uuid4().hex[:8]}"
    settings = Settings(
        broker=BrokerSettings(bootstrap=bootstrap),
        worker=WorkerSettings(session_timeout=SESSION, topic_prefix=name, app_id=name),
        signals=SignalsConfig(quiet_seconds=0.5, oldest_pending_seconds=1.5),
    )
    topology = topology_of(settings)
    accepted, group = topology.names.accepted, topology.derivation.group
    await ensure_topics(bootstrap, [accepted, topology.names.inferences], partitions=4)
    waves = _items(datetime.now(UTC) - timedelta(hours=1))
    shared = AsyncStore(store)
    a, b = Member(settings, shared), Member(settings, shared)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()

    async def publish(wave: list[dict[str, Any]]) -> None:
        """One wave, sent over ~2 s: items arrive while the group rebalances."""
        for n, message in enumerate(wave):
            value = json.dumps(message).encode()
            await producer.send(accepted, value, key=message["profile_id"].encode())
            if n % 16 == 15:
                await asyncio.sleep(0.08)
        await producer.flush()

    async def settle() -> None:
        await wait_until_drained(bootstrap, group, [accepted], timeout=120)

    try:
        a.start()  # A alone
        await publish(waves[0])
        await settle()
        assert a.engine.states  # A has cached the states of people it derived
        b.start()  # B joins: the partitions split
        await _until(lambda: bool(a.held and b.held), 120, "both members to hold partitions")
        await publish(waves[1])
        await settle()
        assert b.driver.derivations > 0
        await a.leave()  # A leaves: B takes every partition, wave 2 on B
        await publish(waves[2])
        await settle()
        a.start()  # A comes back with its engine: some partitions move back to A
        await _until(lambda: bool(a.held and b.held), 120, "A to hold partitions again")
        await publish(waves[3])
        await settle()
        await b.leave()  # B leaves: A again holds them all
        await publish(waves[4])
        await settle()
        assert a.driver.derivations and b.driver.derivations
    finally:
        for member in (a, b):
            await member.leave()
        await producer.stop()
        shared._executor.shutdown(wait=True)

    live = _rounded(store.query(INFERENCE_SQL).rows)
    expected = _replayed(settings, waves)
    assert {r[2] for r in expected} >= {"interest", "implicit_negative"}
    assert len({r[1] for r in live}) == PEOPLE
    assert live == expected


def test_partitions_moving_back_and_forth_derive_as_a_replay(
    kafka_broker: str, store: Store
) -> None:
    asyncio.run(_scenario(kafka_broker, store))
