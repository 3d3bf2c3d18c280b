"""``GET /v1/experiments`` and ``GET /v1/experiments/{id}/arms`` on a running worker: the
configured experiments of the caller's space and an experiment's arms as of a day, the
same figures as the experiments job, nothing written."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.worker_client import read_query
from turnstream.core.access import Role
from turnstream.jobs.runner import run_job
from turnstream_dev.deployment import Deployment, new_deployment
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.integration

MEASUREMENT = Path(__file__).parents[3] / "examples" / "measurement.toml"
EXPERIMENT = "acme-block-elements-2026"
DAY = (datetime.now(UTC) - timedelta(days=1)).date()


def get(
    deployment: Deployment, path: str, query: dict[str, str], key: str | None
) -> tuple[int, Any]:
    url = f"http://127.0.0.1:{deployment.worker.web_port}{path}"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def worker(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A worker with the sample day in it and the example measurement document."""
    deployment = new_deployment(
        kafka_broker,
        tmp_path_factory.mktemp("exp"),
        extra=f'[jobs]\nmeasurement = "{MEASUREMENT}"\n',
    )
    deployment.worker.start()
    deployment.publish(sample_day(DAY, seed=7))
    deployment.drain()
    yield deployment
    deployment.worker.stop()


def _written(deployment: Deployment) -> int:
    """Rows of the experiments' own tables (what a read must not add to)."""
    sql = (
        "SELECT (SELECT count() FROM experiment_results) + "
        "(SELECT count() FROM experiment_assignments)"
    )
    return int(read_query(deployment.settings, sql).rows[0][0])


def test_the_space_lists_its_experiments(worker) -> None:  # type: ignore[no-untyped-def]
    acme = worker.new_key("acme", Role.analyst)
    status, body = get(worker, "/v1/experiments", {}, acme)
    assert status == 200, body
    assert body["space_id"] == "acme"
    assert [e["id"] for e in body["experiments"]] == [EXPERIMENT]
    assert body["experiments"][0]["arms"][0] == "control"
    lumen = worker.new_key("lumen", Role.analyst)
    status, body = get(worker, "/v1/experiments", {}, lumen)
    assert status == 200 and body["experiments"] == [], body


def test_arms_are_the_jobs_figures_and_nothing_is_written(worker) -> None:  # type: ignore[no-untyped-def]
    acme = worker.new_key("acme", Role.analyst)
    path = f"/v1/experiments/{EXPERIMENT}/arms"
    before = _written(worker)
    status, body = get(worker, path, {"as_of": DAY.isoformat()}, acme)
    assert status == 200, body
    job = run_job(
        worker.settings,
        "experiments",
        {"experiment": EXPERIMENT, "as_of": DAY.isoformat(), "measurement": str(MEASUREMENT)},
    )["experiments"][0]
    assert [a["name"] for a in body["arms"]] == [a["name"] for a in job["arms"]]
    assert [a["people"] for a in body["arms"]] == [a["people"] for a in job["arms"]]
    assert sum(a["people"] for a in body["arms"]) > 0
    assert body["baseline"] == "control" and "warnings" in body
    assert _written(worker) == before  # read-only: nothing recorded


def test_refusals_name_what_is_wrong(worker) -> None:  # type: ignore[no-untyped-def]
    path = f"/v1/experiments/{EXPERIMENT}/arms"
    assert get(worker, path, {}, None)[0] == 401
    assert get(worker, "/v1/experiments", {}, None)[0] == 401
    lumen = worker.new_key("lumen", Role.analyst)
    assert get(worker, "/v1/experiments", {"space_id": "acme"}, lumen)[0] == 403
    agent = worker.new_key("acme", Role.agent)
    assert get(worker, path, {}, agent)[0] == 403
    acme = worker.new_key("acme", Role.analyst)
    status, body = get(worker, "/v1/experiments/nope/arms", {}, acme)
    assert status == 404 and "nope" in body["error"], body
    assert body["errors"][0]["field"] == "experiment_id"
    for bad in ("2026-13-01", "yesterday", "9999-12-31", "x" * 5000):
        status, body = get(worker, path, {"as_of": bad}, acme)
        assert status == 422, (bad, body)
        assert body["errors"][0]["field"] == "as_of", body
    status, body = get(worker, path, {"what": "1"}, acme)
    assert status == 422, body


def test_another_spaces_experiment_answers_as_a_missing_one(worker) -> None:  # type: ignore[no-untyped-def]
    """A key of another space cannot tell acme's experiment from one that does not exist:
    the same status and the same body (but for the id it asked for), whatever the query."""
    lumen = worker.new_key("lumen", Role.analyst)
    acme = worker.new_key("acme", Role.analyst)
    assert get(worker, f"/v1/experiments/{EXPERIMENT}/arms", {}, acme)[0] == 200
    for query in ({}, {"as_of": DAY.isoformat()}, {"as_of": "9999-12-31"}):
        status, theirs = get(worker, f"/v1/experiments/{EXPERIMENT}/arms", query, lumen)
        missing = get(worker, "/v1/experiments/no-such-one/arms", query, lumen)
        assert (status, json.dumps(theirs).replace(EXPERIMENT, "no-such-one")) == (
            missing[0],
            json.dumps(missing[1]),
        ), query
        assert status == 404, (status, theirs)
