"""The scheduler's jobs on one member of many, chosen by the broker: two members of the
control topic's group on the real broker; a sampler never sees both hold the role, the
jobs each tick asks about run on one member only; when it stops, the other takes over
within seconds (a graceful stop leaves the group); when it comes back, one of the two
holds the role (a rebalance may move it, the old holder letting go first)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import pytest

from turnstream.config import BrokerSettings, Settings, WorkerSettings
from turnstream.entrypoints.kafka.singleton import BrokerSingleton, control_topic

pytestmark = pytest.mark.integration

SESSION = 6.0


class Candidate:
    """A scheduler-like member: its singleton, and the job runs it made."""

    def __init__(self, settings: Settings) -> None:
        self.owner = BrokerSingleton(settings, "scheduler")
        self.runs = 0
        self.stopping = False
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.stopping = False
        self.task = asyncio.create_task(self.owner.run(lambda: self.stopping))

    async def stop(self) -> None:
        self.stopping = True
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    def tick(self) -> None:
        """What a cron firing does: run the job only while holding the role."""
        if self.owner.held():
            self.runs += 1


async def _until(condition: Callable[[], bool], timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def _scenario(bootstrap: str) -> None:
    name = f"one{uuid.uuid4().hex[:8]}"
    settings = Settings(
        broker=BrokerSettings(bootstrap=bootstrap),
        worker=WorkerSettings(session_timeout=SESSION, topic_prefix=name, app_id=name),
    )
    assert control_topic(settings, "scheduler") == f"{name}.scheduler-owner"
    a, b = Candidate(settings), Candidate(settings)
    both: list[float] = []
    sampling = True

    async def cron() -> None:
        while sampling:
            if a.owner.held() and b.owner.held():
                both.append(time.monotonic())
            a.tick()
            b.tick()
            await asyncio.sleep(0.05)

    clock = asyncio.create_task(cron())
    try:
        a.start()
        await _until(a.owner.held, 90, "the first member to hold the role")
        b.start()
        await _until(lambda: bool(b.owner.member.liveness.last_contact_at), 60, "the second")
        await asyncio.sleep(SESSION)  # both in the group: the rebalance may move the role
        await _until(lambda: a.owner.held() != b.owner.held(), 60, "one holder")
        holder, other = (a, b) if a.owner.held() else (b, a)
        runs = (holder.runs, other.runs)
        await asyncio.sleep(1.0)
        assert holder.runs > runs[0] and other.runs == runs[1]

        await holder.stop()  # the holder stops: the other takes over
        assert not holder.owner.held()
        took = await _until(other.owner.held, 60, "the other member to take over")
        assert took < SESSION  # a graceful stop hands over without waiting for the timeout
        runs = (holder.runs, other.runs)
        await asyncio.sleep(1.0)
        assert other.runs > runs[1] and holder.runs == runs[0]

        back = time.time()
        holder.start()  # back in the group
        contact = lambda: (holder.owner.member.liveness.last_contact_at or 0) > back  # noqa: E731
        await _until(contact, 60, "the first holder in the group again")
        await asyncio.sleep(SESSION)
        await _until(lambda: a.owner.held() != b.owner.held(), 60, "one holder again")
        assert not both, f"both members held the role at {len(both)} samples"
    finally:
        sampling = False
        await clock
        for one in (a, b):
            await one.stop()


def test_one_member_runs_the_jobs_and_another_takes_over(kafka_broker: str) -> None:
    asyncio.run(_scenario(kafka_broker))
