"""The scheduler: APScheduler runs each job on its cron, in the configured time zone.

Each job runs where the store is (through the worker that owns an embedded store); a
failing run is logged and the next one happens on time. Several schedulers may run:
``may_run`` (``turnstream scheduler``: the owner of a one-partition control topic,
``entrypoints/kafka/singleton.py``) lets one of them run the jobs; the others skip their turns.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger

from turnstream.config import Settings
from turnstream.errors import ConfigError
from turnstream.jobs.runner import run_job

__all__ = ["build_scheduler", "scheduled_jobs"]

log = logging.getLogger(__name__)


def scheduled_jobs(settings: Settings) -> dict[str, str]:
    """Job name -> crontab expression, for the jobs that are configured."""
    jobs = {"priors": settings.jobs.priors_cron, "retention": settings.jobs.retention_cron}
    if settings.jobs.measurement:
        jobs["experiments"] = settings.jobs.experiments_cron
    return jobs


def _run(
    settings: Settings, name: str, zone: ZoneInfo, may_run: Callable[[], bool] | None = None
) -> bool:
    """Run job ``name`` for today, if ``may_run`` (none: always); whether it ran."""
    if may_run is not None and not may_run():
        log.info("job %s skipped: another scheduler holds the role", name)
        return False
    today = datetime.now(zone).date().isoformat()
    try:
        # The experiments job writes its look and records the assignments only when asked:
        # the scheduler's run is the one that does (``experiments compare`` only reads).
        params = {"as_of": today, **({"write": "1"} if name == "experiments" else {})}
        run_job(settings, name, params)
    except Exception:
        log.exception("job %s failed; it runs again at its next time", name)
    return True


def build_scheduler(
    settings: Settings, may_run: Callable[[], bool] | None = None
) -> BlockingScheduler:
    """A scheduler with every configured job (not started); each run first asks
    ``may_run`` (none: every run goes ahead)."""
    try:
        zone = ZoneInfo(settings.jobs.timezone)
    except Exception:
        raise ConfigError(f"jobs.timezone: unknown time zone {settings.jobs.timezone!r}") from None
    scheduler = BlockingScheduler(timezone=zone)
    for name, cron in scheduled_jobs(settings).items():
        try:
            trigger = CronTrigger.from_crontab(cron, timezone=zone)
        except ValueError as exc:
            raise ConfigError(f"jobs.{name}_cron: {exc}") from None
        scheduler.add_job(
            _run,
            trigger,
            args=(settings, name, zone, may_run),
            id=name,
            name=name,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=3600,
        )
    return scheduler
