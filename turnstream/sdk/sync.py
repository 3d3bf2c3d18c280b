"""A producer for sync agents: aiokafka's producer on an event loop in a thread of its own.

```python
from turnstream.adapters.kafka.producer import Producer
from turnstream.sdk import Conversation, SyncProducer

with SyncProducer(lambda: Producer(settings)) as producer:   # the loop thread, started
    conversation = Conversation(..., producer=producer)
    with conversation.turn():                      # a plain `with`: waits for the broker
        conversation.agent(reply)
```

Each turn's record is handed to the loop and waited for (the broker's acknowledgement);
leaving the block flushes what is in flight, stops the producer and the thread. A sync
``with conversation.turn()`` on the producer's own loop cannot wait: it is refused when the
turn starts, before anything is collected (use ``async with`` there).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any

from turnstream.config import Settings
from turnstream.errors import TurnstreamError

__all__ = ["LoopThread", "SyncProducer"]


class LoopThread:
    """An asyncio event loop running in a daemon thread; ``run`` waits for a coroutine."""

    def __init__(self, name: str = "turnstream-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def run(self, coro: Awaitable[Any], timeout: float = 60.0) -> Any:
        """Run ``coro`` on the loop and wait for its result (``timeout`` seconds at most)."""
        if self.loop.is_closed():
            raise TurnstreamError("the loop thread is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)  # type: ignore[arg-type]

    def close(self) -> None:
        """Stop the loop and its thread (idempotent)."""
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


class SyncProducer:
    """``turnstream.adapters.kafka.producer.Producer`` for sync code: started on a loop thread of
    its own.

    It is what ``Conversation(producer=...)`` needs (``publish``, ``loop``, ``settings``);
    ``publish_sync(item)`` publishes one item and waits. ``factory`` builds the producer
    on the loop (``lambda: Producer(settings)``; the SDK does not import the producer's
    module, which reaches the worker's topology).
    """

    def __init__(self, factory: Callable[[], Any], *, timeout: float = 30.0) -> None:
        if not callable(factory):
            raise TurnstreamError(
                "SyncProducer(factory): a callable that builds the producer, e.g. "
                "lambda: Producer(settings)"
            )
        self._factory = factory
        self.timeout = timeout
        self._thread: LoopThread | None = None
        self._producer: Any = None
        self.settings: Settings | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The loop the producer runs on (None before ``start``)."""
        return None if self._thread is None else self._thread.loop

    def start(self) -> SyncProducer:
        """Start the loop thread and the producer on it."""
        if self._thread is not None:
            raise TurnstreamError("SyncProducer.start: already started")
        self._thread = LoopThread()
        try:
            self._producer = self._thread.run(self._make_and_start(), self.timeout)
        except BaseException:
            self._thread.close()
            self._thread = None
            raise
        self.settings = getattr(self._producer, "settings", None)
        return self

    async def _make_and_start(self) -> Any:
        producer = self._factory()  # built on the loop: aiokafka binds to the running one
        await producer.start()
        return producer

    def publish(self, item: Any) -> Awaitable[Any]:
        """The producer's ``publish`` coroutine (``Conversation`` runs it on ``loop``)."""
        if self._producer is None:
            raise TurnstreamError("the producer is not started: use `with SyncProducer(...)`")
        return self._producer.publish(item)  # type: ignore[no-any-return]

    def publish_sync(self, item: Any) -> Any:
        """Publish one item and wait for the broker's acknowledgement."""
        assert self._thread is not None
        return self._thread.run(self.publish(item), self.timeout)

    def stop(self) -> None:
        """Flush what is in flight, stop the producer, then the thread."""
        if self._thread is None:
            return
        try:
            if self._producer is not None:
                self._thread.run(self._producer.stop(), self.timeout)
        finally:
            self._producer = None
            self._thread.close()
            self._thread = None

    def __enter__(self) -> SyncProducer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
