"""The one batch loop on a real broker, with a driver that records what it is handed:
every message reaches the driver, its messages are sent, offsets are committed after
the driver's work, and after a failure the loop runs again from the last commit; the
driver's liveness record shows the failure, then the progress."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from turnstream.adapters.kafka.admin import ensure_topics, wait_until_drained
from turnstream.config import BrokerSettings, Settings, WorkerSettings
from turnstream.core.liveness import Liveness
from turnstream.entrypoints.kafka.batch_loop import RESTART_DELAY, BatchLoop, Step

pytestmark = pytest.mark.integration

MESSAGES = 300


class Recorder:
    """A driver: records the values it finishes, sends each on, fails once if asked."""

    name = "recorder"
    tick_when_idle = False
    prepare_concurrency = 1
    consumer_options: dict[str, Any] = {}
    max_records: int | None = 40
    producer_options = {"acks": "all"}

    def __init__(self, topic: str, out: str, fail_on: bytes | None = None) -> None:
        self.group = f"g-{uuid.uuid4().hex[:8]}"
        self.topics = (topic,)
        self.out = out
        self.fail_on = fail_on
        self.failures = 0
        self.finished: list[bytes] = []
        self.assigned: list[set[TopicPartition]] = []
        self.batches_done = 0
        self.liveness = Liveness()

    def poll_seconds(self) -> float:
        return 0.1

    def prepare(self, messages: list[Any]) -> list[tuple[TopicPartition, int, bytes]]:
        return [(TopicPartition(m.topic, m.partition), m.offset, m.value) for m in messages]

    async def finish(self, prepared: list[tuple[TopicPartition, int, bytes]]) -> Step:
        failing = self.fail_on is not None and not self.failures
        if failing and any(value == self.fail_on for _, _, value in prepared):
            self.failures += 1
            raise RuntimeError("the store refused the batch")
        self.finished.extend(value for _, _, value in prepared)
        offsets: dict[TopicPartition, int] = {}
        for tp, offset, _ in prepared:
            offsets[tp] = max(offsets.get(tp, 0), offset + 1)

        def done() -> None:
            self.batches_done += 1

        return Step([(self.out, value, None) for _, _, value in prepared], offsets, done)

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        return None

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        self.assigned.append(partitions)


async def _read(bootstrap: str, topic: str, expected: int, timeout: float = 30) -> list[bytes]:
    """The values in ``topic``, read from the start until ``expected`` or ``timeout``."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    values: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while len(values) < expected and time.monotonic() < deadline:
            fetched = await consumer.getmany(timeout_ms=500)
            for batch in fetched.values():
                values.extend(m.value for m in batch)
        return values
    finally:
        await consumer.stop()


async def _count(bootstrap: str, topic: str, expected: int, timeout: float = 30) -> int:
    """Messages in ``topic``, read from the start until ``expected`` or ``timeout``."""
    return len(await _read(bootstrap, topic, expected, timeout))


