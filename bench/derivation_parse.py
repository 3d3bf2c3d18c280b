"""The derivation driver's per-item CPU in one process: parse and offer, no broker.

    .venv/bin/python bench/derivation_parse.py [ITEMS] [--runs 5] [--profile]

Prepares ITEMS (default 20,000) ``mixed_items`` lines with the ingest driver on a
throw-away chDB store, keeps the accepted messages it fans out, and feeds them, in batches
of 5,000 as consumer records, through what the derivation loop does per batch:
``DerivationDriver.prepare`` (JSON and ``events_from_accepted``, the loop's prepare
thread) and ``_offer`` (``SignalsEngine.offer`` per event, the store thread), with the
worker's garbage-collector settings. Prints the CPU (thread time) per accepted message of
each, median of RUNS runs on a new engine each, and beside them the JSON alone: the
standard library's ``json.loads`` against the driver's decoder. Prints figures; asserts
nothing.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import pstats
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import fanned_out, load, machine
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.entrypoints.bootstrap import GC_YOUNG_THRESHOLD
from turnstream.entrypoints.kafka import derivation_driver
from turnstream.entrypoints.kafka.derivation_driver import DerivationDriver

BATCH = 5_000


def accepted_messages(items: int) -> tuple[list[bytes], Settings]:
    """The accepted messages the ingest driver fans out for ``items`` mixed items."""
    sends, settings = fanned_out(items, "ts-derive-parse-", BATCH)
    accepted = TopicNames(settings.worker.topic_prefix).accepted
    return [value for topic, value, _ in sends if topic == accepted], settings


def one_run(batches: list[list[Any]], settings: Settings) -> tuple[float, float]:
    """Thread CPU seconds of prepare and of offer over every batch, on a new engine."""
    driver = DerivationDriver.__new__(DerivationDriver)
    driver.engine = SignalsEngine(settings.signals)
    driver._consumed, driver.cpu_seconds, driver._next_due = {}, 0.0, None
    now = datetime.now(UTC)
    parse = offer = 0.0
    for batch in batches:
        c0 = time.thread_time()
        parsed = driver.prepare(batch)
        c1 = time.thread_time()
        driver._offer(parsed, now)
        parse, offer = parse + c1 - c0, offer + time.thread_time() - c1
    return parse, offer


def json_alone(values: list[bytes], loads: Any) -> float:
    started = time.thread_time()
    for value in values:
        loads(value)
    return time.thread_time() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    print(machine())
    values, settings = accepted_messages(args.items)
    size = sum(map(len, values)) / len(values)
    print(f"{len(values):,} accepted messages ({size:.0f} bytes on average); {load()}")
    topic = "b.accepted"
    consumed = [
        SimpleNamespace(topic=topic, partition=n % 4, offset=n, value=v, key=None)
        for n, v in enumerate(values)
    ]
    batches = [consumed[at : at + BATCH] for at in range(0, len(consumed), BATCH)]
    gc.collect()
    gc.freeze()
    defaults = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, defaults[1], defaults[2])
    runs = [one_run(batches, settings) for _ in range(args.runs)]
    per = 1e6 / len(values)
    parse = statistics.median(r[0] for r in runs) * per
    offer = statistics.median(r[1] for r in runs) * per
    std = statistics.median(json_alone(values, json.loads) for _ in range(args.runs)) * per
    ours = (
        statistics.median(json_alone(values, derivation_driver._loads) for _ in range(args.runs))
        * per
    )
    print()
    print("| µs of CPU per accepted message | prepare (JSON + events) | offer | both |")
    print("|---|---|---|---|")
    print(f"| medians of {args.runs} | {parse:.1f} | {offer:.1f} | {parse + offer:.1f} |")
    print()
    print(f"JSON alone: json.loads {std:.1f} µs, the driver's decoder {ours:.1f} µs ({load()})")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_run(batches, settings)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
    gc.set_threshold(*defaults)


if __name__ == "__main__":
    main()
