"""The prepare child's hand-back, timed piece by piece in one process.

    .venv/bin/python bench/handover.py [ITEMS] [--batch-size 4167] [--rounds 5]

With ``worker.prepare_process`` on, a batch crosses to the child and back: the parent
pickles the records, the child unpickles them, prepares the batch and pickles what it
hands back, the parent's pool thread unpickles that, the parent rebuilds the batch
(``_from_slim``), and the store thread turns its rows into the columns it inserts
(``rows_to_write`` and ``RawSink.write`` up to the insert call, on a store that inserts
nothing). Here every step runs in this process, in the worker's collector settings
(``tune_gc``), on ITEMS (default 25,000) ``mixed_items`` lines cut into batches of
``--batch-size`` (the worker's batch at 50,000 items: ~4,167), ``--rounds`` times.

Prints, per step, the median over the rounds of its CPU (``time.thread_time``) in µs per
item, the parent's steps and the child's summed apart. Asserts nothing.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, load, machine, records
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.entrypoints.bootstrap import tune_gc
from turnstream.entrypoints.kafka import prepare_process
from turnstream.entrypoints.kafka.prepare_process import _from_slim, _prepare_in_child
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items

PARENT = ("pickle records", "unpickle result", "_from_slim", "rows to columns")
CHILD = ("unpickle records", "prepare", "pickle result")


def _records_of(messages: list[Any]) -> Any:
    """What the parent sends the child for ``messages`` (main's form before
    ``records_of``: a tuple per message)."""
    own = getattr(prepare_process, "records_of", None)
    if own is not None:
        return own(messages)
    return [(m.topic, m.partition, m.offset, m.value, m.key) for m in messages]


class _NoStore:
    """A store that takes every insert and keeps nothing (the Python before it is timed)."""

    def insert(self, *args: Any, **kwargs: Any) -> None:
        return None


def _sink() -> RawSink:
    sink = RawSink(_NoStore())  # type: ignore[arg-type]
    for table in RAW_TABLES:
        sink._high_water[table] = {}  # the marks as after their first read: none held
    return sink


def _round(batches: list[list[Any]], names: Any, max_bytes: int) -> dict[str, float]:
    spent = dict.fromkeys((*PARENT, *CHILD), 0.0)
    sink = _sink()

    def timed(step: str, call: Any) -> Any:
        start = time.thread_time()
        out = call()
        spent[step] += time.thread_time() - start
        return out

    for messages in batches:
        call = timed(
            "pickle records",
            lambda m=messages: pickle.dumps(
                (_prepare_in_child, _records_of(m), names, max_bytes, datetime.now(UTC)),
                pickle.HIGHEST_PROTOCOL,
            ),
        )
        fn, *args = timed("unpickle records", lambda c=call: pickle.loads(c))
        slim = timed("prepare", lambda f=fn, a=args: f(*a))
        back = timed("pickle result", lambda s=slim: pickle.dumps(s, pickle.HIGHEST_PROTOCOL))
        result = timed("unpickle result", lambda b=back: pickle.loads(b))
        prepared = timed("_from_slim", lambda m=messages, r=result: _from_slim(m, r))
        timed(
            "rows to columns",
            lambda p=prepared: sink.write(rows_to_write(p, p.judged)),
        )
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", nargs="?", type=int, default=25_000)
    parser.add_argument("--batch-size", type=int, default=4167)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(machine())
    print(load())
    with in_process_loop() as loop:
        prepare_process._child["settings"] = loop.settings
        tune_gc()
        lines = list(mixed_items(n=args.items, bad=args.items // 100, seed=7).lines)
        runs = []
        for r in range(args.rounds):
            recs = records(lines, loop.stage.names.input("turn"), start=r * args.items)
            batches = [recs[i : i + args.batch_size] for i in range(0, len(recs), args.batch_size)]
            runs.append(_round(batches, loop.stage.names, loop.fanout_max_bytes))
    us = {step: statistics.median(r[step] for r in runs) * 1e6 / args.items for step in runs[0]}
    print(f"{args.items} items in batches of {args.batch_size}, median of {args.rounds} rounds")
    print(f"{'step':<20} µs CPU per item")
    for step in PARENT:
        print(f"  parent {step:<18} {us[step]:8.2f}")
    print(f"  PARENT total              {sum(us[s] for s in PARENT):8.2f}")
    for step in CHILD:
        print(f"  child  {step:<18} {us[step]:8.2f}")
    print(f"  CHILD total               {sum(us[s] for s in CHILD):8.2f}")
    print(load())


if __name__ == "__main__":
    main()
