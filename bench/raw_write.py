"""The raw-table write alone (``RawSink.write``), its variants alternating in one process.

    .venv/bin/python bench/raw_write.py [ITEMS] [--batch-size 5000] [--rounds 5] [--views]
        [--variants now,lc-as-string,async-insert-0]

Prepares and settles ITEMS (default 20,000) ``mixed_items`` lines once, then writes the
same rows again and again into a throw-away chDB store (the materialized views dropped
unless ``--views``), each round with fresh source offsets (so fresh insert tokens), the
variants in rotated order:

* ``now``: the sink as it is;
* ``lc-as-string``: ``LowCardinality(T)`` columns sent as ``T``, converted by chDB
  (``input_format_native_allow_types_conversion``), so that clickhouse-connect does not
  build their dictionaries in Python (``_build_lc_dictionary``);
* ``async-insert-0``: the sink as it is with ``async_insert = 0`` on every insert (chDB's
  default is 1).

Prints, per variant, the median over the rounds of the store thread's own CPU
(``time.thread_time``: Python, and chDB's work on the calling thread) and of the
process's CPU (chDB's threads and merges too), in µs per item. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, load, machine, records, settle
from bench.hot_path import _drop_views, _with_settings
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.rows import Rows
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items

VARIANTS = ("now", "lc-as-string", "async-insert-0")


def _shifted(batches: list[Rows], by: int) -> list[Rows]:
    """The rows with their source offsets moved up by ``by`` (fresh insert tokens)."""
    return [
        {t: [{**r, "_offset": r["_offset"] + by} for r in rows] for t, rows in batch.items()}
        for batch in batches
    ]


def _variant(store: Store, name: str) -> Callable[[], None]:
    """Switch ``store`` to variant ``name``; returns what switches it back."""
    insert = store._client.insert
    if name == "lc-as-string":
        types = store._types

        def inner(table: str, columns: Any) -> list[str] | None:
            kinds = types(table, columns)
            lc = "LowCardinality("
            return kinds and [k[len(lc) : -1] if k.startswith(lc) else k for k in kinds]

        store._types = inner  # type: ignore[method-assign]
    elif name == "async-insert-0":
        _with_settings(store, {"async_insert": "0"})

    def undo() -> None:
        store.__dict__.pop("_types", None)
        store._client.insert = insert  # type: ignore[method-assign]

    return undo


def _write(store: Store, batches: list[Rows]) -> tuple[float, float]:
    sink = RawSink(store)
    for table in batches[0]:
        sink.high_water(table)  # the marks' first read, outside the timing
    c0, p0 = time.thread_time(), time.process_time()
    for batch in batches:
        sink.write(batch)
    return time.thread_time() - c0, time.process_time() - p0


def _rounds(
    loop: IngestDriver, lines: list[bytes], size: int, rounds: int, variants: tuple[str, ...]
) -> dict[str, Any]:
    topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
    messages = records(lines, topic)
    batches = []
    for at in range(0, len(messages), size):
        prepared = loop.prepare(messages[at : at + size])
        batches.append(rows_to_write(prepared, settle(loop, prepared)))
    store = loop.store.store
    spent: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
    step = 0
    for r in range(rounds):
        order = variants[r % len(variants) :] + variants[: r % len(variants)]
        for name in order:
            step += 1
            shifted = _shifted(batches, step * 10_000_000)
            undo = _variant(store, name)
            try:
                spent[name].append(_write(store, shifted))
            finally:
                undo()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--batch-size", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--views", action="store_true", help="keep the materialized views")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="of " + ", ".join(VARIANTS))
    args = parser.parse_args()
    lines = list(mixed_items(n=args.items, bad=args.items // 100, seed=7).lines)
    print(machine())
    views = "every materialized view" if args.views else "no materialized views"
    print(f"{args.items:,} mixed_items, batches of {args.batch_size:,}; {views}; {load()}")
    with in_process_loop("ts-raw-write-") as loop:
        loop.stage.process = None
        if not args.views:
            loop.store.call(_drop_views, loop.store.store)
        variants = tuple(args.variants.split(","))
        spent = loop.store.call(_rounds, loop, lines, args.batch_size, args.rounds, variants)
    print(f"after: {load()}")
    print()
    print("| variant | store thread CPU µs/item (median; each round) | process CPU µs/item |")
    print("|---|---|---|")
    for name, runs in spent.items():
        thread = [t / args.items * 1e6 for t, _ in runs]
        process = [p / args.items * 1e6 for _, p in runs]
        each = ", ".join(f"{t:.1f}" for t in thread)
        print(
            f"| {name} | **{statistics.median(thread):.1f}** ({each}) | "
            f"{statistics.median(process):.1f} ({', '.join(f'{p:.1f}' for p in process)}) |"
        )


if __name__ == "__main__":
    main()
