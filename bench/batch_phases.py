"""Where one batch's time goes in the ingest driver, and what each raw-table insert costs.

    .venv/bin/python bench/batch_phases.py [ITEMS] [--backlog-only]

1. A backlog of ITEMS (default 30,000) ``mixed_items`` drained by a worker whose batch
   steps are timed (``bench/_timed_worker.py``), once with the fan-out producer's batch
   at aiokafka's default of 16 KiB (before the change in docs/performance.md) and once
   at ``FANOUT_BATCH_BYTES`` (after): milliseconds per batch for each step.
2. The same worker at 500 items/s for 10 s (batches are whatever arrived): the fixed
   cost of a batch.
3. In-process, on a throw-away chDB store: milliseconds per insert into each raw table
   for batches of 1,000 and of 100 messages (``RawSink.write``'s inserts one by one).

Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    Broker,
    deploy,
    in_process_loop,
    load,
    machine,
    publish,
    publish_paced,
    records,
    run_broker,
    settle,
    wait_drained,
)
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.writer import token_for
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.rows import COLUMNS, as_dicts
from turnstream.entrypoints.kafka.ingest_driver import FANOUT_BATCH_BYTES
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items

TIMED_WORKER = Path(__file__).with_name("_timed_worker.py")
ORDER = (
    "prepare",  # on its own thread, overlapping the previous batch's steps below
    "fan-out: accepted_for",  # part of prepare
    "settle",
    "write",
    "fan-out: send and acks",  # send_all (record batches per partition)
    "commit",
    "whole batch",
    "waiting for the prepared batch",  # the loop idle between a commit and the next finish
)


def timed_run(broker: Broker, fanout_bytes: int, lines: list[bytes], rate: float = 0) -> str:
    deployment = deploy(broker)
    out = broker.home / f"phases-{deployment.settings.worker.app_id}.json"
    if not rate:
        publish(deployment, lines)
    log = (broker.home / "timed-worker.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, str(TIMED_WORKER), str(fanout_bytes), str(deployment.config), str(out)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        while True:
            try:
                deployment.worker.stats()
                break
            except OSError as exc:
                if proc.poll() is not None:  # the worker died: say so rather than wait
                    raise RuntimeError(
                        f"the timed worker exited {proc.returncode}; see {log.name}"
                    ) from exc
                time.sleep(0.2)
        if rate:
            publish_paced(deployment, lambda n, _now: lines[n], rate, len(lines))
        while deployment.worker.stats()["messages"] < len(lines):
            time.sleep(0.2)
        wait_drained(deployment)
        data = json.loads(out.read_text())
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()
    batches = data["counts"]["batches"]
    per = {k: v / batches * 1000 for k, v in data["seconds"].items()}
    steps = ", ".join(f"{k} {per.get(k, 0):.0f}" for k in ORDER)
    thread = ", ".join(
        f"{k.removeprefix('store thread: ')} {v:.0f}"
        for k, v in sorted(per.items(), key=lambda kv: -kv[1])
        if k.startswith("store thread: ")
    )
    busy = data["seconds"].get("store thread: busy", 0.0)
    return (
        f"{batches} batches of {data['counts']['messages'] / batches:.0f} messages; "
        f"ms per batch: {steps}\n   store thread, ms per ingest batch: {thread}; "
        f"busy {busy:.1f} s of the {data['span']:.1f} s from its first call to its last "
        f"({busy / max(data['span'], 1e-9):.0%})"
    )


def insert_costs(items: int) -> None:
    with in_process_loop("turnstream-inserts-") as loop:
        store = loop.store
        topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
        messages = records(mixed_items(n=items, bad=items // 100, seed=41).lines, topic)

        def measure(size: int, start: int, count: int) -> dict[str, tuple[float, float]]:
            seconds: defaultdict[str, float] = defaultdict(float)
            rows_in: defaultdict[str, int] = defaultdict(int)
            for b in range(count):
                batch = messages[start + b * size : start + (b + 1) * size]
                prepared = loop.prepare(batch)
                rows = rows_to_write(prepared, settle(loop, prepared))
                for table in RAW_TABLES:
                    if not rows.get(table):
                        continue
                    fresh = as_dicts(rows[table])
                    columns = COLUMNS[table]
                    data = [[r[c] for c in columns] for r in fresh]
                    started = time.perf_counter()
                    store.store.insert(table, data, columns, token_for(table, fresh))
                    seconds[table] += time.perf_counter() - started
                    rows_in[table] += len(fresh)
            return {t: (seconds[t] / count * 1000, rows_in[t] / count) for t in seconds}

        big = store.call(measure, 1000, 0, 20)
        small = store.call(measure, 100, 20_000, 50)
    print("3. ms per insert (mean), batches of 1,000 | of 100 messages:")
    for table in RAW_TABLES:
        if table in big:
            (b_ms, b_rows), (s_ms, s_rows) = big[table], small.get(table, (0, 0))
            print(
                f"   {table:<18} {b_ms:5.1f} ms ({b_rows:4.0f} rows) | "
                f"{s_ms:5.1f} ms ({s_rows:3.0f} rows)"
            )
    total_big = sum(v[0] for v in big.values())
    total_small = sum(v[0] for v in small.values())
    print(
        f"   all tables         {total_big:5.0f} ms per batch    | {total_small:5.0f} ms per batch"
    )


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    items = int(args[0]) if args else 30_000
    print(machine())
    lines = mixed_items(n=items, bad=items // 100, seed=7).lines
    paced = mixed_items(n=5000, bad=0, seed=8).lines
    if "--backlog-only" in sys.argv:  # step 1 at the worker's own fan-out batch only
        with run_broker() as broker:
            print(f"1. backlog of {items:,} items, fan-out batch {FANOUT_BATCH_BYTES // 1024} KiB:")
            print(f"   {timed_run(broker, FANOUT_BATCH_BYTES, lines)}; {load()}", flush=True)
        return
    with run_broker() as broker:
        print(f"1. backlog of {items:,} items, fan-out batch 16 KiB (before):", flush=True)
        print(f"   {timed_run(broker, 16 * 1024, lines)}; {load()}", flush=True)
        print(f"   fan-out batch {FANOUT_BATCH_BYTES // 1024} KiB (after):", flush=True)
        print(f"   {timed_run(broker, FANOUT_BATCH_BYTES, lines)}; {load()}", flush=True)
        print("2. 500 items/s for 10 s:", flush=True)
        print(f"   {timed_run(broker, FANOUT_BATCH_BYTES, paced, rate=500)}; {load()}", flush=True)
    insert_costs(max(items, 25_000))


if __name__ == "__main__":
    main()
