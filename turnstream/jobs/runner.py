"""Running a job: here (the process owns the store) or through the worker that does.

A job is a blocking function ``(store, settings, params) -> report`` registered in
:data:`JOBS`. Every run logs its start, its end and its report, and every job is safe to
run twice (the jobs themselves are idempotent).
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from turnstream.config import Settings
from turnstream.errors import StoreError, TurnstreamError
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import Store
from turnstream.worker_client import owner_url

__all__ = ["JOBS", "Job", "run_job", "run_job_here"]

log = logging.getLogger(__name__)

Job = Callable[[Store, Settings, dict[str, str]], dict[str, Any]]

#: Every job by name; filled by :mod:`turnstream.jobs.registry`.
JOBS: dict[str, Job] = {}


def run_job_here(store: Store, settings: Settings, name: str, params: dict[str, str]) -> dict:
    """Run job ``name`` on ``store`` in this process, logging start, end and report."""
    from turnstream.jobs import registry  # noqa: F401  (fills JOBS)

    job = JOBS.get(name)
    if job is None:
        raise TurnstreamError(f"no job {name!r}; the jobs are: {', '.join(sorted(JOBS))}")
    started = time.monotonic()
    log.info("job %s started %s", name, params)
    report = job(store, settings, params)
    report = {"job": name, **report, "seconds": round(time.monotonic() - started, 3)}
    log.info("job %s done: %s", name, report)
    return report


def run_job(settings: Settings, name: str, params: dict[str, str], timeout: float = 3600) -> dict:
    """Run a job where the store is: through the worker that owns it, or here."""
    url = owner_url(settings)
    if url is None:
        store = Store(settings.store.dsn, settings.store.database)
        try:
            apply_migrations(store)
            return run_job_here(store, settings, name, params)
        finally:
            store.close()
    request = urllib.request.Request(
        f"{url}/v1/jobs/{name}/",
        data=json.dumps(params).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        raise StoreError(f"the worker at {url} refused job {name}: {detail}") from None
    except (urllib.error.URLError, TimeoutError) as exc:
        raise StoreError(f"the worker at {url} did not run job {name}: {exc}") from exc
