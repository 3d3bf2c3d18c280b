"""The fan-out's partitioner: aiokafka's default (pure-Python murmur2 per message) against
``entrypoints/kafka/fanout.partition_of`` (the same murmur2, its result kept per key).

    .venv/bin/python bench/partitioner.py [ITEMS] [--repeat 3]

Takes the fan-out keys a worker would send for ITEMS (default 50,000) ``mixed_items``
lines (each accepted item's profile id, through ``prepare_batch``), and times, in this
process, the partition of every key both ways, 12 partitions; then the same for as many
keys that are all different (the cache's worst case: every key new). Prints µs of CPU
per key (medians of ``--repeat`` runs, the cache emptied before each); asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka.partitioner import DefaultPartitioner

from bench._harness import fanned_out, load, machine
from turnstream.entrypoints.kafka import fanout


def _keys(items: int) -> list[bytes]:
    """The keys of the messages the ingest driver fans out for ``items`` mixed items."""
    sends, _ = fanned_out(items, "ts-partitioner-")
    return [key for _, _, key in sends if key is not None]


def _time(keys: list[bytes], cached: bool) -> float:
    every = list(range(12))
    default = DefaultPartitioner()
    fanout._index.cache_clear()
    started = time.process_time()
    if cached:
        for key in keys:
            fanout.partition_of(key, every)
    else:
        for key in keys:
            default(key, every, every)
    return (time.process_time() - started) / len(keys) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    keys = _keys(args.items)
    unique = [f"profile-{n:08d}-{'x' * 40}".encode() for n in range(len(keys))]
    print(f"{len(keys):,} fan-out keys, {len(set(keys)):,} distinct; {load()}")
    for label, sample in (("the worker's keys", keys), ("every key different", unique)):
        runs = {c: [_time(sample, c) for _ in range(args.repeat)] for c in (False, True)}
        before, after = statistics.median(runs[False]), statistics.median(runs[True])
        print(
            f"  {label}: default {before:.2f} us/key, cached {after:.2f} us/key "
            f"(x {after / before:.3f})"
        )


if __name__ == "__main__":
    main()
