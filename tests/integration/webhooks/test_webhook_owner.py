"""One webhook sender per store: two worker-like members of one consumer group on the
real broker, each with its batch loop, its partition role and its webhook sender, over
one store (chDB). Only the member holding partition 0 sends; a sampler never sees both
hold it; when that member leaves, the other takes over and delivers the next event, and
each event reaches the receiver once."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from aiokafka import TopicPartition

from turnstream.adapters.clickhouse.review_requests import open_review
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.ownership import PartitionRole
from turnstream.adapters.webhooks.sender import WebhookSender
from turnstream.config import BrokerSettings, Settings, WorkerSettings
from turnstream.core.liveness import Liveness
from turnstream.core.webhooks import EVENT_TYPES, Endpoint
from turnstream.entrypoints.kafka.batch_loop import BatchLoop, Step
from turnstream.models.requests import ReviewRequestIn

pytestmark = pytest.mark.integration

SESSION = 6.0  # the shortest session timeout the settings take: a quick takeover


class Idle:
    """A driver that commits what it reads (the group's members need a loop)."""

    name = "member"
    tick_when_idle = False
    prepare_concurrency = 1
    consumer_options: dict[str, Any] = {}
    max_records: int | None = 100
    producer_options: dict[str, Any] = {"acks": "all"}

    def __init__(self, group: str, topic: str) -> None:
        self.group, self.topics = group, (topic,)
        self.liveness = Liveness()

    def poll_seconds(self) -> float:
        return 0.2

    def prepare(self, messages: list[Any]) -> list[Any]:
        return messages

    async def finish(self, prepared: list[Any]) -> Step:
        offsets = {TopicPartition(m.topic, m.partition): m.offset + 1 for m in prepared}
        return Step((), offsets)

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        return None

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        return None


class Member:
    """One worker-like member: loop, role, sender; ``leave`` stops it for good."""

    def __init__(self, settings: Settings, group: str, topic: str, store: AsyncStore,
                 endpoint: Endpoint) -> None:  # fmt: skip
        self.driver = Idle(group, topic)
        self.role = PartitionRole(topic, self.driver.liveness, 0.75 * SESSION)
        self.loop = BatchLoop(settings, self.driver, on_held=self.role.held_partitions)
        self.sender = WebhookSender(store, [endpoint])
        self.stopping = False
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        stop = lambda: self.stopping  # noqa: E731
        self.tasks = [
            asyncio.create_task(self.loop.run_forever(stop)),
            asyncio.create_task(self.sender.run_forever(stop, self.role)),
        ]

    async def leave(self) -> None:
        self.stopping = True
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def _until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


async def _scenario(bootstrap: str, store: Store) -> None:
    received: list[str] = []

    async def hook(request: web.Request) -> web.Response:
        await request.read()
        received.append(request.headers["Turnstream-Event-Id"])
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    endpoint = Endpoint(  # the receiver is on loopback: allowed by name, as a config would
        "acme", "desk", f"http://127.0.0.1:{port}/hook", b"s3cret", frozenset(EVENT_TYPES), True
    )

    name = f"own{uuid.uuid4().hex[:8]}"
    topic, group = f"{name}.accepted", f"{name}-signals"
    await ensure_topics(bootstrap, [topic], partitions=2)
    settings = Settings(
        broker=BrokerSettings(bootstrap=bootstrap), worker=WorkerSettings(session_timeout=SESSION)
    )
    shared = AsyncStore(store)
    a, b = (Member(settings, group, topic, shared, endpoint) for _ in range(2))

    both: list[float] = []
    sampling = True

    async def sample() -> None:
        while sampling:
            if a.role.held() and b.role.held():
                both.append(time.monotonic())
            await asyncio.sleep(0.05)

    sampler = asyncio.create_task(sample())
    try:
        a.start()
        await _until(a.role.held, 60, "the first member to hold partition 0")
        b.start()
        # Both in the group (each holds a partition of two), one of them the role.
        await _until(lambda: bool(b.driver.liveness.last_contact_at), 60, "the second member")
        await asyncio.sleep(3 * SESSION / 4)
        await _until(lambda: a.role.held() != b.role.held(), 60, "one holder")
        holder, other = (a, b) if a.role.held() else (b, a)

        review = ReviewRequestIn(space_id="acme", receipts=["rcpt_1"], reason="porquê?")
        first = await shared.run(open_review, store, "p_one", review)
        created = f"evt_{first['id']}.created"
        await _until(lambda: created in received, 60, "the first delivery")
        await asyncio.sleep(2.5)  # a second sender, were there one, would post within this
        assert received.count(created) == 1
        assert (holder.sender.attempts, other.sender.attempts) == (1, 0)

        await holder.leave()
        await _until(other.role.held, 60, "the other member to take over")
        second = await shared.run(open_review, store, "p_two", review)
        created_2 = f"evt_{second['id']}.created"
        await _until(lambda: created_2 in received, 60, "the delivery after the takeover")
        await asyncio.sleep(2.5)
        assert received.count(created_2) == 1 and received.count(created) == 1
        assert (holder.sender.attempts, other.sender.attempts) == (1, 1)
        assert not both, f"both members held the role at {len(both)} samples"
    finally:
        sampling = False
        await sampler
        for member in (a, b):
            await member.leave()
        await runner.cleanup()
        shared._executor.shutdown(wait=True)


def test_one_sender_runs_and_the_other_takes_over(kafka_broker: str, store: Store) -> None:
    asyncio.run(_scenario(kafka_broker, store))
