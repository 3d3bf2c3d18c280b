"""The ingest hot path in one process, stage by stage: no broker, a throw-away chDB store.

    .venv/bin/python bench/hot_path.py [ITEMS] [--batch-sizes 1000,5000] [--profile]
        [--no-views] [--insert-settings parallel_view_processing=1,...]

Feeds ITEMS (default 40,000) ``mixed_items`` lines, as consumer records, through what
the worker's ingest driver calls for each batch, timing each call:

* ``prepare``: validate (pydantic), gate, profile id (HMAC), rows and fan-out messages;
  pure Python, on the worker's prepare thread;
* ``settle``: the idempotency-key look-up (one chDB query) and de-duplication;
* ``write``: the raw-table inserts (``RawSink.write``; chDB, which releases the GIL).

Besides the process's CPU for settle + write (chDB's threads and merges included), it
prints the store thread's own CPU for them (``time.thread_time``: the Python, and chDB's
work on the calling thread), steadier still.

Runs the whole set once per batch size with CPython's default garbage-collector
thresholds and once with the worker's (``turnstream.entrypoints.bootstrap.tune_gc``), each on a
fresh store. ``--profile`` prints cProfile's top functions for the last run;
``--no-views`` drops every materialized view after the migrations, so the write is the
raw tables' alone (what the downstream summaries and the priors' views cost is the
difference). Each stage is timed in wall-clock, and in CPU time (steadier on a shared
machine): prepare's thread, and the rest of the process (settle and write, chDB's
threads and background merges included). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, load, machine, raw_sink, records, settle
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.entrypoints.bootstrap import GC_YOUNG_THRESHOLD
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items

STAGES = ("prepare", "settle", "write")


def run(
    lines: list[bytes],
    batch_size: int,
    tuned_gc: bool,
    profile: bool,
    views: bool = True,
    insert_settings: dict[str, str] | None = None,
) -> dict[str, float]:
    """Seconds per stage over the whole run, and the total (on the store's thread, as in
    the worker); ``insert_settings`` go with every raw-table insert (beside its token)."""
    with in_process_loop("ts-hot-") as loop:
        if insert_settings:
            _with_settings(loop.store.store, insert_settings)
        # Prepare on this thread: the figures are of the stages' own cost, in series
        # (in the worker, ``worker.prepare_process`` moves prepare to a child process).
        loop.stage.process = None
        if not views:
            loop.store.call(_drop_views, loop.store.store)
        topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
        messages = records(lines, topic)
        batches = [messages[at : at + batch_size] for at in range(0, len(messages), batch_size)]
        return loop.store.call(_timed, loop, batches, tuned_gc, profile)


def _with_settings(store: Store, extra: dict[str, str]) -> None:
    """Every insert of ``store`` with ``extra`` settings too."""
    client = store._client
    insert = client.insert

    def insert_with(*args: Any, settings: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return insert(*args, settings={**extra, **(settings or {})}, **kwargs)

    client.insert = insert_with


def _drop_views(store: Store) -> None:
    names = store.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase() "
        "AND engine = 'MaterializedView'"
    ).rows
    for (name,) in names:
        store.command(f"DROP VIEW {name}")


def _timed(
    loop: IngestDriver, batches: list[list[Any]], tuned_gc: bool, profile: bool
) -> dict[str, float]:
    defaults = gc.get_threshold()
    if tuned_gc:
        gc.collect()
        gc.freeze()
        gc.set_threshold(GC_YOUNG_THRESHOLD, defaults[1], defaults[2])
    spent = dict.fromkeys(STAGES, 0.0)
    cpu = {"prepare": 0.0, "store": 0.0, "thread": 0.0}
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    # CPU: prepare is pure Python on this thread (its thread time); the store's share is
    # the rest of the process's CPU over the run (chDB's threads and merges included).
    cpu_start = time.process_time()
    for batch in batches:
        t0, c0 = time.perf_counter(), time.thread_time()
        prepared = loop.prepare(batch)
        t1, c1 = time.perf_counter(), time.thread_time()
        decisions = settle(loop, prepared)
        t2 = time.perf_counter()
        raw_sink(loop).write(rows_to_write(prepared, decisions))
        t3, c3 = time.perf_counter(), time.thread_time()
        spent["prepare"] += t1 - t0
        spent["settle"] += t2 - t1
        spent["write"] += t3 - t2
        cpu["prepare"] += c1 - c0
        cpu["thread"] += c3 - c1
        assert not any(d.duplicate for d in decisions)
    total = time.perf_counter() - start
    cpu["store"] = time.process_time() - cpu_start - cpu["prepare"]
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    gc.set_threshold(*defaults)
    gc.unfreeze()
    return {**spent, "total": total, **{f"cpu {s}": v for s, v in cpu.items()}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=40_000)
    parser.add_argument("--batch-sizes", default="1000,5000")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-views", action="store_true", help="drop the materialized views")
    parser.add_argument(
        "--insert-settings",
        default="",
        help="k=v,k=v: ClickHouse settings for every insert (parallel_view_processing=1, ...)",
    )
    parser.add_argument(
        "--tuned-only", action="store_true", help="only the worker's GC settings, not both"
    )
    args = parser.parse_args()
    lines = list(mixed_items(n=args.items, bad=args.items // 100, seed=7).lines)
    print(machine())
    views = "no materialized views" if args.no_views else "every materialized view"
    extra = dict(kv.split("=", 1) for kv in args.insert_settings.split(",") if kv)
    print(
        f"{args.items:,} mixed_items lines, in-process (no broker), one stage after another; "
        f"{views}; insert settings {extra or 'none'}; {load()}"
    )
    print()
    head = "| batch | gc | " + " | ".join(f"{s} µs/item" for s in STAGES)
    head += " | prepare CPU µs/item | settle + write CPU µs/item (chDB's threads)"
    head += " | settle + write, the store thread's own CPU µs/item"
    print(head + " | items/s, stages in series | items/s, prepare beside the rest |")
    print("|---" * (len(STAGES) + 7) + "|")
    sizes = [int(b) for b in args.batch_sizes.split(",")]
    for size in sizes:
        for tuned in (True,) if args.tuned_only else (False, True):
            last = args.profile and size == sizes[-1] and tuned
            spent = run(lines, size, tuned, last, views=not args.no_views, insert_settings=extra)
            per = {s: spent[s] / args.items * 1e6 for s in STAGES}
            series = args.items / spent["total"]
            # The worker overlaps prepare (batch N+1) with settle + write (batch N).
            overlapped = args.items / max(spent["prepare"], spent["settle"] + spent["write"])
            cells = " | ".join(f"{per[s]:.1f}" for s in STAGES)
            cells += " | " + " | ".join(
                f"{spent['cpu ' + s] / args.items * 1e6:.1f}"
                for s in ("prepare", "store", "thread")
            )
            gc_name = f"young {GC_YOUNG_THRESHOLD:,}, frozen" if tuned else "default"
            print(f"| {size:,} | {gc_name} | {cells} | {series:,.0f} | {overlapped:,.0f} |")


if __name__ == "__main__":
    main()
