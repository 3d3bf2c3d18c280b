"""Throughput: the worker against a bare aiokafka consumer, on the same published items.

    .venv/bin/python bench/throughput.py [ITEMS] [--batch-sizes 1000,5000] [--prepare-process off]
        [--prepare-children N]

Generates ITEMS (default 200,000, issue 35: at 50,000 start-up and the broker's warm-up
decide the figure) lines with ``turnstream_dev.sample.mixed_items`` (1% of them
invalid or refused: turns, interactions, outcomes and commands in the ratio 4 : 3.5 :
1.5 : 1), publishes them once per deployment, then drains them

(a) with a bare aiokafka consumer (its own group) that reads and ``json.loads`` every
    message and does nothing else: the ceiling for Python on this machine;
(a1), (a2) with the store's own floors (``bench/_store_floors.py``): the same bare
    consumer handing each batch's raw JSON to chDB in this process, no validation and
    no fan-out, (a1) split into the raw tables by materialized views at insert, (a2)
    landed in one table; ``--no-floors`` leaves them out;
(b) with the turnstream worker (its defaults: batch_size 20,000, batch_seconds 0.5, unless
    ``--batch-sizes`` says otherwise), until its consumer group has committed everything,
    then checks that every row is in ClickHouse; an item counts when its rows are in
    their typed tables (what analysts query: the worker commits a batch only after
    them), not when it is only landed; ``--prepare-process on|off`` sets
    ``worker.prepare_process`` (default: the worker's own, ``auto``: on with two CPUs),
    ``--prepare-children N`` ``worker.prepare_children`` (default ``auto``: one per CPU).

Rates leave the group join and the start-up out (the figure with start-up is printed
too). The bare consumer's runs from its first fetched batch (the items after it) to its
last message. The worker's runs from its first fetched batch in hand (``first_batch_at``
in its status) to its last commit, over every item: its first batch's way through the
stages is in it, as a drain of a backlog is. Until round nine it ran from the first
commit over the items after the first batch (printed beside it): with a backlog of four
or five batches, all of them could be prepared ahead by then, and the same code read
0.19 to 0.53. Both in items per second and in items per CPU-second of the consuming
process (the bare consumer's own process time; the worker's utime + stime from /proc,
every thread, chDB's and the prepare process's included), which holds better than wall
time when the machine is shared.
Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    DEFAULT_BATCH_SECONDS,
    DEFAULT_BATCH_SIZE,
    Broker,
    add_prepare_process,
    cpu_seconds,
    deploy,
    load,
    machine,
    prepare_process_line,
    publish,
    run_broker,
    sql,
    wait_drained,
    worker_pid,
)
from bench._store_floors import FLOORS, LANDING_COLUMNS, open_floor
from turnstream.adapters.kafka.topology import TopicNames
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import MixedBatch, mixed_items

RAW = ("turns", "interactions", "outcomes", "commands", "dead_letters")


@dataclass
class Rate:
    steady: float  # items/s between the first and the last observed progress
    overall: float  # items/s including the group join (and the worker's start-up)
    per_cpu: float  # items per CPU-second of the consuming process over the steady part


async def _bare(deployment: Deployment, total: int, floor: str | None = None) -> Rate:
    """Drain every input topic; with ``floor``, each batch's raw bytes go to that store
    floor (one insert per batch, as the worker's batch size) instead of ``json.loads``."""
    from aiokafka import AIOKafkaConsumer

    store = None
    if floor is not None:
        store = open_floor(str(deployment.config.parent / "floors"), floor)

    consumer = AIOKafkaConsumer(
        bootstrap_servers=deployment.settings.broker.bootstrap,
        group_id=f"bare-{uuid.uuid4().hex[:8]}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_records=DEFAULT_BATCH_SIZE,
    )
    consumer.subscribe(list(TopicNames(deployment.settings.worker.topic_prefix).inputs))
    started = time.monotonic()
    await consumer.start()
    seen = decoded = 0
    first_at = None
    first_count = 0
    first_cpu = 0.0
    try:
        while seen < total:
            fetched = await consumer.getmany(timeout_ms=500, max_records=DEFAULT_BATCH_SIZE)
            if store is not None:
                rows = [
                    [m.topic, m.partition, m.offset, m.value]
                    for batch in fetched.values()
                    for m in batch
                ]
                if rows:
                    store.insert("landing", rows, LANDING_COLUMNS)
                seen += len(rows)
            else:
                for batch in fetched.values():
                    for m in batch:
                        seen += 1
                        try:
                            json.loads(m.value)
                            decoded += 1
                        except ValueError:
                            pass
            if first_at is None and seen:
                first_at, first_count, first_cpu = time.monotonic(), seen, time.process_time()
    finally:
        await consumer.stop()
    done, cpu = time.monotonic(), time.process_time()
    if store is not None:
        _check_floor(store, floor, total)
        store.close()
    assert first_at is not None
    steady = seen - first_count
    return Rate(
        steady / max(done - first_at, 1e-9),
        total / (done - started),
        steady / max(cpu - first_cpu, 1e-9),
    )


def bare_rate(deployment: Deployment, total: int, floor: str | None = None) -> Rate:
    return asyncio.run(_bare(deployment, total, floor))


def _check_floor(store: Any, floor: str | None, total: int) -> None:
    """Every message landed once: one row each in ``landing`` (one table) or in
    ``idempotency_keys`` (split: every message, JSON or not, leaves its key)."""
    table = "landing" if floor == "one" else "idempotency_keys"
    landed = int(store.scalar(f"SELECT count() FROM {table}"))
    if landed != total:
        print(f"  (!) floor {floor}: {landed} of {total} messages landed", flush=True)


def worker_rate(deployment: Deployment, batch: MixedBatch) -> tuple[Rate, Rate, str]:
    """The rates from the worker's first batch in hand to its last commit (every item),
    the rates from its first commit (the items after the first batch: until round nine),
    and whether every row is in ClickHouse."""
    total = len(batch.lines)
    started = time.time()
    deployment.worker.start()
    pid = worker_pid(deployment)
    fetched_cpu: float | None = None
    first: tuple[float, int, float] | None = None
    while True:
        stats = deployment.worker.stats()
        now, messages = time.time(), stats["messages"]
        if fetched_cpu is None and stats["first_batch_at"] is not None:
            fetched_cpu = cpu_seconds(pid)  # within a poll (0.1 s) of that batch
        if first is None and messages:
            first = (now, messages, cpu_seconds(pid))
        if messages >= total:
            # The worker counts a batch after its commit: the last one is committed now.
            # The end is taken here, by the poll; the check below asks the broker (~0.4 s
            # for its admin client, which was in the window until round nine).
            done, cpu = now, cpu_seconds(pid)
            fetched_at = stats["first_batch_at"]
            break
        if not deployment.worker.alive():
            raise RuntimeError("the worker died; see its log")
        time.sleep(0.1)
    wait_drained(deployment)  # the group's own word: every offset committed
    assert first is not None and fetched_cpu is not None
    counts = dict(
        sql(deployment, "SELECT 'turns', count() FROM turns UNION ALL "
            "SELECT 'interactions', count() FROM interactions UNION ALL "
            "SELECT 'outcomes', count() FROM outcomes UNION ALL "
            "SELECT 'commands', count() FROM commands UNION ALL "
            "SELECT 'dead_letters', count() FROM dead_letters")
    )  # fmt: skip
    landed = sum(int(counts[t]) for t in RAW)
    expected = sum(batch.accepted.values()) + sum(batch.refused.values())
    check = f"{landed} of {expected} rows in ClickHouse" + ("" if landed == expected else " (!)")
    overall = total / (done - started)
    drained = Rate(
        total / max(done - fetched_at, 1e-9), overall, total / max(cpu - fetched_cpu, 1e-9)
    )
    after_first = total - first[1]
    committed = Rate(
        after_first / max(done - first[0], 1e-9),
        overall,
        after_first / max(cpu - first[2], 1e-9),
    )
    return drained, committed, check


def run_one(
    broker: Broker, batch: MixedBatch, batch_size: int, floors: bool = True, worker_extra: str = ""
) -> None:
    total = len(batch.lines)
    deployment = deploy(
        broker,
        batch_size=batch_size,
        batch_seconds=DEFAULT_BATCH_SECONDS,
        worker_extra=worker_extra,
    )
    t = time.monotonic()
    publish(deployment, batch.lines)
    print(f"  published {total:,} items in {time.monotonic() - t:.1f}s", flush=True)
    bare = bare_rate(deployment, total)
    print(f"  (a) bare aiokafka + json.loads: {bare.steady:,.0f} items/s "
          f"({bare.overall:,.0f} with the group join); "
          f"{bare.per_cpu:,.0f} items per CPU-second", flush=True)  # fmt: skip
    for n, (name, (what, _)) in enumerate(FLOORS.items() if floors else (), 1):
        peer = bare_rate(deployment, total, name)
        print(f"  (a{n}) store floor, {what}: {peer.steady:,.0f} items/s "
              f"({peer.steady / bare.steady:.3f} of bare); {peer.per_cpu:,.0f} items per "
              f"CPU-second ({peer.per_cpu / bare.per_cpu:.3f} of bare); {load()}",
              flush=True)  # fmt: skip
    worker, after_first, check = worker_rate(deployment, batch)
    stats = deployment.worker.stats()
    print(f"  (b) turnstream worker:          {worker.steady:,.0f} items/s "
          f"({worker.overall:,.0f} with start-up); {worker.per_cpu:,.0f} items per "
          f"CPU-second (all its threads); {check}; {stats['batches']} batches, "
          f"{total / stats['batches']:.0f} messages each; from its first commit (the "
          f"window until round nine): {after_first.steady:,.0f} items/s", flush=True)  # fmt: skip
    print(f"  RATIO worker / bare: {worker.steady / bare.steady:.3f} in items/s, "
          f"{worker.per_cpu / bare.per_cpu:.3f} in items per CPU-second (goal 0.5); "
          f"{load()}", flush=True)  # fmt: skip
    deployment.worker.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=200_000)
    parser.add_argument("--batch-sizes", default=str(DEFAULT_BATCH_SIZE))
    parser.add_argument("--no-floors", action="store_true", help="leave the store floors out")
    add_prepare_process(parser)
    args = parser.parse_args()
    worker_extra = prepare_process_line(args.prepare_process, args.prepare_children)
    print(machine())
    t = time.monotonic()
    batch = mixed_items(n=args.items, bad=args.items // 100, seed=7)
    print(
        f"{args.items:,} items (mixed_items, seed 7): {batch.accepted}, refused {batch.refused}; "
        f"mean {sum(map(len, batch.lines)) / args.items:.0f} bytes; "
        f"generated in {time.monotonic() - t:.1f}s",
        flush=True,
    )
    with run_broker() as broker:
        for size in (int(s) for s in args.batch_sizes.split(",")):
            children = args.prepare_children or "default"
            print(f"batch_size {size}, batch_seconds {DEFAULT_BATCH_SECONDS}, "
                  f"prepare_process {args.prepare_process or 'default'}, "
                  f"prepare_children {children}:", flush=True)  # fmt: skip
            run_one(broker, batch, size, floors=not args.no_floors, worker_extra=worker_extra)


if __name__ == "__main__":
    main()
