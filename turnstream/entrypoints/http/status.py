"""What ``/v1/status`` answers: each loop's state, whether the store answers, the
counters, and a status code an orchestrator can act on (``core/liveness.health``:
503 while a loop has retried longer than ``worker.status_grace``, or is stopped, or the
store has not answered that long; 200 otherwise).

The route is open (healthchecks hold no key): without an operator's key it shows no
store address and no error text, only each error's class and what its kind means.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from typing import Any

from turnstream.adapters.clickhouse.failures import short_message
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.core.liveness import PUBLIC_MESSAGES, Liveness, health

__all__ = ["STORE_TIMEOUT", "StatusReport", "StoreCheck"]

#: Seconds the status waits for the store's answer. The store thread may be busy with a
#: job or a large insert (the retention fold, seconds): then the store is ``busy``, and
#: the last answer stands.
STORE_TIMEOUT = 2.0


def _ping(store: Store) -> None:
    store.scalar("SELECT 1")


class StoreCheck:
    """Whether the store answers ``SELECT 1``, asked on the store thread, one question at
    a time (a status asked often while the thread is busy queues one ping, not many)."""

    def __init__(self, store: AsyncStore, timeout: float = STORE_TIMEOUT) -> None:
        self.store = store
        self.timeout = timeout
        self.liveness = Liveness(running=True)
        self._pending: asyncio.Future[None] | None = None

    async def check(self) -> str:
        """``reachable``, ``unreachable`` (noted in :attr:`liveness`) or ``busy``."""
        if self._pending is None or self._pending.done():
            self._pending = asyncio.ensure_future(self.store.run(_ping, self.store.store))
            # Retrieved here too: a ping that fails after its status gave up is not
            # "never retrieved".
            self._pending.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            await asyncio.wait_for(asyncio.shield(self._pending), self.timeout)
        except TimeoutError:
            return "busy"
        except Exception as exc:
            self.liveness.failed(
                short_message(f"{type(exc).__name__}: {exc}"),
                "unreachable",
                time.time(),
                error_class=type(exc).__name__,
            )
            return "unreachable"
        self.liveness.progressed(time.time())
        return "reachable"


class StatusReport:
    """Builds the answer of ``/v1/status`` from the loops' records and the store check."""

    def __init__(
        self,
        loops: Mapping[str, Liveness],
        store: StoreCheck,
        counters: Callable[[bool], dict[str, Any]],
        grace: float,
    ) -> None:
        """``counters(detail)``: the counters, with what only an operator sees when
        ``detail`` (names of spaces)."""
        self.loops = dict(loops)
        self.store = store
        self.counters = counters
        self.grace = grace

    async def answer(self, detail: bool) -> tuple[int, dict[str, Any]]:
        """The HTTP status and the body; ``detail``: an operator asks (the store's address
        and the errors' text)."""
        reached = await self.store.check()
        now = time.time()
        store_live = self.store.liveness
        verdict = health({**self.loops, "store": store_live}, now, self.grace)
        store: dict[str, Any] = {
            "state": reached,
            "failing_since": store_live.as_dict(now)["failing_since"],
            "last_error_class": store_live.last_error_class,
            "last_error": (store_live.last_error if detail else PUBLIC_MESSAGES["unreachable"])
            if store_live.last_error is not None
            else None,
        }
        if detail:
            with contextlib.suppress(Exception):
                store["address"] = self.store.store.store.describe()
        body: dict[str, Any] = {
            "healthy": verdict.status == 200,
            "failing": list(verdict.failing),
            "grace_seconds": self.grace,
            **self.counters(detail),
            **{name: live.as_dict(now, detail) for name, live in self.loops.items()},
            "store": store,
        }
        return verdict.status, body
