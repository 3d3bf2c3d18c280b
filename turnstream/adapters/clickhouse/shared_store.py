"""A job's view of the worker's store: each call a unit on the store thread.

The worker runs every store call on one thread (:class:`AsyncStore`). A job run on that
thread as one call held it for the whole job (minutes for the nightly priors' re-derivation
of a large space), and ingestion, firings and reads waited. A job run through a
:class:`SharedStore` runs on a thread of its own and hands the store thread one statement
at a time, so the worker's batches run between a job's statements.

What a job did by two calls that must not be split stays one unit: a staged table
(:meth:`Store.stage`) is written on the store thread together with the next call, the one
that reads it, since another user of the thread (a firing's state look-up) stages too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from turnstream.adapters.clickhouse.store import AsyncStore, QueryResult, Store

__all__ = ["SharedStore"]

T = TypeVar("T")


class SharedStore(Store):
    """The :class:`Store` of ``shared``, for a thread other than its store thread: every
    call runs there as one unit, a staged table with the call after it. Blocking."""

    def __init__(self, shared: AsyncStore) -> None:  # no super(): no client of its own
        self._shared = shared
        self._store = shared.store
        self.dsn = self._store.dsn
        self.database = self._store.database
        self.path = self._store.path
        self._stages: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def _unit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        stages, self._stages = self._stages, []
        store = self._store

        def unit() -> T:
            for stage_args, stage_kwargs in stages:
                store.stage(*stage_args, **stage_kwargs)
            return fn(*args, **kwargs)

        return self._shared.call(unit)

    def command(
        self,
        sql: str,
        settings: dict[str, Any] | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        self._unit(self._store.command, sql, settings, parameters)

    def query(
        self,
        sql: str,
        parameters: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> QueryResult:
        return self._unit(self._store.query, sql, parameters, settings)

    def insert(
        self,
        table: str,
        rows: Sequence[Sequence[Any]],
        columns: Sequence[str],
        token: str | None = None,
        *,
        column_oriented: bool = False,
    ) -> None:
        self._unit(self._store.insert, table, rows, columns, token, column_oriented=column_oriented)

    def stage(
        self,
        name: str,
        columns: Sequence[tuple[str, str]],
        rows: Sequence[Sequence[Any]],
        *,
        column_oriented: bool = False,
    ) -> None:
        """Stage ``rows`` with the next call (see the module)."""
        self._stages.append(((name, columns, rows), {"column_oriented": column_oriented}))

    def flush(self) -> None:
        """Write what is staged and not yet read (a job's last call may be a stage)."""
        if self._stages:
            self._unit(lambda: None)

    def unit(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(store, *args)`` on the store thread as one unit, the real store given."""
        return self._unit(fn, self._store, *args)

    def forget_columns(self) -> None:
        self._unit(self._store.forget_columns)

    def claim_ownership(self, url: str) -> None:
        raise TypeError("a job does not claim the store: the worker owns it")

    def release_ownership(self) -> None:
        raise TypeError("a job does not release the store: the worker owns it")

    def close(self) -> None:
        """Write what is staged; the worker closes its store itself."""
        self.flush()
