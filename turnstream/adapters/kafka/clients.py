"""The loops' aiokafka clients: how much a fetch takes, and stopping within a bound,
broker or no broker.

With the broker down, ``AIOKafkaProducer.stop`` waits for every unsent batch until its
delivery times out (``request_timeout_ms``, 40 s), and ``AIOKafkaConsumer.stop`` can
raise ``CancelledError`` out of a fetch task sleeping in its retry back-off (aiokafka
0.14.0, ``Fetcher.close``). A worker told to stop must not wait for either: the loops
commit a batch only after its fan-out is acknowledged, so what a producer still holds
belongs to batches not committed, which the next start consumes again.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Protocol

__all__ = ["BACKLOG_FETCH", "STOP_SECONDS", "stop_within"]

log = logging.getLogger(__name__)

#: The consumers' fetch sizes, so that a backlog fills a batch of ``worker.batch_size``
#: (20,000): at aiokafka's defaults (1 MiB a partition) a backlog of mixed items (~520
#: bytes each) came in batches of ~4,000 whatever the batch size, and each batch pays the
#: store ~200 ms of CPU whatever its size (a part and a pipeline per table and view:
#: ~40 µs an item at 5,000, ~10 at 20,000; docs/performance.md, issue 14, round nine).
#: A fetch holds 32 MiB at most over every partition (aiokafka's own bound is 50 MiB;
#: before, 16 input partitions at 1 MiB each held 16 MiB), and never waits for bytes
#: that are not there: without a backlog a batch is what arrived.
BACKLOG_FETCH: dict[str, Any] = {
    "max_partition_fetch_bytes": 4 * 1024 * 1024,
    "fetch_max_bytes": 32 * 1024 * 1024,
}

#: Seconds each client gets to stop cleanly. The loops stop their clients side by side,
#: so a worker with the broker down exits in about this long (the goal is under 10 s).
STOP_SECONDS = 3.0


class _Stoppable(Protocol):
    async def stop(self) -> None: ...


async def stop_within(client: _Stoppable, what: str, seconds: float = STOP_SECONDS) -> bool:
    """Stop ``client``, giving up after ``seconds``; True when it stopped cleanly.

    Never raises: a client that fails to stop is logged and left to the process's end.
    """
    task = asyncio.ensure_future(client.stop())
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        task.add_done_callback(_retrieve)
        log.warning("gave up stopping the %s after %.0f s (is the broker down?)", what, seconds)
        return False
    if task.cancelled() or task.exception() is not None:
        failure = "cancelled" if task.cancelled() else repr(task.exception())
        log.warning("the %s did not stop cleanly: %s", what, failure)
        return False
    return True


def _retrieve(task: asyncio.Future[None]) -> None:
    """Consume the outcome of an abandoned stop, so asyncio does not report it."""
    if not task.cancelled():
        task.exception()
