"""The local Kafka broker: a produce/consume round trip, and the LocalKafka lifecycle."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from turnstream_dev import InfraError, LocalKafka, free_ports

pytestmark = pytest.mark.integration


async def _round_trip(bootstrap: str, topic: str) -> tuple[list, list]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=4, replication_factor=1)])
    finally:
        await admin.close()

    sent = []
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i, key in enumerate([b"a", b"b", b"a"]):
            meta = await producer.send_and_wait(topic, value=f"m{i}".encode(), key=key)
            sent.append((meta.partition, meta.offset, key, f"m{i}".encode()))
    finally:
        await producer.stop()

    received = []
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=f"{topic}-group",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        async with asyncio.timeout(60):
            while len(received) < len(sent):
                batches = await consumer.getmany(timeout_ms=1000)
                for records in batches.values():
                    received += [(r.partition, r.offset, r.key, r.value) for r in records]
    finally:
        await consumer.stop()
    return sent, received


def test_produce_and_consume_round_trip(kafka_broker: str) -> None:
    topic = f"it-roundtrip-{uuid.uuid4().hex[:8]}"
    sent, received = asyncio.run(_round_trip(kafka_broker, topic))

    assert len(received) == 3
    assert sorted(v for *_, v in received) == [b"m0", b"m1", b"m2"]
    # Same key, same partition; within a partition, consumed in produced order.
    assert sent[0][0] == sent[2][0]
    for partition in {p for p, *_ in sent}:
        assert [r for r in received if r[0] == partition] == [s for s in sent if s[0] == partition]


async def _topics(bootstrap: str) -> list[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return await admin.list_topics()
    finally:
        await admin.close()


async def _create_topic(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        await admin.close()


def _cluster_id(kafka: LocalKafka) -> str:
    lines = (kafka.data_dir / "meta.properties").read_text().splitlines()
    return next(line for line in lines if line.startswith("cluster.id="))


def test_local_kafka_lifecycle(tmp_path: Path) -> None:
    port, controller_port = free_ports(2)
    kafka = LocalKafka(home=tmp_path / "kafka", port=port, controller_port=controller_port)
    try:
        first = kafka.up(timeout=120)
        assert first.running and first.answering and first.pid
        assert kafka.status().answering
        assert kafka.pid_path.read_text().strip() == str(first.pid)
        cluster_id = _cluster_id(kafka)

        again = kafka.up()
        assert again.pid == first.pid, "up() on a running broker must not start another"

        other_port, other_controller = free_ports(2)
        same_home = LocalKafka(kafka.home, port=other_port, controller_port=other_controller)
        assert same_home.status().bootstrap == kafka.bootstrap  # reports where it really runs
        with pytest.raises(InfraError, match="already runs on"):
            same_home.up()

        asyncio.run(_create_topic(kafka.bootstrap, "survives-restart"))

        assert kafka.down() is True
        after = kafka.status()
        assert not after.running and not after.answering and after.pid is None
        assert not kafka.pid_path.exists()
        assert kafka.down() is False, "down() on a stopped broker is a no-op"

        restarted = kafka.up(timeout=120)
        assert restarted.running and restarted.answering
        assert restarted.pid != first.pid
        assert _cluster_id(kafka) == cluster_id, "storage must not be reformatted"
        assert "survives-restart" in asyncio.run(_topics(kafka.bootstrap))
    finally:
        kafka.down()
    assert not kafka.status().running
