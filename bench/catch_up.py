"""What the sink's view catch-up costs: per write, per start, and per start after a crash.

    .venv/bin/python bench/catch_up.py [ITEMS] [--batch-size 5000] [--repeat 5]

Writes ITEMS (default 40,000) ``mixed_items`` lines through the ingest driver's stages
into a throw-away chDB store (every materialized view), then times, each ``--repeat``
times (medians printed, load average beside):

* ``confirm``: the insert into ``sink_marks`` a write adds (one row per table and source
  partition the batch wrote);
* ``raw marks alone``: the queries a start ran before (each raw table's marks);
* ``start``: a fresh sink reading every raw table's marks and the confirmed marks, with
  nothing to catch up (after a clean stop);
* ``start after a crash``: the same with the last batch's inserts unconfirmed (its
  ``sink_marks`` rows taken back, as after a crash between its parts and the marks): each
  is pushed again through the views, which drop it.

Prints figures; asserts nothing. The per-batch cost in the whole hot path is
``bench/hot_path.py``'s write column (run it on both sides, alternating).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, machine, raw_sink, records, settle
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import MARK_COLUMNS, RawSink
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items


def _write(loop: IngestDriver, batch: list[Any]) -> None:
    prepared = loop.prepare(batch)
    raw_sink(loop).write(rows_to_write(prepared, settle(loop, prepared)))


def _marks(store: Store) -> list[tuple[Any, ...]]:
    return store.query(
        "SELECT table, _topic, _partition, max(_offset) FROM sink_marks "
        "GROUP BY table, _topic, _partition"
    ).rows


def _measure(loop: IngestDriver, batches: list[list[Any]], repeat: int) -> dict[str, float]:
    store = raw_sink(loop).store
    for batch in batches[:-1]:
        _write(loop, batch)
    before = _marks(store)
    _write(loop, batches[-1])
    after = _marks(store)
    out: dict[str, list[float]] = {
        "confirm": [],
        "raw marks alone (a start before migration 22)": [],
        "start": [],
        "start after a crash": [],
    }
    for _ in range(repeat):
        t0 = time.perf_counter()
        for table in RAW_TABLES:
            store.query(
                f"SELECT _topic, _partition, max(_offset) FROM {table} GROUP BY _topic, _partition"
            )
        out["raw marks alone (a start before migration 22)"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.insert("sink_marks", after, MARK_COLUMNS)
        out["confirm"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        RawSink(store).write({})
        out["start"].append(time.perf_counter() - t0)
        store.command("TRUNCATE TABLE sink_marks")
        store.insert("sink_marks", before, MARK_COLUMNS)
        t0 = time.perf_counter()
        RawSink(store).write({})
        out["start after a crash"].append(time.perf_counter() - t0)
    return {name: statistics.median(values) for name, values in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=40_000)
    parser.add_argument("--batch-size", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    lines = list(mixed_items(n=args.items, bad=args.items // 100, seed=7).lines)
    with in_process_loop("ts-catch-up-") as loop:
        loop.stage.process = None
        topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
        messages = records(lines, topic)
        size = args.batch_size
        batches = [messages[at : at + size] for at in range(0, len(messages), size)]
        figures = loop.store.call(_measure, loop, batches, args.repeat)
        rows = loop.store.call(
            lambda: raw_sink(loop).store.scalar(
                "SELECT sum(rows) FROM system.parts WHERE active AND database = "
                "currentDatabase() AND has({tables:Array(String)}, table)",
                {"tables": list(RAW_TABLES)},
            )
        )
    print(
        f"{args.items:,} items in batches of {size:,} ({rows:,} raw rows); medians of "
        f"{args.repeat}; load average {os.getloadavg()[0]:.2f} (1 min)"
    )
    print()
    print("| step | ms |")
    print("|---|---|")
    for name, seconds in figures.items():
        print(f"| {name} | {seconds * 1000:.1f} |")


if __name__ == "__main__":
    main()