async def _publish(bootstrap: str, topic: str, out: str) -> None:
    """Create ``topic`` and ``out`` (2 partitions each) and put MESSAGES on ``topic``."""
    await ensure_topics(bootstrap, [topic, out], partitions=2)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for n in range(MESSAGES):
            await producer.send(topic, f"m{n}".encode(), key=str(n % 7).encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _drain(bootstrap: str, driver: Recorder) -> None:
    """Run a batch loop over ``driver`` until its group has consumed everything, then stop it."""
    settings = Settings(
        broker=BrokerSettings(bootstrap=bootstrap), worker=WorkerSettings(session_timeout=6.0)
    )
    loop = BatchLoop(settings, driver)
    stopping = False
    task = asyncio.create_task(loop.run_forever(lambda: stopping))
    try:
        await wait_until_drained(bootstrap, driver.group, driver.topics, timeout=90)
    finally:
        stopping = True
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def _run(bootstrap: str, fail_on: bytes | None) -> Recorder:
    name = f"bl{uuid.uuid4().hex[:8]}"
    topic, out = f"{name}.in", f"{name}.out"
    await _publish(bootstrap, topic, out)
    driver = Recorder(topic, out, fail_on)
    await _drain(bootstrap, driver)
    assert driver.batches_done > 0  # done() ran after the commits
    assert await _count(bootstrap, out, MESSAGES) >= MESSAGES
    return driver


def test_every_message_is_finished_sent_and_committed(kafka_broker: str) -> None:
    driver = asyncio.run(_run(kafka_broker, fail_on=None))
    # Each message once: nothing failed, so nothing was consumed twice.
    assert sorted(driver.finished) == sorted(f"m{n}".encode() for n in range(MESSAGES))
    assert len(driver.assigned) >= 1
    # Progress noted after the commits, no failure.
    assert driver.liveness.last_progress_at is not None
    assert driver.liveness.failing_since is None and driver.liveness.last_error is None


def test_a_failed_batch_is_consumed_again_after_a_restart(kafka_broker: str) -> None:
    started = time.monotonic()
    driver = asyncio.run(_run(kafka_broker, fail_on=b"m150"))
    assert driver.failures == 1
    # Nothing lost: the failed batch was not committed, so the restarted loop read it
    # again from the last commit (batches finished before the failure are not repeated
    # but for those fetched ahead of the commit).
    assert set(driver.finished) == {f"m{n}".encode() for n in range(MESSAGES)}
    # The restart joined the group again, after the restart delay.
    assert len(driver.assigned) >= 2
    assert time.monotonic() - started >= RESTART_DELAY
    # The failed run was noted as a crash, with the error; progress since cleared it.
    live = driver.liveness
    assert live.last_failure == "crash"
    assert live.last_error == "RuntimeError: the store refused the batch"
    assert live.failing_since is None and live.last_progress_at is not None
    assert live.last_progress_at >= (live.last_error_at or 0)


class Ordered(Recorder):
    """Sends each value on under its input key, notes how many batches were delivered
    when each finish began; the first delivery of ``oversize_on`` sends a message larger
    than the broker takes (``message.max.bytes``, 1 MiB): the delivery fails."""

    def __init__(self, topic: str, out: str, oversize_on: bytes | None = None) -> None:
        super().__init__(topic, out)
        self.oversize_on = oversize_on
        self.delivered_at_finish: list[int] = []

    def prepare(self, messages: list[Any]) -> list[tuple[TopicPartition, int, bytes]]:
        return [(TopicPartition(m.topic, m.partition), m.offset, m.value, m.key) for m in messages]

    async def finish(self, prepared: list[Any]) -> Step:
        self.delivered_at_finish.append(self.batches_done)
        await asyncio.sleep(0.05)  # store work: the previous batch's delivery runs meanwhile
        self.finished.extend(value for _, _, value, _ in prepared)
        offsets: dict[TopicPartition, int] = {}
        for tp, offset, _, _ in prepared:
            offsets[tp] = max(offsets.get(tp, 0), offset + 1)
        sends = [(self.out, value, key) for _, _, value, key in prepared]
        if self.oversize_on is not None and any(v == self.oversize_on for _, _, v, _ in prepared):
            self.oversize_on = None
            sends.append((self.out, b"x" * 2 * 1024 * 1024, b"big"))

        def done() -> None:
            self.batches_done += 1

        return Step(sends, offsets, done)


async def _run_ordered(bootstrap: str, oversize_on: bytes | None) -> tuple[Ordered, list[bytes]]:
    name = f"bo{uuid.uuid4().hex[:8]}"
    topic, out = f"{name}.in", f"{name}.out"
    await _publish(bootstrap, topic, out)
    driver = Ordered(topic, out, oversize_on)
    await _drain(bootstrap, driver)
    return driver, await _read(bootstrap, out, MESSAGES)


def _in_order_per_key(sent: list[bytes]) -> None:
    """Per input key (n % 7, one output partition each) the values in input order."""
    by_key: dict[int, list[int]] = {}
    for value in sent:
        n = int(value[1:])
        by_key.setdefault(n % 7, []).append(n)
    for key, numbers in by_key.items():
        assert numbers == sorted(numbers), f"key {key} out of order: {numbers[:20]}"


def test_the_next_batch_is_finished_while_the_last_is_delivered_in_order(
    kafka_broker: str,
) -> None:
    driver, sent = asyncio.run(_run_ordered(kafka_broker, oversize_on=None))
    assert sorted(driver.finished) == sorted(f"m{n}".encode() for n in range(MESSAGES))
    assert sorted(sent) == sorted(f"m{n}".encode() for n in range(MESSAGES))
    _in_order_per_key(sent)
    # Some batch was finished before the previous one was sent and committed (the
    # overlap), and never more than one batch ahead of the deliveries.
    behind = [i - delivered for i, delivered in enumerate(driver.delivered_at_finish)]
    assert max(behind) == 1 and min(behind) >= 0


def test_a_failed_delivery_ends_the_run_and_the_batch_is_consumed_again(
    kafka_broker: str,
) -> None:
    driver, sent = asyncio.run(_run_ordered(kafka_broker, oversize_on=b"m150"))
    live = driver.liveness
    # A Kafka error, so noted as the broker's (batch_loop: what a client raises).
    assert live.last_failure == "broker"
    assert "MessageSizeTooLargeError" in (live.last_error or ""), live.last_error
    # Not committed, so read again after the restart: nothing lost.
    assert set(driver.finished) == {f"m{n}".encode() for n in range(MESSAGES)}
    assert set(sent) >= {f"m{n}".encode() for n in range(MESSAGES)}
    assert live.failing_since is None and live.last_progress_at is not None


class TwoAtOnce(Ordered):
    """Prepares two batches at once, the first of every two slowly, so that the second
    is ready before it; notes how many prepares ran at once."""

    prepare_concurrency = 2

    def __init__(self, topic: str, out: str) -> None:
        super().__init__(topic, out)
        self._lock = threading.Lock()
        self._running = 0
        self._calls = 0
        self.most_at_once = 0

    def prepare(self, messages: list[Any]) -> list[tuple[TopicPartition, int, bytes]]:
        with self._lock:
            self._calls += 1
            slow = self._calls % 2 == 1
            self._running += 1
            self.most_at_once = max(self.most_at_once, self._running)
        try:
            time.sleep(0.15 if slow else 0.0)
            return super().prepare(messages)
        finally:
            with self._lock:
                self._running -= 1


def test_batches_prepared_two_at_once_finish_and_are_sent_in_fetch_order(
    kafka_broker: str,
) -> None:
    async def run() -> tuple[TwoAtOnce, list[bytes]]:
        name = f"bt{uuid.uuid4().hex[:8]}"
        topic, out = f"{name}.in", f"{name}.out"
        await _publish(kafka_broker, topic, out)
        driver = TwoAtOnce(topic, out)
        await _drain(kafka_broker, driver)
        return driver, await _read(kafka_broker, out, MESSAGES)

    driver, sent = asyncio.run(run())
    assert driver.most_at_once == 2  # the second batch was prepared beside the first
    assert sorted(driver.finished) == sorted(f"m{n}".encode() for n in range(MESSAGES))
    _in_order_per_key(driver.finished)  # finished in fetch order, though ready out of it
    _in_order_per_key(sent)
    assert sorted(sent) == sorted(driver.finished)
