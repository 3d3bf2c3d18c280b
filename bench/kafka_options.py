"""The Kafka clients' options, per message: the client's CPU and the broker's, no worker.

    .venv/bin/python bench/kafka_options.py [ITEMS] [--rounds 4]

Starts a broker on free ports in a temporary directory, then, ROUNDS times, each variant
in a rotated order (so no variant always runs first, when the broker is coldest):

* producers: ITEMS ``mixed_items`` lines sent to a new 4-partition topic the way the
  fan-out sends (``entrypoints/kafka/fanout.send_all``, batches of 4,167, ``acks=all``,
  idempotent), with the fan-out's options (linger 5 ms, 512 KiB batches), with lz4
  compression (needs ``cramjam``; left out without it), and with 1 MiB batches;
* consumers: a new group draining those ITEMS with ``getmany`` (4,167 at most), with
  aiokafka's defaults (what the batch loop uses), 4 / 16 MiB per partition
  (``max_partition_fetch_bytes``) and ``check_crcs`` off.

Prints, per variant, the medians of this process's CPU and of the broker's (its JVM,
from /proc) per message, and their sum per round: on a 2-core machine the broker's CPU
is taken from the worker's. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.codec import has_lz4

from bench._harness import cpu_seconds, load, machine
from turnstream.entrypoints.kafka.fanout import send_all
from turnstream.entrypoints.kafka.ingest_driver import FANOUT_BATCH_BYTES
from turnstream_dev.kafka import LocalKafka, free_ports
from turnstream_dev.sample import mixed_items

BATCH = 4_167
PRODUCERS: dict[str, dict[str, Any]] = {
    "the fan-out's (linger 5 ms, 512 KiB)": {"linger_ms": 5, "max_batch_size": FANOUT_BATCH_BYTES},
    "lz4": {"linger_ms": 5, "max_batch_size": FANOUT_BATCH_BYTES, "compression_type": "lz4"},
    "1 MiB batches": {"linger_ms": 5, "max_batch_size": 1 << 20},
}
CONSUMERS: dict[str, dict[str, Any]] = {
    "aiokafka's defaults (1 MiB per partition)": {},
    "4 MiB per partition": {"max_partition_fetch_bytes": 4 << 20},
    "16 MiB per partition": {"max_partition_fetch_bytes": 16 << 20},
    "check_crcs off": {"check_crcs": False},
}


async def produce(
    bootstrap: str, topic: str, lines: list[bytes], options: dict[str, Any], broker: int
) -> tuple[float, float]:
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, **options
    )
    await producer.start()
    try:
        own, theirs = time.process_time(), cpu_seconds(broker)
        for at in range(0, len(lines), BATCH):
            chunk = enumerate(lines[at : at + BATCH], at)
            await send_all(producer, [(topic, v, str(n).encode()) for n, v in chunk])
        return time.process_time() - own, cpu_seconds(broker) - theirs
    finally:
        await producer.stop()


async def consume(
    bootstrap: str, topic: str, items: int, options: dict[str, Any], broker: int, group: str
) -> tuple[float, float]:
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=BATCH,
        **options,
    )
    await consumer.start()
    try:
        got = 0
        own, theirs = time.process_time(), cpu_seconds(broker)
        while got < items:
            fetched = await consumer.getmany(timeout_ms=500, max_records=BATCH)
            got += sum(len(batch) for batch in fetched.values())
        return time.process_time() - own, cpu_seconds(broker) - theirs
    finally:
        await consumer.stop()


def rotated(names: list[str], turn: int) -> list[str]:
    return names[turn % len(names) :] + names[: turn % len(names)]


def report(kind: str, runs: dict[str, list[tuple[float, float]]], items: int) -> None:
    print(f"\n| {kind} | client µs/message | broker µs/message | both, per round |")
    print("|---|---|---|---|")
    for name, figures in runs.items():
        client = statistics.median(c for c, _ in figures) / items * 1e6
        broker = statistics.median(b for _, b in figures) / items * 1e6
        both = ", ".join(f"{(c + b) / items * 1e6:.1f}" for c, b in figures)
        print(f"| {name} | {client:.1f} | {broker:.1f} | {both} |")
    print(load())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    lines = list(mixed_items(n=args.items, bad=0, seed=7).lines)
    producers = {k: v for k, v in PRODUCERS.items() if k != "lz4" or has_lz4()}
    print(machine())
    print(f"{args.items:,} mixed_items lines, {len(producers)} producers, rounds {args.rounds}")
    with tempfile.TemporaryDirectory(prefix="turnstream-kafka-options-") as tmp:
        port, controller = free_ports(2)
        kafka = LocalKafka(home=Path(tmp) / "kafka", port=port, controller_port=controller)
        kafka.up(timeout=120)
        try:
            broker = int(kafka.pid_path.read_text().strip())
            topics = [f"t{n}" for n in range(len(producers) * args.rounds + 2)]
            admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
            await admin.start()
            await admin.create_topics([NewTopic(t, 4, 1) for t in topics])
            await admin.close()
            warm, drained, fresh = topics[0], topics[1], iter(topics[2:])
            for options in producers.values():  # the broker's JIT, not a variant's cost
                await produce(kafka.bootstrap, warm, lines[:BATCH], options, broker)
            sent: dict[str, list[tuple[float, float]]] = {name: [] for name in producers}
            for turn in range(args.rounds):
                for name in rotated(list(producers), turn):
                    topic = next(fresh)
                    sent[name].append(
                        await produce(kafka.bootstrap, topic, lines, producers[name], broker)
                    )
            report("producer", sent, args.items)
            await produce(kafka.bootstrap, drained, lines, PRODUCERS["1 MiB batches"], broker)
            read: dict[str, list[tuple[float, float]]] = {name: [] for name in CONSUMERS}
            group = 0
            for turn in range(args.rounds):
                for name in rotated(list(CONSUMERS), turn):
                    group += 1
                    read[name].append(
                        await consume(
                            kafka.bootstrap,
                            drained,
                            args.items,
                            CONSUMERS[name],
                            broker,
                            f"g{group}",
                        )
                    )
            report("consumer", read, args.items)
        finally:
            kafka.down()


if __name__ == "__main__":
    asyncio.run(main())
