"""The other way to bind producers to their space: per-space input topics, each writable by
its space's Kafka user alone (prefixed ACLs). What it costs the worker's consumer, on a
real broker. (The way turnstream took, records signed and verified at the gate:
bench/signing.py.)

    .venv/bin/python bench/space_topics.py [ITEMS] [--spaces 100] [--pairs 3]

Starts a broker of its own, writes the same ITEMS (default 40,000) ``mixed_items`` lines
twice: to one topic of 4 partitions (today's layout: one topic per item type, every space
in it), and spread evenly over SPACES topics of 4 partitions each (one per space; a real
layout would have one per space and item type, 4 or 5 times as many). Then drains each
with a consumer configured as the ingest loop's (``BACKLOG_FETCH``, ``max_poll_records``
20,000), fresh group each time, in alternating pairs, and prints the seconds and this
process's CPU per item for each layout, the batches' mean size, and the partitions a
consumer group holds. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from bench._harness import load, machine
from turnstream.adapters.kafka.clients import BACKLOG_FETCH
from turnstream_dev.kafka import LocalKafka, free_ports
from turnstream_dev.sample import mixed_items

PARTITIONS = 4


async def _write(bootstrap: str, topics: list[str], lines: list[bytes]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5, acks="all")
    await producer.start()
    try:
        for n, line in enumerate(lines):
            await producer.send(topics[n % len(topics)], line, key=str(n % 997).encode())
        await producer.flush()
    finally:
        await producer.stop()


async def _drain(bootstrap: str, topics: list[str], count: int) -> tuple[float, float, float]:
    """Seconds and CPU seconds to read ``count`` records, and the batches' mean size."""
    consumer = AIOKafkaConsumer(
        *topics,
        bootstrap_servers=bootstrap,
        group_id=f"g-{uuid.uuid4().hex[:8]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=20_000,
        **BACKLOG_FETCH,
    )
    await consumer.start()
    try:
        while not consumer.assignment():  # joined: the clock starts at the first fetch
            await asyncio.sleep(0.05)
        start, cpu = time.monotonic(), time.process_time()
        seen, batches = 0, 0
        while seen < count:
            got = await consumer.getmany(timeout_ms=1000, max_records=20_000)
            n = sum(len(v) for v in got.values())
            seen += n
            batches += n > 0
        return time.monotonic() - start, time.process_time() - cpu, seen / max(batches, 1)
    finally:
        await consumer.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=40_000)
    parser.add_argument("--spaces", type=int, default=100)
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args()
    lines = mixed_items(args.items, bad=0).lines
    layouts = {
        "one topic": ["shared"],
        f"{args.spaces} topics": [f"space-{i:04d}" for i in range(args.spaces)],
    }
    print(machine())
    with tempfile.TemporaryDirectory(prefix="ts-space-topics-") as tmp:
        port, controller = free_ports(2)
        kafka = LocalKafka(home=Path(tmp) / "kafka", port=port, controller_port=controller)
        kafka.up(timeout=120)
        try:
            for topics in layouts.values():
                asyncio.run(_write(kafka.bootstrap, topics, lines))
            spent: dict[str, list[tuple[float, float, float]]] = {k: [] for k in layouts}
            for pair in range(args.pairs):
                order = list(layouts) if pair % 2 == 0 else list(reversed(layouts))
                for name in order:
                    spent[name].append(
                        asyncio.run(_drain(kafka.bootstrap, layouts[name], len(lines)))
                    )
        finally:
            kafka.down()
    print(f"{len(lines)} lines; {args.pairs} alternating pairs; {load()}")
    for name, runs in spent.items():
        seconds = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        batch = statistics.median(r[2] for r in runs)
        partitions = len(layouts[name]) * PARTITIONS
        print(
            f"{name:<12} {partitions:>5} partitions: drained in {seconds:6.2f} s "
            f"({len(lines) / seconds:8.0f} items/s), consumer CPU {cpu / len(lines) * 1e6:6.2f} "
            f"µs per item, {batch:7.0f} records per batch"
        )


if __name__ == "__main__":
    main()
