"""In embedded mode the jobs run in the process that owns the store: the worker."""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.worker_client import WorkerClient, WorkerError, owner_url, read_query
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


def test_a_new_space_is_fitted_by_the_worker_without_waiting_for_the_night(
    deployment_factory,  # type: ignore[no-untyped-def]
) -> None:
    deployment = deployment_factory(extra=FAST_TRIGGERS, first_fit=True)
    deployment.worker.start()
    deployment.publish(sample_day((datetime.now(UTC) - timedelta(days=1)).date(), seed=3))
    deployment.drain()
    deployment.drain_signals(timeout=120)

    def rederived() -> list[tuple[str, int]]:
        sql = "SELECT space_id, max(people) FROM rederived GROUP BY space_id ORDER BY space_id"
        return [(s, int(n)) for s, n in read_query(deployment.settings, sql).rows]

    def fits() -> dict[str, Any]:
        return deployment.worker.stats()["first_fits"]

    # The status says when the fits are over: what a reader of the space waits for.
    deadline = time.monotonic() + 180
    while (fits()["running"] or "acme" not in dict(rederived())) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert fits()["running"] == 0 and fits()["done"] >= 1 and fits()["failed"] == 0
    assert "acme" in fits()["spaces"]
    # Without a key the status answers too (healthchecks): how many spaces, not which.
    anonymous = WorkerClient(f"http://127.0.0.1:{deployment.worker.web_port}", None).status()
    assert anonymous["first_fits"]["spaces"] == len(fits()["spaces"])
    # No job was asked for: the worker ran the priors job for the new space once 10 of
    # its people were derived, and derived them again with what it wrote.
    assert dict(rederived()).get("acme", 0) >= 10
    tomorrow = int((datetime.now(UTC).date() + timedelta(days=1)).strftime("%Y%m%d"))
    versions = read_query(
        deployment.settings, "SELECT DISTINCT version FROM priors WHERE space_id = 'acme'"
    ).rows
    assert [int(v) for (v,) in versions] == [tomorrow]  # counting through today
    log = deployment.worker.log_path.read_text(errors="replace")
    assert re.search(r"first fit of the field priors of new spaces: .*\bacme\b", log)


def test_a_job_with_a_bad_parameter_is_refused_by_the_worker_naming_it(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    deployment = deployment_factory()
    deployment.worker.start()
    url = f"http://127.0.0.1:{deployment.worker.web_port}/v1/jobs/"
    asked = [
        ("priors", {"as_of": "2099-01-01"}, "as_of"),
        ("priors", {"as_of": "2026-02-30"}, "as_of"),
        ("priors", {"spaces": "nope"}, "spaces"),
        ("retention", {"as_of": "2099-01-01"}, "as_of"),
        ("retention", {"as_of": 20260101}, "as_of"),
        ("retention", {"asof": "2026-01-01"}, "asof"),
        ("nightly", {}, "name"),
    ]
    for name, params, field in asked:
        request = urllib.request.Request(
            f"{url}{name}/",
            data=json.dumps(params).encode(),
            headers={"Content-Type": "application/json", **deployment.headers()},
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=60)
        assert refused.value.code == 400, (name, params)
        body = json.loads(refused.value.read())
        assert [e["field"] for e in body["errors"]] == [field], (name, params, body)
        assert body["error"].startswith(field) or name == "nightly", body
    # Nothing was written: no priors version from the future.
    assert read_query(deployment.settings, "SELECT count() FROM priors").rows == [(0,)]


def test_a_job_asked_twice_at_once_runs_twice_one_after_the_other(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    deployment = deployment_factory()
    deployment.worker.start()
    client = WorkerClient(f"http://127.0.0.1:{deployment.worker.web_port}",
                          deployment.operator_key)  # fmt: skip
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda _: client.run_job("priors", {}, 300), range(2)))
    assert [r["job"] for r in reports] == ["priors", "priors"]
    assert reports[0]["version"] == reports[1]["version"]
    jobs = client.status()["jobs"]
    assert jobs["running"] is None and jobs["waiting"] == []
    assert jobs["last"]["job"] == "priors" and jobs["last"]["ok"] is True
    # Refused before it read the store; the status says which job failed, and how.
    with pytest.raises(WorkerError, match="as_of"):
        client.run_job("retention", {"as_of": "2099-01-01"}, 60)
    last = client.status()["jobs"]["last"]
    assert (last["job"], last["ok"], last["error_class"]) == ("retention", False, "BadJobParameter")
    assert last["error"].startswith("as_of: 2099-01-01")  # an operator's key: the text too
