"""The fan-out sender on a real broker: every message lands once, in the partition
``send`` would have chosen for its key, in order, oversized ones included."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.entrypoints.kafka.fanout import send_all

pytestmark = pytest.mark.integration


async def _run(bootstrap: str) -> tuple[dict, dict, dict]:
    topics = [f"fanout-{uuid.uuid4().hex[:8]}-{n}" for n in range(2)]
    reference = f"fanout-{uuid.uuid4().hex[:8]}-ref"
    await ensure_topics(bootstrap, [*topics, reference], partitions=4)
    messages = []
    for i in range(3_000):
        key = f"profile-{i % 37}".encode() if i % 10 else None  # some without a key
        value = f"{i:05d}".encode() + (b"x" * 600_000 if i == 1_234 else b"")
        messages.append((topics[i % 2], value, key))
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
        max_batch_size=512 * 1024,
    )  # fmt: skip
    await producer.start()
    try:
        assert await send_all(producer, messages) == len(messages)
        # Where the plain send puts each key, for comparison.
        expected = {}
        for n in range(37):
            key = f"profile-{n}".encode()
            meta = await producer.send_and_wait(reference, b"-", key=key)
            expected[key] = meta.partition
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        *topics, bootstrap_servers=bootstrap, auto_offset_reset="earliest",
        max_partition_fetch_bytes=2 * 1024 * 1024, fetch_max_bytes=8 * 1024 * 1024,
    )  # fmt: skip
    await consumer.start()
    got: dict[tuple[str, int], list[tuple[bytes | None, bytes]]] = {}
    try:
        deadline = asyncio.get_running_loop().time() + 60
        while sum(map(len, got.values())) < len(messages):
            assert asyncio.get_running_loop().time() < deadline, "messages missing"
            for tp, batch in (await consumer.getmany(timeout_ms=1000)).items():
                got.setdefault((tp.topic, tp.partition), []).extend((m.key, m.value) for m in batch)
    finally:
        await consumer.stop()
    sent = {}
    for topic, value, key in messages:
        sent.setdefault(topic, []).append((key, value))
    return got, expected, sent


def test_every_message_once_in_its_key_partition_in_order(kafka_broker: str) -> None:
    got, expected, sent = asyncio.run(_run(kafka_broker))
    received = [m for batch in got.values() for m in batch]
    assert sorted(v for _, v in received) == sorted(v for batch in sent.values() for _, v in batch)
    for (topic, partition), batch in got.items():
        for key, _ in batch:
            if key is not None:
                assert expected[key] == partition, (key, partition)
        # In each partition, the order the messages were given in.
        here = {v for _, v in batch}
        assert [v for _, v in batch] == [v for _, v in sent[topic] if v in here]
    assert any(len(v) > 600_000 for _, v in received)
