"""``turnstream worker`` with the ingest driver's batch steps timed (for bench/batch_phases.py).

    python bench/_timed_worker.py FANOUT_BATCH_BYTES CONFIG OUT.json

Wraps, without copying the loop, the steps of a batch: ``prepare`` (validation, rows and
fan-out messages, on the prepare thread, beside the previous batch's steps; with
``accepted_for`` / ``dead_letter_for`` inside it also timed on their own), then the
ingest driver's ``finish``: ``settle`` (the key look-up, on the store thread) and
``_write`` (the write, retried while the store fails); then the batch loop's
``send_all`` (the fan-out and its acks) and the consumer's ``commit``. "whole batch"
runs from the start of ``finish`` to the end of the commit (without ``prepare``, which
overlaps it). "waiting for the prepared batch" runs from the end of one batch's
commit to the start of the next ``finish`` (the loop idle, waiting on prepare). Every call
on the store thread (``AsyncStore.run``) is timed on that thread, by the function it ran
(``store thread: ...``: the ingest driver's settle and write, the derivation driver's
offer and fire, reads), with the first and last time the thread was busy, so busy time
over that span says whether the store thread is the serial path. After every batch it
writes the totals (seconds) and the batch count to OUT.json.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer

from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.entrypoints.kafka import batch_loop as bl
from turnstream.entrypoints.kafka import ingest_driver as il
from turnstream.entrypoints.kafka import prepare as pr
from turnstream.service import ingest as svc

TOTALS: defaultdict[str, float] = defaultdict(float)
COUNTS: defaultdict[str, int] = defaultdict(int)


SPAN: dict[str, float] = {}


def _add(phase: str, seconds: float) -> None:
    TOTALS[phase] += seconds


def _store_thread_timed() -> None:
    """Time every call ``AsyncStore.run`` puts on the store thread, on that thread."""
    run = AsyncStore.run

    async def timed_run(self: AsyncStore, fn: Any, *args: Any) -> Any:
        name = getattr(fn, "__qualname__", type(fn).__name__).replace(".<locals>", "")

        def on_thread(*a: Any) -> Any:
            started = time.perf_counter()
            SPAN.setdefault("first", started)
            try:
                return fn(*a)
            finally:
                ended = time.perf_counter()
                SPAN["last"] = ended
                _add(f"store thread: {name}", ended - started)
                _add("store thread: busy", ended - started)

        return await run(self, on_thread, *args)

    AsyncStore.run = timed_run  # type: ignore[method-assign]


class _TimedConsumer(AIOKafkaConsumer):
    async def commit(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().commit(*args, **kwargs)
        finally:
            _add("commit", time.perf_counter() - started)


def _timed_sync(phase: str, fn: Any) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            _add(phase, time.perf_counter() - started)

    return wrapper


def main() -> None:
    fanout_bytes, config, out = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    il.IngestDriver.producer_options = {
        **il.IngestDriver.producer_options,
        "max_batch_size": fanout_bytes,
    }
    bl.AIOKafkaConsumer = _TimedConsumer  # type: ignore[misc]
    # Called by prepare_batch (entrypoints/kafka/prepare.py), where prepare on the thread finds
    # them.
    pr.accepted_for = _timed_sync("fan-out: accepted_for", pr.accepted_for)
    pr.dead_letter_for = _timed_sync("fan-out: accepted_for", pr.dead_letter_for)
    # The use case's store calls, timed on the store thread (a retried call: each try).
    svc.IngestBatch.write = _timed_sync("write", svc.IngestBatch.write)  # type: ignore[method-assign]
    send_all = bl.send_all

    async def timed_send_all(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await send_all(*args, **kwargs)
        finally:
            _add("fan-out: send and acks", time.perf_counter() - started)

    bl.send_all = timed_send_all  # type: ignore[assignment]
    il.IngestDriver.prepare = _timed_sync("prepare", il.IngestDriver.prepare)  # type: ignore[method-assign]
    svc.IngestBatch.settle = _timed_sync("settle", svc.IngestBatch.settle)  # type: ignore[method-assign]
    finish = il.IngestDriver.finish

    async def timed_finish(self: il.IngestDriver, prepared: Any) -> Any:
        started = time.perf_counter()
        if "done" in SPAN:
            _add("waiting for the prepared batch", started - SPAN["done"])
        step = await finish(self, prepared)
        counted = step.done

        def done() -> None:  # after the sends and the commit
            if counted is not None:
                counted()
            SPAN["done"] = time.perf_counter()
            _add("whole batch", SPAN["done"] - started)
            COUNTS["batches"] += 1
            COUNTS["messages"] += len(prepared.messages)
            span = SPAN.get("last", 0.0) - SPAN.get("first", 0.0)
            out.write_text(json.dumps({"seconds": TOTALS, "counts": COUNTS, "span": span}))

        step.done = done
        return step

    il.IngestDriver.finish = timed_finish  # type: ignore[method-assign]
    _store_thread_timed()
    from turnstream.entrypoints.cli.main import main as cli

    sys.argv = ["turnstream", "worker", "--config", config]
    cli()


if __name__ == "__main__":
    main()
