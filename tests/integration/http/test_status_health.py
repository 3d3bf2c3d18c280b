"""``/v1/status`` tells the truth to a healthcheck: with the broker stopped under a running
worker it answers 503 once the grace has passed, naming the loops that cannot reach the
broker (each error reduced to its class and what its kind means, no address); with the
broker back it answers 200 again, without a worker restart."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from turnstream.core.liveness import PUBLIC_MESSAGES
from turnstream_dev import LocalKafka
from turnstream_dev.deployment import Deployment

pytestmark = pytest.mark.integration

GRACE = 3.0


def _status(deployment: Deployment) -> tuple[int, dict[str, Any]]:
    """The open ``/v1/status`` (no key: what a healthcheck sees): code and body."""
    url = f"http://127.0.0.1:{deployment.worker.web_port}/v1/status"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _until(
    deployment: Deployment, code: int, timeout: float, failing: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Ask until the status code is ``code`` and ``failing`` names at least those; the
    body then."""
    deadline = time.monotonic() + timeout
    seen: tuple[int, dict[str, Any]] | None = None
    while time.monotonic() < deadline:
        assert deployment.worker.alive(), deployment.worker.log_path.read_text()[-3000:]
        seen = _status(deployment)
        if seen[0] == code and set(failing) <= set(seen[1]["failing"]):
            return seen[1]
        time.sleep(0.5)
    raise AssertionError(f"no {code} within {timeout:.0f} s; last answer: {seen}")


def test_503_while_the_broker_is_down_then_200(
    own_broker: LocalKafka, own_deployment: Callable[..., Deployment]
) -> None:
    deployment = own_deployment(worker_extra=f"status_grace = {GRACE}")
    deployment.worker.start()
    healthy = deployment.worker.wait_healthy(timeout=90)
    assert healthy["store"]["state"] == "reachable" and healthy["grace_seconds"] == GRACE

    assert own_broker.down(), "the test broker was not running"
    # Past the grace (and a probe, every 3 s): 503, both loops named (each notices on
    # its own probe).
    down = _until(deployment, 503, timeout=90, failing=("ingest", "derivation"))
    assert down["healthy"] is False and "store" not in down["failing"]
    ingest = down["ingest"]
    assert ingest["state"] == "retrying" and ingest["last_failure"] == "broker"
    # Past the grace, as shown: rounded to 0.1 s, so 3.04 s past a 3 s grace reads 3.0.
    assert ingest["failing_seconds"] >= GRACE and ingest["failing_since"] is not None
    # The class and what the kind means; never the client's text (an address).
    assert ingest["last_error_class"] and ingest["last_error"] == PUBLIC_MESSAGES["broker"]
    assert own_broker.bootstrap not in json.dumps(down)
    assert "address" not in down["store"] and down["store"]["state"] == "reachable"
    # An operator sees the error's own text.
    full = deployment.worker.stats()
    assert full["ingest"]["last_error"] != PUBLIC_MESSAGES["broker"]

    own_broker.up(timeout=120)
    up = _until(deployment, 200, timeout=120)
    assert up["healthy"] is True and up["failing"] == []
    assert up["ingest"]["state"] == "running" and up["derivation"]["state"] == "running"
    assert deployment.worker.alive()
