"""SIGTERM while the broker is down: the worker stops within 10 s, and loses nothing.

Before issue #18 the worker hung until SIGKILL: the Faust consumer thread's stop raised
(aiokafka's fetcher, cancelled in its retry back-off), so the thread never reported its
end, and the loops' producers waited 40 s for batches they could not deliver. This test
starts its own broker on free ports (the session broker is shared) and stops it under
the worker, idle or with a backlog in flight; after the second case the broker and the
worker come back and every total is exact: what the stopped worker had not committed is
consumed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from tests.chaos.helpers import assert_exact, log_tail, processed
from turnstream_dev import LocalKafka
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.chaos(budget=300)

SEED = 7020
#: What the issue asks: stopped within 10 s of SIGTERM.
STOP_WITHIN = 10.0


@pytest.fixture
def deployment(own_deployment: Callable[[int, float], Deployment]) -> Deployment:
    return own_deployment(1_000, 0.5)


def _sigterm(deployment: Deployment) -> float:
    """SIGTERM the worker; the seconds until it exited (it must exit cleanly, code 0)."""
    worker = deployment.worker
    started = time.monotonic()
    code = worker.stop(timeout=STOP_WITHIN + 20)  # SIGKILL only far past the goal
    took = time.monotonic() - started
    assert code == 0, f"exit code {code} after {took:.1f} s:\n{log_tail(worker.log_path)}"
    return took


def test_sigterm_with_the_broker_down_stops_an_idle_worker_in_time(
    own_broker: LocalKafka, deployment: Deployment
) -> None:
    deployment.worker.start()
    assert own_broker.down()
    time.sleep(5)  # the clients notice: heartbeats, fetches and metadata fail, and retry
    took = _sigterm(deployment)
    assert took < STOP_WITHIN, f"stopped in {took:.1f} s"


def test_sigterm_with_the_broker_down_mid_backlog_stops_in_time_and_loses_nothing(
    own_broker: LocalKafka, deployment: Deployment
) -> None:
    batch = mixed_items(n=20_000, bad=200, seed=SEED)
    deployment.publish(batch.lines)
    deployment.worker.start()
    deadline = time.monotonic() + 120
    while processed(deployment.worker) < 3_000:
        assert time.monotonic() < deadline, log_tail(deployment.worker.log_path)
        time.sleep(0.02)
    assert own_broker.down()  # batches in flight: fan-out unacknowledged, commits pending
    time.sleep(5)
    took = _sigterm(deployment)
    assert took < STOP_WITHIN, f"stopped in {took:.1f} s"

    own_broker.up(timeout=120)
    deployment.worker.start()
    deployment.drain(timeout=180)
    assert_exact(deployment, batch)
