"""In embedded mode the jobs run in the process that owns the store: the worker."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.adapters.worker_client import owner_url
from turnstream.jobs.runner import run_job
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.integration
MEASUREMENT = Path(__file__).parents[3] / "examples" / "measurement.toml"
FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"


def test_jobs_run_through_the_worker_and_twice_give_the_same(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    deployment = deployment_factory(extra=FAST_TRIGGERS)
    deployment.worker.start()
    deployment.publish(sample_day((datetime.now(UTC) - timedelta(days=1)).date(), seed=3))
    deployment.drain()
    deployment.drain_signals(timeout=120)  # every person derived: a state each
    assert owner_url(deployment.settings) is not None  # so run_job goes through the worker

    first = run_job(deployment.settings, "priors", {})
    again = run_job(deployment.settings, "priors", {})
    assert first["job"] == "priors" and first["priors"] > 0
    varies = ("seconds", "unchanged", "rederived")
    assert {k: v for k, v in again.items() if k not in varies} == {
        k: v for k, v in first.items() if k not in varies
    }
    assert again["unchanged"] is True
    # The people were derived again by the worker's own engine at the first run (the
    # priors changed from none); the second finds the same priors and derives no one.
    assert first["rederived"]["people"] > 0
    assert (again["rederived"]["people"], again["rederived"]["inferences"]) == (0, 0)

    retention = run_job(deployment.settings, "retention", {})
    assert {t["table"] for t in retention["tables"]} >= {"interactions", "turns"}

    experiments = run_job(deployment.settings, "experiments", {"measurement": str(MEASUREMENT)})[
        "experiments"
    ]
    [acme] = experiments
    assert acme["space_id"] == "acme"
    assert sum(arm["people"] for arm in acme["arms"]) > 0
