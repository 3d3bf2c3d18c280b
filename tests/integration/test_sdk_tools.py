"""The SDK's bound tools against a running worker on the real broker: the profile endpoint
serves what the config holds, to the integration role only; a decorated tool's turn goes
into ClickHouse with the counts the SDK measured (``examples/tool_counterfactual.py``)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import tomllib
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from turnstream.adapters.worker_client import WorkerClient, WorkerError, read_query
from turnstream.core.access import Role
from turnstream.core.constraints import load_bindings
from turnstream.core.experiments import assign
from turnstream.models.measurement import MeasurementDocument
from turnstream_dev.deployment import SAMPLE_BINDINGS, SAMPLE_CONTRACT, Deployment, new_deployment

#: Yesterday: inside the raw tables' retention whenever the test runs (core/time_edges.py).
DAY = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tool_counterfactual.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tool_counterfactual", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _get(deployment: Deployment, path: str, key: str) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}{path}", headers=deployment.headers(key)
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


#: An experiment on lumen (acme's turns stay out of it): the control arm, an arm without
#: the inferred soft signals, and the whole block.
MEASUREMENT = """
[[experiments]]
id = "lumen-block-2026"
space_id = "lumen"
starts_at = 2026-01-01T00:00:00Z
[[experiments.arms]]
name = "control"
allocation = 1
[[experiments.arms]]
name = "no_soft_signals"
allocation = 1
drops = ["soft_signals"]
[[experiments.arms]]
name = "full"
allocation = 1
"""


@pytest.fixture(scope="module")
def worker(kafka_broker: str, tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("tools")
    measurement = home / "measurement.toml"
    measurement.write_text(MEASUREMENT)
    extra = f'[jobs]\nmeasurement = "{measurement}"\n'
    deployment = new_deployment(kafka_broker, home, extra=extra)
    deployment.worker.start()
    yield deployment
    deployment.worker.stop()


def test_the_profile_serves_the_config_s_bindings_to_the_integration_role(
    worker: Deployment,
) -> None:
    url = f"http://127.0.0.1:{worker.worker.web_port}"
    integration = worker.new_key("acme", Role.integration)
    served = WorkerClient(url, integration).sdk_profile("acme", "web")
    doc = load_bindings(SAMPLE_BINDINGS)
    # For "web": the binding naming web wins over the general one; search_plans applies too.
    expected = [
        next(b for b in doc.bindings if b.tool == "search_products" and "web" in b.sources),
        next(b for b in doc.bindings if b.tool == "search_plans"),
    ]
    assert served["tool_bindings"] == [
        b.model_dump(mode="json", exclude={"sources"}) for b in expected
    ]
    contract = json.loads(SAMPLE_CONTRACT.read_text(encoding="utf-8"))
    assert served["contract_version"] == contract["version"] == "retail-2026-11"
    assert served["claim_contract"]["negative_corpus"] == {
        "version": contract["negative_corpus"]["version"]
    }
    text = json.dumps(served, ensure_ascii=False)
    assert all(phrase not in text for phrase in contract["negative_corpus"]["phrases"])
    # the space's object types, which make a bound tool's results evidence
    fields = served["types"]["types"]["item_variant"]["fields"]
    assert fields["name"]["role"] == "identifier" and fields["stock"]["class"] == "count"
    whatsapp = WorkerClient(url, integration).sdk_profile("acme", "whatsapp")
    assert whatsapp["tool_bindings"][0]["capabilities"]["overfetch"] is True  # the general one

    # Other roles, another space's key, a space without bindings, a bad query.
    for role in (Role.agent, Role.analyst, Role.security):
        status, body = _get(worker, "/v1/sdk/profile?space_id=acme&source=web",
                            worker.new_key("acme", role))  # fmt: skip
        assert status == 403, (role, body)
    lumen = worker.new_key("lumen", Role.integration)
    assert _get(worker, "/v1/sdk/profile?space_id=acme&source=web", lumen)[0] == 403
    status, body = _get(worker, "/v1/sdk/profile?space_id=lumen&source=web", lumen)
    assert status == 200 and body["tool_bindings"] == [] and body["contract_version"] is None
    status, body = _get(worker, "/v1/sdk/profile?space_id=acme", integration)
    assert status == 422 and body["errors"][0]["field"] == "source"
    with pytest.raises(WorkerError, match="not configured"):
        WorkerClient(url, worker.operator_key).sdk_profile("nowhere", "web")


def test_a_bound_tool_s_turn_lands_with_the_counts_the_sdk_measured(worker: Deployment) -> None:
    example = _example()
    url = f"http://127.0.0.1:{worker.worker.web_port}"
    report = asyncio.run(
        example.bound_search_turn(worker.settings, url, worker.operator_key, "p_tools_1")
    )
    first, relaxed = report["calls"]
    # Apply mode injected both session constraints; the tool honoured them.
    assert first["injected"] == {"exclude_colors": ["black"], "size": "M"}
    assert first["returned"] == ["tn-002", "tn-005"]
    assert first["measured"] == {"tool": "search_products", "sent": 2, "results_checked": 2,
                                 "violations": 0, "unverifiable": 1, "relaxed": False}  # fmt: skip
    # The counterfactual: without the block the same search returns everything.
    assert first["counterfactual"]["changed"] is True
    assert first["counterfactual"]["only_without"] == ["tn-001", "tn-003", "tn-004", "tn-006"]
    # Under 200 the tool relaxed the colour: a violation it said, and a result unverifiable.
    assert relaxed["measured"] == {"tool": "search_products", "sent": 2, "results_checked": 2,
                                   "violations": 1, "unverifiable": 1, "relaxed": True}  # fmt: skip
    record = report["record"]
    assert record["constraints_version"] == report["block_version"]
    assert record["constraints"] == [first["measured"], relaxed["measured"]]

    worker.drain()
    rows = read_query(
        worker.settings,
        "SELECT calls, sent, results_checked, violations, unverifiable, relaxed "
        "FROM context_use_constraints WHERE space_id = 'acme' AND agent = 'tool-example' "
        "AND tool = 'search_products'",
    ).rows
    assert [tuple(int(v) for v in row) for row in rows] == [(2, 4, 4, 1, 2, 1)]
    # The turn row names the block the calls were measured against.
    cited = read_query(
        worker.settings,
        "SELECT constraints_version FROM turns WHERE space_id = 'acme' AND agent = 'tool-example'",
    ).rows
    assert cited == [(report["block_version"],)]
    assert worker.dead_letters() == {}


def _in_arm(arm: str) -> str:
    experiment = MeasurementDocument.model_validate(tomllib.loads(MEASUREMENT)).experiments[0]
    return next(
        p for p in (f"p_arm_{i}" for i in range(100)) if assign(experiment, p, "web") == arm
    )


def test_the_block_goes_without_what_the_person_s_arm_drops(worker: Deployment) -> None:
    url = f"http://127.0.0.1:{worker.worker.web_port}"
    control, full = _in_arm("control"), _in_arm("full")
    said = [
        json.dumps({
            "type": "interaction", "space_id": "lumen", "idempotency_key": f"{p}-said",
            "profile_id": p, "source": "web", "conversation_id": f"{p}-c",
            "occurred_at": f"{DAY}T10:00:00Z",
            "interaction": {"kind": "preference", "attr": "item_variant.brand", "op": "in",
                            "values": ["apple"], "strength": "must_not", "source": "stated",
                            "scope": "persistent"},
        }).encode()
        for p in (control, full)
    ]  # fmt: skip
    worker.publish(said)
    worker.drain()
    client = WorkerClient(url, worker.operator_key)
    body = {"space_id": "lumen", "source": "web"}
    got_full = client.constraints({**body, "profile_id": full})
    assert [e["values"] for e in got_full["hard"]] == [["apple"]]
    assert got_full["experiment"] == {"id": "lumen-block-2026", "arm": "full", "drops": []}
    got_control = client.constraints({**body, "profile_id": control})
    assert got_control["hard"] == [] and got_control["text"] == ""
    assert got_control["experiment"]["arm"] == "control"
    assert got_control["experiment"]["drops"] == sorted(
        ["constraints_block", "soft_signals", "inferred_sizes", "state_block"]
    )
    # acme runs no experiment: its blocks name none.
    assert "experiment" not in client.constraints({"space_id": "acme", "profile_id": control})
