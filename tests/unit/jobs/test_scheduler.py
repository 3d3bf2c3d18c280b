"""The scheduler's configuration: which jobs, when, and clear errors."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.config import Settings
from turnstream.errors import ConfigError
from turnstream.jobs.scheduler import build_scheduler, scheduled_jobs


def _settings(**jobs: object) -> Settings:
    return Settings.model_validate({"jobs": jobs})


def test_experiments_run_only_with_a_measurement_document() -> None:
    assert set(scheduled_jobs(_settings())) == {"priors", "retention"}
    with_doc = _settings(measurement="examples/measurement.toml")
    assert set(scheduled_jobs(with_doc)) == {"priors", "retention", "experiments"}


def test_jobs_fire_on_their_cron_in_the_configured_zone() -> None:
    scheduler = build_scheduler(_settings(timezone="America/Sao_Paulo", priors_cron="0 2 * * *"))
    trigger = scheduler.get_job("priors").trigger
    after = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    fire = trigger.get_next_fire_time(None, after)
    assert (fire.hour, fire.minute) == (2, 0)
    assert fire.astimezone(UTC).hour == 5  # São Paulo is UTC-3


@pytest.mark.parametrize(
    ("jobs", "fragment"),
    [
        ({"priors_cron": "every night"}, "jobs.priors_cron"),
        ({"timezone": "Mars/Olympus"}, "jobs.timezone"),
    ],
)
def test_bad_schedules_name_the_setting(jobs: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment.replace(".", r"\.")):
        build_scheduler(_settings(**jobs))


def test_the_priors_floor_is_never_below_ten() -> None:
    with pytest.raises(ValueError, match="priors_floor"):
        _settings(priors_floor=9)


def test_a_scheduler_that_does_not_hold_the_role_skips_its_turn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    monkeypatch.setattr("turnstream.jobs.scheduler.run_job", lambda _s, name, _p: ran.append(name))
    holding = [False]
    scheduler = build_scheduler(_settings(), may_run=lambda: holding[0])
    job = scheduler.get_job("retention")
    assert job.func(*job.args) is False and ran == []
    holding[0] = True
    assert job.func(*job.args) is True and ran == ["retention"]
    alone = build_scheduler(_settings()).get_job("priors")  # no role asked: always runs
    assert alone.func(*alone.args) is True and ran == ["retention", "priors"]
