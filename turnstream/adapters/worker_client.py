"""The one HTTP client to a running worker, and the read path that goes through it.

An embedded (chDB) store belongs to one process: the worker that owns it writes an owner
file with its pid and URL, and every other process (``turnstream sql``, the jobs, the
tests) asks that worker instead of opening the store: ``/v1/sql``, ``/v1/jobs/NAME/``,
``/v1/status``. With a ClickHouse server, or when no worker owns the store, queries go to
the store directly. Every request carries the configured API key (``[api] key`` or
``TURNSTREAM_API_KEY``) as ``Authorization: Bearer``.
"""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from turnstream.adapters.clickhouse.analyst_sql import AnalystSql
from turnstream.adapters.clickhouse.store import QueryResult, chdb_path, owner_file
from turnstream.adapters.processes import pid_alive
from turnstream.config import Settings
from turnstream.errors import StoreError

__all__ = ["WorkerClient", "WorkerError", "owner_url", "read_query"]


class WorkerError(StoreError, OSError):
    """The worker refused a request or did not answer (an ``OSError`` too, as
    ``urllib``'s own errors are, so callers that wait for a worker keep working)."""


def owner_url(settings: Settings) -> str | None:
    """The URL of the live worker that owns the embedded store, if there is one."""
    path = chdb_path(settings.store.dsn)
    if path is None:
        return None
    try:
        owner = json.loads(owner_file(path).read_text())
    except (FileNotFoundError, ValueError):
        return None
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid == os.getpid() or not pid_alive(pid):
        return None
    return owner.get("url")


class WorkerClient:
    """Talks JSON to a worker's HTTP API at ``url`` (``http://host:port``), presenting
    ``key`` (an API key; without one, only the open ``/v1/status`` answers)."""

    def __init__(self, url: str, key: str | None = None) -> None:
        self.url = url.rstrip("/")
        self._key = key

    @classmethod
    def configured(cls, settings: Settings) -> WorkerClient:
        """The worker at the configured ``worker.web_host`` and ``worker.web_port``, with
        the configured key; a worker listening on every interface (``0.0.0.0``, ``::``)
        is asked on loopback."""
        host = settings.worker.web_host
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
        url = f"http://{host}:{settings.worker.web_port}"
        return cls(url, settings.api_key())

    def status(self, timeout: float = 5.0) -> dict[str, Any]:
        """The worker's counters and loops (``/v1/status``), also when it answers 503
        (a loop failing past the grace: the body says which, under ``failing``)."""
        return self._call("/v1/status", None, timeout, "the status request", accept=(503,))

    def sql(
        self, sql: str, parameters: dict[str, Any] | None = None, timeout: float = 60.0
    ) -> QueryResult:
        """Run a read-only query on the worker's store (``/v1/sql``); values as
        ``{name:Type}`` ``parameters``, never in ``sql``."""
        body = self._call(
            "/v1/sql", {"sql": sql, "parameters": parameters or {}}, timeout, "the query"
        )
        return QueryResult(body["columns"], body["types"], [tuple(r) for r in body["rows"]])

    def constraints(self, body: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """The constraints block of one person (``POST /v1/constraints``)."""
        return self._call("/v1/constraints", body, timeout, "the constraints request")

    def sdk_profile(self, space_id: str, source: str, timeout: float = 10.0) -> dict[str, Any]:
        """The SDK's profile of one source (``GET /v1/sdk/profile``): its tool bindings and
        the claim contract's version; ``turnstream.sdk.Conversation(profile=...)`` takes it."""
        query = urllib.parse.urlencode({"space_id": space_id, "source": source})
        return self._call(f"/v1/sdk/profile?{query}", None, timeout, "the profile request")

    def context_use(
        self,
        space_id: str | None = None,
        since: str | None = None,
        by: str = "source,agent",
        timeout: float = 60.0,
    ) -> dict[str, Any]:
        """The context-use report (``GET /v1/context-use``): ``claims``,
        ``claims_by_verdict``, ``turns``, ``constraints``, as rows of objects. A key of one
        space (its analyst key) reads its own space; an operator's key any."""
        params = {"by": by} | ({"space_id": space_id} if space_id else {})
        if since:
            params["since"] = since
        query = urllib.parse.urlencode(params)
        return self._call(f"/v1/context-use?{query}", None, timeout, "the context-use report")

    def run_job(self, name: str, params: dict[str, str], timeout: float = 3600) -> dict[str, Any]:
        """Run job ``name`` in the worker, on its store thread (``/v1/jobs/NAME/``)."""
        return self._call(f"/v1/jobs/{name}/", params, timeout, f"job {name}")

    def _call(
        self, path: str, body: Any, timeout: float, what: str, accept: tuple[int, ...] = ()
    ) -> Any:
        """GET ``path`` (no body) or POST ``body`` as JSON; the JSON answer (also of an
        error status in ``accept``)."""
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            headers=headers,
            method="GET" if body is None else "POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            if exc.code in accept:
                with contextlib.suppress(ValueError):
                    return json.loads(raw)
            detail = raw.decode(errors="replace")
            with contextlib.suppress(ValueError, AttributeError):
                detail = json.loads(detail).get("error", detail)
            if exc.code == 401 and not self._key:
                detail += " (no key configured: set TURNSTREAM_API_KEY or [api] key)"
            raise WorkerError(f"the worker at {self.url} refused {what}: {detail}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise WorkerError(
                f"the worker at {self.url} did not answer {what} ({reason}); is it starting?"
            ) from exc


def read_query(
    settings: Settings,
    sql: str,
    parameters: dict[str, Any] | None = None,
    timeout: float = 60.0,
) -> QueryResult:
    """Run a read-only query against the configured store, wherever it is; values as
    ``{name:Type}`` ``parameters`` (JSON values: text, numbers, lists), never in ``sql``."""
    url = owner_url(settings)
    if url is not None:
        return WorkerClient(url, settings.api_key()).sql(sql, parameters, timeout)
    # No worker: the same gate and limits as /v1/sql, on a connection of this process.
    analysts = AnalystSql(settings.store.dsn, settings.store.database, settings.sql)
    try:
        return analysts.run(sql, parameters)
    finally:
        analysts.close()
