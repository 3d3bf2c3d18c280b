"""One member of many runs a task (the scheduler's jobs), chosen by the broker: every
candidate joins one consumer group on a one-partition control topic (nothing is ever
written to it), and the member the group assigns that partition holds the role
(:class:`~turnstream.adapters.kafka.ownership.PartitionRole`, as the webhook sender's). A
member that stops leaves the group and the partition goes to another at once; one that
dies or is cut off from the broker loses it after ``worker.session_timeout``, and its
role lapses earlier (3/4 of it without contact), so two members never hold it together
while the broker is reachable.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from typing import Any

from aiokafka import TopicPartition

from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.ownership import PartitionRole
from turnstream.config import Settings
from turnstream.core.liveness import Liveness
from turnstream.entrypoints.kafka.batch_loop import RESTART_DELAY, BatchLoop, Step

__all__ = ["BrokerSingleton", "control_topic"]

log = logging.getLogger(__name__)


def control_topic(settings: Settings, role: str) -> str:
    """The one-partition topic whose owner holds ``role`` (``<topic_prefix>.<role>-owner``)."""
    return f"{settings.worker.topic_prefix}.{role}-owner"


class _Member:
    """A batch-loop driver that only keeps the member in the group (the topic is empty)."""

    tick_when_idle = False
    prepare_concurrency = 1
    consumer_options: dict[str, Any] = {}
    max_records: int | None = 1
    producer_options: dict[str, Any] = {"acks": "all"}

    def __init__(self, name: str, group: str, topic: str) -> None:
        self.name, self.group, self.topics = name, group, (topic,)
        self.liveness = Liveness()

    def poll_seconds(self) -> float:
        return 1.0

    def prepare(self, messages: list[Any]) -> list[Any]:
        return messages

    async def finish(self, prepared: list[Any]) -> Step:
        return Step((), {TopicPartition(m.topic, m.partition): m.offset + 1 for m in prepared})

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        return None

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        return None


class BrokerSingleton:
    """Whether this process holds ``role`` among every process that asks for it with the
    same ``worker.app_id`` and ``worker.topic_prefix`` on the same broker."""

    def __init__(self, settings: Settings, role: str) -> None:
        self.settings = settings
        self.role_name = role
        self.topic = control_topic(settings, role)
        group = f"{settings.worker.app_id}-{role}"
        self.member = _Member(f"{role} owner", group, self.topic)
        timeout = settings.worker.session_timeout
        self.role = PartitionRole(self.topic, self.member.liveness, 0.75 * timeout)
        self.loop = BatchLoop(settings, self.member, on_held=self._held)
        self._stopping = False
        self._thread: threading.Thread | None = None

    def held(self) -> bool:
        """Whether this process may run the task now (callable from any thread)."""
        return self.role.held()

    async def _held(self, partitions: set[TopicPartition]) -> None:
        was = self.role.held()
        await self.role.held_partitions(partitions)
        if self.role.partition in partitions and not was:
            log.info("%s: this process holds the role", self.role_name)
        elif was and self.role.partition not in partitions and self._stopping:
            log.info("%s: this process stops and gives the role up", self.role_name)
        elif was and self.role.partition not in partitions:
            log.info("%s: the role went to another process", self.role_name)

    async def run(self, should_stop: Callable[[], bool] | None = None) -> None:
        """Create the control topic if missing, then stay in the group until stopped."""
        stop = should_stop or (lambda: self._stopping)
        bootstrap = self.settings.broker.bootstrap
        while True:  # a broker not up yet: try again, as the loop itself does
            try:
                await ensure_topics(
                    bootstrap, [self.topic], partitions=1, options=client_options(self.settings)
                )
                break
            except Exception as exc:
                log.warning("%s: control topic not ready (%s); retrying", self.role_name, exc)
                await asyncio.sleep(RESTART_DELAY)
        await self.loop.run_forever(stop)

    def start(self) -> None:
        """Run :meth:`run` on a thread of its own (for a blocking caller: the scheduler)."""

        def main() -> None:
            async def until_stopped() -> None:
                task = asyncio.create_task(self.run())
                while not self._stopping:
                    await asyncio.sleep(0.2)
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

            asyncio.run(until_stopped())

        self._thread = threading.Thread(target=main, name=f"turnstream-{self.role_name}-owner")
        self._thread.daemon = True
        self._thread.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Leave the group (the role moves at once) and end the thread."""
        self._stopping = True
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
