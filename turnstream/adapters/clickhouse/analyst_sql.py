"""Analysts' SQL: judged by ClickHouse's parser, run on connections of their own.

The worker's own store client (:class:`turnstream.adapters.clickhouse.store.Store`, on the store
thread) never sees an analyst's text: every statement goes through a *lane*, a thread
with its own ClickHouse connection (chDB: a second handle to the same engine; a server:
a client of its own without a session, as the read-only user when ``[sql] dsn`` names
one). On that connection the statement is first parsed (``formatQuery``: one canonical
statement, a second one refused; ``parseQueryToJSON``: its tree), the text bound as a
query parameter; the tree is judged (:mod:`turnstream.core.sql_gate`); then the
canonical text runs with the limits as query-level settings, never ``SET``: nothing an
analyst sends changes a session, theirs or the worker's. A lane's queries use at most
``[sql] max_threads`` threads at nice +``niceness``, so ingestion keeps its CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import queue
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.driver.exceptions import ClickHouseError

from turnstream.adapters.clickhouse.store import QueryResult, chdb_path, describe_dsn
from turnstream.config import SqlSettings
from turnstream.core.sql_gate import (
    judge_canonical,
    judge_tree,
    parameter_names,
    unsupported_statement,
)
from turnstream.errors import SqlBusy, SqlRefused, StoreError

__all__ = ["AnalystSql", "limit_settings"]

#: What follows an error's own message when ClickHouse quotes the query it was in (the
#: judge's query holds the analyst's text as a parameter: the quote says nothing new).
_IN_SCOPE = re.compile(r"[:.]?\s*In scope SELECT (formatQuery|parseQueryToJSON)\(.*", re.DOTALL)
_PARAMETER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def limit_settings(limits: SqlSettings, *, readonly: bool = True) -> dict[str, Any]:
    """The query-level settings of an analyst's statement, ``readonly`` last: once it is
    1 no later setting may change. ``readonly=False`` for a server's read-only user, whose
    profile holds ``readonly`` (a query may not set it there)."""
    settings: dict[str, Any] = {
        "max_execution_time": limits.timeout,
        "max_memory_usage": limits.max_memory,
        "max_result_rows": limits.max_rows,
        "max_result_bytes": limits.max_bytes,
        "result_overflow_mode": "throw",
        "max_threads": limits.max_threads,
        "os_thread_priority": limits.niceness,
    }
    if readonly:
        settings["readonly"] = 1
    return settings


class _Lane:
    """One thread and the connection it alone uses (opened on that thread)."""

    def __init__(self, owner: AnalystSql, number: int) -> None:
        self.owner = owner
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sql-{number}")
        self._client: Any = None

    def client(self) -> Any:
        if self._client is None:
            self._client = self.owner._connect()
        return self._client

    def run(self, sql: str, parameters: dict[str, Any]) -> QueryResult:
        """Judge ``sql`` and run its canonical text (blocking, on this lane's thread)."""
        owner = self.owner
        canonical = str(self._parse("formatQuery", sql))
        used: set[str] = set()
        if not judge_canonical(canonical, owner.database):
            tree = json.loads(str(self._parse("parseQueryToJSON", canonical)))
            judge_tree(tree, owner.database)
            used = parameter_names(tree)
        missing = sorted(used - parameters.keys())
        if missing:
            raise SqlRefused(f"query parameter {missing[0]} has no value in parameters")
        bound = {name: parameters[name] for name in used}
        try:
            result = self.client().query(
                canonical, parameters=bound or None, settings=owner.settings
            )
            # The rows are read in the try: an answer the driver cannot decode fails here.
            return QueryResult(
                list(result.column_names),
                [t.name for t in result.column_types],
                [tuple(r) for r in result.result_rows],
            )
        except (ClickHouseError, OSError) as exc:
            raise StoreError(str(exc), code=getattr(exc, "code", None)) from exc
        except (IndexError, KeyError, TypeError, ValueError) as exc:  # the driver's decoding
            raise StoreError(f"the store's answer could not be read: {exc}") from exc

    def _parse(self, function: str, text: str) -> Any:
        """``function(text)`` on this connection, the text bound as a parameter."""
        try:
            rows = self.client().query(f"SELECT {function}({{q:String}})", parameters={"q": text})
        except (ClickHouseError, OSError) as exc:
            message = _IN_SCOPE.sub("", str(exc)).strip()
            if "does not support JSON serialization" in message:
                raise unsupported_statement(message) from None
            raise SqlRefused(f"not one statement ClickHouse can parse: {message}") from None
        return rows.result_rows[0][0]

    def close(self, wait: float = 2.0) -> None:
        """Close the connection on its thread, waiting at most ``wait`` seconds for a
        query in flight (at shutdown its answer is not awaited anyway)."""

        def _close() -> None:
            if self._client is not None:
                with contextlib.suppress(Exception):
                    self._client.close()
                self._client = None

        with contextlib.suppress(RuntimeError, TimeoutError):
            self.executor.submit(_close).result(timeout=wait)
        self.executor.shutdown(wait=False, cancel_futures=True)


class AnalystSql:
    """Analysts' statements on ``limits.concurrency`` connections of their own: the
    store at ``dsn`` (an embedded one is the same engine as the worker's), or a server
    as ``limits.dsn``'s user when it is set."""

    def __init__(self, dsn: str, database: str, limits: SqlSettings) -> None:
        self.dsn = dsn
        self.database = database
        self.limits = limits
        self.path = chdb_path(dsn)
        # [sql] dsn names a server's read-only user; an embedded store has no users.
        given = limits.dsn.get_secret_value() if limits.dsn is not None else None
        self._server_dsn = given if self.path is None else None
        # That user has readonly in its profile (turnstream sql-user): a query may not set it.
        self.settings = limit_settings(limits, readonly=self._server_dsn is None)
        self._lanes = [_Lane(self, n) for n in range(limits.concurrency)]
        self._idle: queue.Queue[_Lane] = queue.Queue()
        for lane in self._lanes:
            self._idle.put(lane)
        self._waiting: asyncio.Queue[_Lane] | None = None

    def _connect(self) -> Any:
        try:
            if self.path is not None:
                return clickhouse_connect.get_client(
                    interface="chdb", path=str(self.path), database=self.database
                )
            return clickhouse_connect.get_client(
                dsn=self._server_dsn or self.dsn, database=self.database
            )
        except Exception as exc:  # driver errors come in many classes
            where = describe_dsn(self._server_dsn or self.dsn)
            # The driver's message names the cause (no such database: run the migrations);
            # it holds no password (the DSN is not in it).
            reason = str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__
            for dsn in (self._server_dsn, self.dsn):
                password = urlsplit(dsn).password if dsn else None
                if password:
                    reason = reason.replace(password, "***")
            raise StoreError(
                f"cannot open a connection for analysts' SQL to {where}: {reason}"
            ) from exc

    def run(self, sql: str, parameters: dict[str, Any] | None = None) -> QueryResult:
        """Judge and run one statement, blocking (for code outside an event loop)."""
        params = _checked(parameters)
        lane = self._idle.get()
        try:
            return lane.executor.submit(lane.run, sql, params).result()
        finally:
            self._idle.put(lane)

    async def run_async(self, sql: str, parameters: dict[str, Any] | None = None) -> QueryResult:
        """Judge and run one statement on a free lane, off the event loop and off the
        store thread; waits ``limits.wait`` seconds at most for a lane when every one
        is busy (:class:`SqlBusy` after that)."""
        params = _checked(parameters)
        if self._waiting is None:
            self._waiting = asyncio.Queue()
            while not self._idle.empty():
                self._waiting.put_nowait(self._idle.get_nowait())
        try:
            # Queue.get gives up cleanly when timed out: no lane is lost.
            lane = await asyncio.wait_for(self._waiting.get(), self.limits.wait)
        except TimeoutError:
            raise SqlBusy(
                f"analysts' SQL is busy: its {len(self._lanes)} connection(s) ran other "
                f"queries for the {self.limits.wait:g} s this one waited ([sql] "
                "concurrency, wait); try again"
            ) from None
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(lane.executor, lane.run, sql, params)
        finally:
            self._waiting.put_nowait(lane)

    def close(self) -> None:
        """Close every connection and stop the lanes' threads."""
        for lane in self._lanes:
            lane.close()


def _checked(parameters: dict[str, Any] | None) -> dict[str, Any]:
    """The parameters, each name a plain identifier (``$name$`` would be spliced into
    the text by the driver)."""
    params = dict(parameters or {})
    for name in params:
        if not isinstance(name, str) or not _PARAMETER.match(name):
            raise SqlRefused(f"parameters: {name!r} is not a name ([A-Za-z_][A-Za-z0-9_]*)")
    return params
