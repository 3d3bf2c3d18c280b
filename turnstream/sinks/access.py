"""Read queries from any process: through the worker that owns an embedded store, or
straight to the store when nobody owns it (or it is a server)."""

from __future__ import annotations

import contextlib
import json
import os
import urllib.error
import urllib.request
from typing import Any

from turnstream.config import Settings
from turnstream.errors import StoreError
from turnstream.infra.kafka import pid_alive
from turnstream.sinks.store import QueryResult, Store, chdb_path, owner_file

__all__ = ["owner_url", "read_query"]


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


def read_query(
    settings: Settings,
    sql: str,
    parameters: dict[str, Any] | None = None,
    timeout: float = 60.0,
) -> QueryResult:
    """Run a read-only query against the configured store; values as ``{name:Type}``
    ``parameters`` (JSON values: text, numbers, lists), never in ``sql``."""
    url = owner_url(settings)
    if url is None:
        store = Store(settings.store.dsn, settings.store.database)
        try:
            return store.read_only(sql, parameters)
        finally:
            store.close()
    request = urllib.request.Request(
        f"{url}/v1/sql",
        data=json.dumps({"sql": sql, "parameters": parameters or {}}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("error", detail)
        raise StoreError(f"query refused by the worker at {url}: {detail}") from None
    except (urllib.error.URLError, TimeoutError) as exc:
        raise StoreError(
            f"the worker at {url} owns the store but did not answer ({exc}); is it starting?"
        ) from exc
    return QueryResult(body["columns"], body["types"], [tuple(r) for r in body["rows"]])
