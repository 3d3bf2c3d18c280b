"""Running a job: here (the process owns the store) or through the worker that does.

The jobs are those of :data:`turnstream.jobs.registry.JOBS`. Every run logs its start,
its end and its report, and every job is safe to run twice (the jobs themselves are
idempotent).
"""

from __future__ import annotations

import logging
import time

from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.worker_client import WorkerClient, owner_url
from turnstream.config import Settings
from turnstream.errors import UnknownJob
from turnstream.jobs.rederive import Rederive
from turnstream.jobs.registry import JOBS

__all__ = ["run_job", "run_job_here"]

log = logging.getLogger(__name__)


def run_job_here(
    store: Store,
    settings: Settings,
    name: str,
    params: dict[str, str],
    rederive: Rederive | None = None,
) -> dict:
    """Run job ``name`` on ``store`` in this process, logging start, end and report;
    ``rederive``: how the priors job derives people again (the worker passes its
    engine's; none: an engine built here)."""
    job = JOBS.get(name)
    if job is None:
        raise UnknownJob(f"no job {name!r}; the jobs are: {', '.join(sorted(JOBS))}")
    started = time.monotonic()
    log.info("job %s started %s", name, params)
    report = job(store, settings, params, rederive=rederive)
    report = {"job": name, **report, "seconds": round(time.monotonic() - started, 3)}
    log.info("job %s done: %s", name, report)
    return report


def run_job(settings: Settings, name: str, params: dict[str, str], timeout: float = 3600) -> dict:
    """Run a job where the store is: through the worker that owns it, or here."""
    url = owner_url(settings)
    if url is not None:
        return WorkerClient(url, settings.api_key()).run_job(name, params, timeout)
    store = Store(settings.store.dsn, settings.store.database)
    try:
        apply_migrations(store)
        return run_job_here(store, settings, name, params)
    finally:
        store.close()
