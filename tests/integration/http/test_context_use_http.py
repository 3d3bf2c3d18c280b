"""``GET /v1/context-use`` on a running worker: the sample day's claims and constraint
measurements rolled up for the caller's space, with ``since`` and ``by``."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from turnstream.core.access import Role
from turnstream.errors import InvalidItem
from turnstream.models import parse_item
from turnstream.models.items import Turn
from turnstream_dev.deployment import Deployment, new_deployment
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.integration

DAY = (datetime.now(UTC) - timedelta(days=1)).date()


def get(deployment: Deployment, query: dict[str, str], key: str) -> tuple[int, Any]:
    url = f"http://127.0.0.1:{deployment.worker.web_port}/v1/context-use"
    if query:
        url += "?" + urllib.parse.urlencode(query)
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def day(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A worker with the sample day in it, and the day's lines."""
    deployment = new_deployment(kafka_broker, tmp_path_factory.mktemp("ctx"))
    deployment.worker.start()
    lines = sample_day(DAY, seed=7)
    deployment.publish(lines)
    deployment.drain()
    yield deployment, lines
    deployment.worker.stop()


def _from_the_file(lines: list[bytes]) -> tuple[Counter[str], Counter[str]]:
    """Claims per space (where the claims feature is on) and tool calls per space,
    counted straight from the published lines."""
    claims: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for raw in lines:
        try:
            item = parse_item(raw)
        except InvalidItem:
            continue
        if isinstance(item, Turn):
            if item.space_id in ("acme", "vida"):  # the deployment's spaces with claims
                claims[item.space_id] += len(item.claims)
            if item.space_id in ("acme", "lumen", "vida"):
                calls[item.space_id] += len(item.constraints)
    return claims, calls


def test_a_space_key_gets_its_own_space_only(day) -> None:  # type: ignore[no-untyped-def]
    deployment, lines = day
    claims, calls = _from_the_file(lines)
    assert claims["acme"] > 0 and calls["acme"] > 0  # the day carries both
    acme = deployment.new_key("acme", Role.analyst)
    status, body = get(deployment, {"by": "space_id,agent"}, acme)
    assert status == 200, body
    assert body["space_id"] == "acme" and body["by"] == ["space_id", "agent"]
    assert {row["space_id"] for row in body["claims"]} == {"acme"}
    assert sum(row["claims"] for row in body["claims"]) == claims["acme"]
    assert sum(row["calls"] for row in body["constraints"]) == calls["acme"]
    assert {"claims", "claims_by_verdict", "turns", "constraints"} <= set(body)
    # Naming another space is refused; naming its own is the same answer.
    assert get(deployment, {"space_id": "lumen"}, acme)[0] == 403
    assert get(deployment, {"space_id": "acme", "by": "space_id,agent"}, acme) == (200, body)


def test_an_operator_sees_every_space_and_by_breaks_down(day) -> None:  # type: ignore[no-untyped-def]
    deployment, lines = day
    claims, calls = _from_the_file(lines)
    status, body = get(deployment, {"by": "space_id"}, deployment.operator_key)
    assert status == 200 and body["space_id"] is None
    assert {r["space_id"]: r["claims"] for r in body["claims"]} == {
        s: n for s, n in claims.items() if n
    }
    per_space = Counter()
    for row in body["constraints"]:
        per_space[row["space_id"]] += row["calls"]
    assert per_space == +calls
    status, by_source = get(
        deployment, {"space_id": "acme", "by": "source"}, deployment.operator_key
    )
    assert status == 200 and set(by_source["claims"][0]) >= {"source", "claims", "evidenced_rate"}
    assert "agent" not in by_source["claims"][0]


def test_since_filters_by_day(day) -> None:  # type: ignore[no-untyped-def]
    deployment, _ = day
    key = deployment.new_key("acme", Role.analyst)
    on_the_day = get(deployment, {"since": DAY.isoformat()}, key)[1]
    after = get(deployment, {"since": (DAY + timedelta(days=1)).isoformat()}, key)[1]
    assert on_the_day["claims"] and on_the_day["since"] == DAY.isoformat()
    assert after["claims"] == [] and after["constraints"] == [] and after["turns"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"since": "2026-13-01"}, "since"),
        ({"since": "yesterday"}, "since"),
        ({"by": "source,nope"}, "by"),
        ({"by": "source,source"}, "by"),
        ({"by": ""}, "by"),
        ({"by": "agent; DROP TABLE turns"}, "by"),
        ({"space_id": "Not A Space"}, "space_id"),
        ({"spaceid": "acme"}, "spaceid"),
    ],
)
def test_bad_parameters_are_422_naming_the_field(day, query: dict[str, str], field: str) -> None:  # type: ignore[no-untyped-def]
    deployment, _ = day
    status, body = get(deployment, query, deployment.operator_key)
    assert status == 422, body
    assert [e["field"] for e in body["errors"]] == [field]


def test_the_cli_report_reads_a_space_with_its_own_analyst_key(day) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from turnstream.entrypoints.cli.main import app

    deployment, lines = day
    claims, _ = _from_the_file(lines)
    acme = deployment.new_key("acme", Role.analyst)
    runner = CliRunner()
    args = ["report", "context-use", "--space", "acme", "--config", str(deployment.config)]
    got = runner.invoke(app, [*args, "--format", "json"], env={"TURNSTREAM_API_KEY": acme})
    assert got.exit_code == 0, got.output
    body = json.loads(got.stdout)
    # the API's keys, not the tables' titles
    assert list(body) == ["claims", "claims_by_verdict", "turns", "constraints"]
    assert sum(row["claims"] for row in body["claims"]) == claims["acme"]
    api = get(deployment, {"space_id": "acme"}, acme)[1]
    assert body["claims_by_verdict"] == api["claims_by_verdict"]
    table = runner.invoke(app, args, env={"TURNSTREAM_API_KEY": acme})
    assert table.exit_code == 0 and "claims by category and verdict" in table.stdout
    # another space with this key: refused, naming the space
    other = runner.invoke(app, [*args[:3], "lumen", *args[4:]], env={"TURNSTREAM_API_KEY": acme})
    assert other.exit_code != 0


def test_an_all_spaces_route_tells_a_space_key_where_its_reports_are(day) -> None:  # type: ignore[no-untyped-def]
    deployment, _ = day
    acme = deployment.new_key("acme", Role.analyst)
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}/v1/sql",
        data=json.dumps({"sql": "SELECT 1"}).encode(),
        headers={"Authorization": f"Bearer {acme}", "Content-Type": "application/json"},
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 403
    message = json.loads(refused.value.read())["error"]
    assert "report context-use --space acme" in message and "GET /v1/context-use" in message
