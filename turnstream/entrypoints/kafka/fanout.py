"""Fan-out of a batch: its messages in record batches per partition, every ack awaited.

``AIOKafkaProducer.send`` costs ~30 µs of Python per message (a future, a lookup of the
partition, a wait whenever the partition's open batch is full): a sixth of the ingest
loop's time with a backlog (bench/batch_phases.py). Here each partition's messages go
into record batches built in one pass and handed over with ``send_batch``. Keys are
partitioned by aiokafka's own default partitioner's hash (murmur2, as the Java client),
so a key lands where ``send`` would put it; that hash is pure Python (15 µs a key here),
and a person's profile id recurs in each of their events, so its result is kept per key
(0.4 µs: ``bench/partitioner.py``). Messages without a key go to any partition. Order
within a partition is the order given.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable
from functools import lru_cache

from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from turnstream.service.ports import Message

__all__ = ["Message", "send_all"]

#: Keys whose partition index is kept: a person's profile id recurs in every one of
#: their events, and aiokafka's murmur2 is pure Python (~28 µs per key here).
PARTITION_CACHE_KEYS = 1 << 17


@lru_cache(maxsize=PARTITION_CACHE_KEYS)
def _index(key: bytes, count: int) -> int:
    """The partition index of ``key`` among ``count`` partitions: aiokafka's default
    partitioner (murmur2, as the Java client)."""
    return (murmur2(key) & 0x7FFFFFFF) % count


def partition_of(key: bytes | None, every: list[int]) -> int:
    """The partition aiokafka's default partitioner gives ``key`` (``every``: the topic's
    partitions, sorted); a message without a key goes to any of them."""
    if key is None:
        return random.choice(every)
    return every[_index(key, len(every))]


async def send_all(producer: AIOKafkaProducer, messages: Iterable[Message]) -> int:
    """Send ``messages`` and wait until the broker acknowledged every one; returns how
    many. Raises what the producer raises for a batch it could not deliver."""
    by_partition: dict[tuple[str, int], list[tuple[bytes | None, bytes]]] = {}
    partitions: dict[str, list[int]] = {}
    count = 0
    for topic, value, key in messages:
        known = partitions.get(topic)
        if known is None:
            known = partitions[topic] = sorted(await producer.partitions_for(topic))
        partition = partition_of(key, known)
        by_partition.setdefault((topic, partition), []).append((key, value))
        count += 1
    acks = []
    for (topic, partition), items in by_partition.items():
        batch = producer.create_batch()
        for key, value in items:
            while batch.append(key=key, value=value, timestamp=None) is None:
                if batch.record_count() == 0:
                    raise ValueError(f"a message of {len(value)} bytes exceeds the batch size")
                acks.append(await producer.send_batch(batch, topic, partition=partition))
                batch = producer.create_batch()
        if batch.record_count():
            acks.append(await producer.send_batch(batch, topic, partition=partition))
    await asyncio.gather(*acks)
    return count
