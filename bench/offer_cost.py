"""The derivation driver's ``_offer`` (the store thread's per-batch hold) in one process.

    .venv/bin/python bench/offer_cost.py [ITEMS] [--runs 7] [--profile] [--src DIR]

Prepares ITEMS (default 20,000) ``mixed_items`` lines with the ingest driver on a
throw-away chDB store, keeps the accepted messages it fans out, parses them once as the
derivation loop's prepare does (``DerivationDriver.prepare``, not timed), then times
``DerivationDriver._offer`` alone over every batch of 5,000 consumer records (four
partitions), on a new engine each run, with the worker's garbage-collector settings: the
store thread's CPU (thread time) per accepted message, median of RUNS runs, and the
shape of the input (events per message, per session and batch). ``--profile`` adds
cProfile's own time per function, in µs per message (the profiler inflates every call;
read it for the ranking, not the figure). ``--src DIR`` imports ``turnstream`` from
another checkout (read only), to compare a branch with main in the same interpreter
and on the same messages. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _paths() -> str:
    """Put ``--src`` (or this checkout) first on ``sys.path``; the source used."""
    src = ROOT
    if "--src" in sys.argv:
        src = Path(sys.argv[sys.argv.index("--src") + 1]).resolve()
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(src))
    return str(src)


SRC = _paths()

import cProfile  # noqa: E402
import gc  # noqa: E402
import pstats  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from types import SimpleNamespace  # noqa: E402
from typing import Any  # noqa: E402

import turnstream  # noqa: E402
from bench._harness import load, machine  # noqa: E402
from bench.derivation_parse import BATCH, accepted_messages  # noqa: E402
from turnstream.config import Settings  # noqa: E402
from turnstream.core.derivation.engine import SignalsEngine  # noqa: E402
from turnstream.entrypoints.bootstrap import GC_YOUNG_THRESHOLD  # noqa: E402
from turnstream.entrypoints.kafka.derivation_driver import DerivationDriver  # noqa: E402


def new_driver(settings: Settings) -> DerivationDriver:
    """A driver with only what ``_offer`` reads, on a new engine."""
    driver = DerivationDriver.__new__(DerivationDriver)
    driver.engine = SignalsEngine(settings.signals)
    driver._consumed, driver.cpu_seconds, driver._next_due = {}, 0.0, None
    return driver


def one_run(parsed: list[Any], settings: Settings) -> float:
    """Thread CPU seconds of ``_offer`` over every parsed batch, on a new engine."""
    driver = new_driver(settings)
    now = datetime.now(UTC)
    spent = 0.0
    for batch in parsed:
        started = time.thread_time()
        driver._offer(batch, now)
        spent += time.thread_time() - started
    return spent


def shape(parsed: list[Any]) -> str:
    """Events per message, sessions per batch and events per session per batch."""
    messages = sum(len(b) for b in parsed)
    events = sum(len(ev) for b in parsed for _, _, ev in b)
    sessions = [
        Counter((e.space_id, e.profile_id, e.session) for _, _, ev in b for e in ev) for b in parsed
    ]
    keys = sum(len(s) for s in sessions)
    return (
        f"{events:,} events in {messages:,} messages ({events / messages:.2f} a message); "
        f"{keys / len(parsed):,.0f} sessions a batch of {BATCH:,}, "
        f"{events / keys:.2f} events a session and batch"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--src", default=str(ROOT), help="a checkout to import turnstream from")
    args = parser.parse_args()
    print(machine())
    print(f"turnstream from {Path(turnstream.__file__).resolve().parents[1]}")
    values, settings = accepted_messages(args.items)
    consumed = [
        SimpleNamespace(topic="b.accepted", partition=n % 4, offset=n, value=v, key=None)
        for n, v in enumerate(values)
    ]
    parsed = [
        DerivationDriver.prepare(SimpleNamespace(), consumed[at : at + BATCH])  # type: ignore[arg-type]
        for at in range(0, len(consumed), BATCH)
    ]
    print(shape(parsed))
    gc.collect()
    gc.freeze()
    defaults = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, defaults[1], defaults[2])
    one_run(parsed, settings)  # warm-up
    runs = sorted(one_run(parsed, settings) for _ in range(args.runs))
    per = 1e6 / len(values)
    print()
    print(f"| µs of CPU per accepted message, `_offer` | median of {args.runs} | min | max |")
    print("|---|---|---|---|")
    print(
        f"| {SRC} | {statistics.median(runs) * per:.2f} | {runs[0] * per:.2f} "
        f"| {runs[-1] * per:.2f} |"
    )
    print(load())
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        one_run(parsed, settings)
        profiler.disable()
        stats = pstats.Stats(profiler)
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])  # type: ignore[attr-defined]
        print()
        print("| cProfile, own time, µs per message (inflated) | calls per message | µs |")
        print("|---|---|---|")
        for (file, line, name), (_, calls, own, _, _) in rows[:12]:
            where = f"{Path(file).name}:{line} {name}" if line else name
            print(f"| `{where}` | {calls / len(values):.2f} | {own * per:.2f} |")
    gc.set_threshold(*defaults)


if __name__ == "__main__":
    main()
