"""``turnstream worker`` with the ingest loop's batch steps timed (for bench/batch_phases.py).

    python bench/_timed_worker.py FANOUT_BATCH_BYTES CONFIG OUT.json

Wraps, without copying the loop, what ``IngestLoop._handle`` calls: ``rows``,
``write_with_retry``, ``accepted_for`` / ``dead_letter_for``, the producer's ``send``,
the ``asyncio.gather`` of the acks and the consumer's ``commit``; "decide" is the time
from the start of ``_handle`` to ``rows`` (the store-thread call, queueing included).
After every batch it writes the totals (seconds) and the batch count to OUT.json.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from turnstream.streams import ingest_loop as il

TOTALS: defaultdict[str, float] = defaultdict(float)
COUNTS: defaultdict[str, int] = defaultdict(int)
_batch: dict[str, float] = {}


def _add(phase: str, seconds: float) -> None:
    TOTALS[phase] += seconds


class _TimedProducer(AIOKafkaProducer):
    async def send(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().send(*args, **kwargs)
        finally:
            _add("fan-out: send", time.perf_counter() - started)


class _TimedConsumer(AIOKafkaConsumer):
    async def commit(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().commit(*args, **kwargs)
        finally:
            _add("commit", time.perf_counter() - started)


class _TimedAsyncio:
    """The ``asyncio`` the ingest loop module sees: ``gather`` (the acks) timed."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    def gather(self, *aws: Any, **kwargs: Any) -> Any:
        async def timed() -> Any:
            started = time.perf_counter()
            try:
                return await asyncio.gather(*aws, **kwargs)
            finally:
                _add("fan-out: acks", time.perf_counter() - started)

        return timed()


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
    il.FANOUT_BATCH_BYTES = fanout_bytes
    il.AIOKafkaProducer = _TimedProducer  # type: ignore[misc]
    il.AIOKafkaConsumer = _TimedConsumer  # type: ignore[misc]
    il.asyncio = _TimedAsyncio()  # type: ignore[assignment]
    il.accepted_for = _timed_sync("fan-out: accepted_for", il.accepted_for)
    il.dead_letter_for = _timed_sync("fan-out: accepted_for", il.dead_letter_for)
    write = il.write_with_retry

    async def timed_write(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await write(*args, **kwargs)
        finally:
            _add("write", time.perf_counter() - started)

    il.write_with_retry = timed_write  # type: ignore[assignment]
    rows = il.IngestLoop.rows

    def timed_rows(self: il.IngestLoop, decisions: Any) -> Any:
        _add("decide", time.perf_counter() - _batch["started"])
        started = time.perf_counter()
        try:
            return rows(self, decisions)
        finally:
            _add("rows", time.perf_counter() - started)

    il.IngestLoop.rows = timed_rows  # type: ignore[method-assign]
    handle = il.IngestLoop._handle

    async def timed_handle(self: il.IngestLoop, messages: list[Any], *args: Any) -> None:
        _batch["started"] = time.perf_counter()
        await handle(self, messages, *args)
        _add("whole batch", time.perf_counter() - _batch["started"])
        COUNTS["batches"] += 1
        COUNTS["messages"] += len(messages)
        out.write_text(json.dumps({"seconds": TOTALS, "counts": COUNTS}))

    il.IngestLoop._handle = timed_handle  # type: ignore[method-assign]
    from turnstream.cli.main import main as cli

    sys.argv = ["turnstream", "worker", "--config", config]
    cli()


if __name__ == "__main__":
    main()
