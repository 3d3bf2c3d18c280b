"""Sync agents: ``SyncProducer`` runs the producer on a loop thread of its own, each sync
turn waits for its publish; a sync ``with`` on the producer's own loop is refused when the
turn starts, so no turn is collected and then dropped. (The real broker: the integration
test of turns.)"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from turnstream.errors import TurnstreamError
from turnstream.sdk import Conversation, SyncProducer

PHONE = {"type": "phone_e164", "value": "+5511900005678"}


class FakeProducer:
    """Stands for ``turnstream.adapters.kafka.producer.Producer``: started, publishes, stops on its
    loop."""

    settings = None

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.published: list[dict[str, Any]] = []
        self.stopped = False

    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()

    async def publish(self, item: dict[str, Any]) -> None:
        assert asyncio.get_running_loop() is self.loop
        await asyncio.sleep(0)
        self.published.append(item)

    async def stop(self) -> None:
        self.stopped = True


def _conversation(producer: Any) -> Conversation:
    return Conversation(space="acme", source="web", agent="a", handle=PHONE, producer=producer)


def test_each_sync_turn_is_published_on_the_loop_thread_and_waited_for() -> None:
    fake = FakeProducer()
    with SyncProducer(lambda: fake) as producer:
        assert producer.loop is fake.loop and producer.loop is not None
        assert producer.loop.is_running()
        conversation = _conversation(producer)
        for n in range(3):
            with conversation.turn() as frame:
                frame.measure("t", sent=n, results_checked=n, violations=0, unverifiable=0)
            assert len(fake.published) == n + 1  # published before the `with` returns
        producer.publish_sync({"type": "x"})
    assert fake.stopped and [p["type"] for p in fake.published] == ["turn"] * 3 + ["x"]
    assert producer.loop is None


def test_threads_of_a_sync_agent_share_one_producer() -> None:
    fake = FakeProducer()
    with SyncProducer(lambda: fake) as producer:

        def agent(n: int) -> None:
            conversation = _conversation(producer)
            with conversation.turn(turn_id=f"t{n}"):
                pass

        threads = [threading.Thread(target=agent, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert sorted(p["turn_id"] for p in fake.published) == ["t0", "t1", "t2", "t3"]


def test_a_producer_that_fails_to_start_leaves_no_thread() -> None:
    class Broken(FakeProducer):
        async def start(self) -> None:
            raise ConnectionError("no broker")

    before = threading.active_count()
    sync = SyncProducer(Broken)
    with pytest.raises(ConnectionError):
        sync.start()
    assert sync.loop is None and threading.active_count() == before
    with pytest.raises(TurnstreamError, match="not started"):
        sync.publish({})


def test_a_sync_with_on_the_producer_s_own_loop_is_refused_before_the_body() -> None:
    ran: list[str] = []

    async def agent() -> None:
        fake = FakeProducer()
        await fake.start()
        conversation = _conversation(fake)
        with conversation.turn():
            ran.append("body")  # never: nothing is collected to be dropped

    with pytest.raises(TurnstreamError, match=r"async with conversation\.turn.*SyncProducer"):
        asyncio.run(agent())
    assert ran == []


def test_a_factory_is_needed() -> None:
    with pytest.raises(TurnstreamError, match=r"lambda: Producer\(settings\)"):
        SyncProducer(None)  # type: ignore[arg-type]


def test_a_sync_turn_with_a_producer_not_started_is_refused_before_the_body() -> None:
    sync = SyncProducer(FakeProducer)  # never started
    ran: list[str] = []
    with pytest.raises(TurnstreamError, match="not started"), _conversation(sync).turn():
        ran.append("body")
    assert ran == []
