"""The store thread's chDB calls per batch, and the interactions insert's CPU under two
migrations' views: no broker, a throw-away chDB store.

    .venv/bin/python bench/store_calls.py [ITEMS] [--batch-size 5000] [--views-rounds 15]
        [--views-against 22]

Feeds ITEMS (default 20,000) ``mixed_items`` lines through the ingest driver's prepare,
settle and write, batch by batch, recording every statement the store's client sends to
chDB (DESCRIBEs, SETs and look-ups included): per batch after the first (the first reads
the marks and the column types), how many calls of each kind, their wall time and the
store thread's CPU (chDB's other threads not counted). Then inserts one real batch's
``interactions`` rows, alternately, into this store (every migration) and into a second
database migrated up to ``--views-against`` (default 22, before value_daily's two views
became one), ``--views-rounds`` times each with a fresh token, and prints the process
CPU of each insert (the raw part and every view's, chDB's threads included): medians.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, load, machine, raw_sink, records, settle
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.rows import COLUMNS, as_dicts
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items

Call = tuple[str, float, float]


def _recording(store: Store, calls: list[Call]) -> None:
    """Record every statement the store's client sends to chDB: text, wall ms, CPU ms."""
    backend = store._client._backend
    conn = backend._handle.conn

    class Recording:
        def __getattr__(self, name: str) -> Any:
            return getattr(conn, name)

        def query(self, sql: str | bytes, *args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return conn.query(sql, *args, **kwargs)
            finally:
                text = sql.decode() if isinstance(sql, bytes) else sql
                wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
                calls.append((" ".join(text.split())[:60], wall * 1e3, cpu * 1e3))

    backend._handle.conn = Recording()


def _calls(loop: IngestDriver, batches: list[list[Any]]) -> list[list[Call]]:
    calls: list[Call] = []
    _recording(loop.store.store, calls)
    per: list[list[Call]] = []
    for batch in batches:
        start = len(calls)
        prepared = loop.prepare(batch)
        raw_sink(loop).write(rows_to_write(prepared, settle(loop, prepared)))
        per.append(calls[start:])
    return per


def _views(loop: IngestDriver, batch: list[Any], against: int, rounds: int) -> dict[str, float]:
    new = loop.store.store
    old = Store(new.dsn, f"views_{against}")
    try:
        apply_migrations(old, until=against)
        prepared = loop.prepare(batch)
        rows = as_dicts(rows_to_write(prepared, settle(loop, prepared))["interactions"])
        columns = [*COLUMNS["interactions"], "_insert"]
        data = [[*(r[c] for c in COLUMNS["interactions"]), 1] for r in rows]
        for store in (old, new):
            store.insert("interactions", data, columns, "warm")
        cpu: dict[str, list[float]] = {f"migration {against}": [], "every migration": []}
        for n in range(rounds):
            for name, store in zip(cpu, (old, new), strict=True):
                c0 = time.process_time()
                store.insert("interactions", data, columns, f"round-{n}")
                cpu[name].append((time.process_time() - c0) * 1e3)
        print(f"{len(rows):,} interactions rows (a batch of {len(batch):,} items)")
        return {name: statistics.median(v) for name, v in cpu.items()}
    finally:
        old.command(f"DROP DATABASE IF EXISTS {old.database}")
        old.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--views-rounds", type=int, default=15)
    parser.add_argument("--views-against", type=int, default=22)
    args = parser.parse_args()
    size = args.batch_size
    lines = list(mixed_items(n=args.items + size, bad=args.items // 100, seed=7).lines)
    print(machine())
    print(f"{args.items:,} mixed_items lines in batches of {size:,}, in-process; {load()}")
    with in_process_loop("ts-calls-") as loop:
        loop.stage.process = None
        topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
        messages = records(lines, topic)
        batches = [messages[at : at + size] for at in range(0, args.items, size)]
        per = loop.store.call(_calls, loop, batches)
        for n, calls in enumerate(per):
            wall, cpu = sum(c[1] for c in calls), sum(c[2] for c in calls)
            print(f"batch {n}: {len(calls)} calls, {wall:.0f} ms wall, {cpu:.0f} ms thread CPU")
        kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        for calls in per[1:]:
            for text, wall, cpu in calls:
                kind = kinds[text]
                kind[0] += 1
                kind[1] += wall
                kind[2] += cpu
        later = max(len(per) - 1, 1)
        print("\n| calls a batch | wall ms | thread CPU ms | statement |\n|---|---|---|---|")
        for text, (count, wall, cpu) in sorted(kinds.items(), key=lambda kv: -kv[1][2]):
            print(f"| {count / later:.1f} | {wall / later:.1f} | {cpu / later:.1f} | `{text}` |")
        tail = messages[args.items : args.items + size]
        medians = loop.store.call(_views, loop, tail, args.views_against, args.views_rounds)
        print(f"\nthe interactions insert's process CPU, medians of {args.views_rounds}; {load()}")
        for name, ms in medians.items():
            print(f"  {name}: {ms:.1f} ms")


if __name__ == "__main__":
    main()
