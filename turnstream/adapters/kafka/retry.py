"""Broker calls retried through transient errors, with a bounded back-off.

Right after its topics are created a broker may still be electing their partitions'
leaders (``NotLeaderForPartitionError``, ``LeaderNotAvailableError``), and a broker
starting or short of CPU may not answer in time (``KafkaConnectionError``, a request
timed out). Those pass by themselves: a worker's start-up waits them out instead of
exiting. What does not pass (a topic it may not describe, a broker too old) raises at
once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiokafka.errors import KafkaError, KafkaTimeoutError

__all__ = ["FIRST_DELAY", "MAX_DELAY", "named_error", "retrying", "transient"]

log = logging.getLogger(__name__)

#: Seconds before the first retry, doubled after each to at most :data:`MAX_DELAY`: a
#: leader election after a topic's creation takes well under a second on an idle broker,
#: seconds on a loaded one.
FIRST_DELAY = 0.2
MAX_DELAY = 5.0

T = TypeVar("T")


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` is a broker error that passes by itself: one aiokafka calls
    retriable (a leader being elected, a connection lost, a coordinator moving), a client
    that timed out waiting, or a connection refused or timed out."""
    if isinstance(exc, KafkaError):
        return bool(exc.retriable) or isinstance(exc, KafkaTimeoutError)
    return isinstance(exc, ConnectionError | TimeoutError)


async def retrying(
    call: Callable[[], Awaitable[T]],
    what: str,
    deadline: float,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``call()``'s result, calling it again after each :func:`transient` error (logged,
    then a back-off of :data:`FIRST_DELAY` doubling to :data:`MAX_DELAY`) until
    ``clock()`` would pass ``deadline``; then, or for any other error, the error raises.
    ``what`` names the call in the log."""
    delay = FIRST_DELAY
    while True:
        try:
            return await call()
        except Exception as exc:
            if not transient(exc) or clock() + delay > deadline:
                raise
            log.warning(
                "%s: transient broker error (%s); retrying in %.1f s", what, named_error(exc), delay
            )
        await sleep(delay)
        delay = min(delay * 2, MAX_DELAY)


def named_error(exc: BaseException) -> str:
    """The error's text, with its class when the text does not name it (aiokafka's do)."""
    name, text = type(exc).__name__, str(exc)
    return text if name in text else f"{name}: {text}" if text else name
