"""Stop and restart the Kafka broker under a running worker: no loss, no double count.

The session broker is shared by every test, so this test starts its own broker on free
ports in its temporary directory, and stops it (``down``, SIGTERM) and starts it again
(``up``, same data) twice while the worker runs: once for 20 s, once for 45 s (longer
than the producers' 40 s request timeout). The worker is never restarted.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from tests.chaos.helpers import StatusWatch, assert_exact, log_tail, processed
from turnstream_dev import LocalKafka
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.chaos(budget=360)

SEED = 7002
OUTAGES = (20.0, 45.0)
RESUME = 60.0  # seconds for ingestion to resume once the broker is back


@pytest.fixture
def deployment(own_deployment: Callable[[int, float], Deployment]) -> Deployment:
    return own_deployment(200, 0.2)


def _outage(kafka: LocalKafka, deployment: Deployment, seconds: float) -> None:
    """The broker down for ``seconds``: the worker stays up and answers throughout."""
    pid = deployment.worker._proc.pid if deployment.worker._proc else None
    assert kafka.down(), "the test broker was not running"
    with StatusWatch(deployment.worker) as watch:
        time.sleep(seconds)
    assert not watch.failures, watch.failures[:5]
    assert watch.answers > 0
    assert deployment.worker.alive(), log_tail(deployment.worker.log_path)
    kafka.up(timeout=120)
    assert deployment.worker._proc is not None and deployment.worker._proc.pid == pid
    # Ingestion resumes: more messages processed soon after the broker is back.
    at = processed(deployment.worker)
    deadline = time.monotonic() + RESUME
    while processed(deployment.worker) <= at:
        assert time.monotonic() < deadline, (
            f"ingestion did not resume within {RESUME:.0f} s of the broker's return (the "
            f"worker is up and answers, its counter stays at {at}):\n"
            + log_tail(deployment.worker.log_path)
        )
        time.sleep(0.2)


def _wait_processed(deployment: Deployment, at_least: int) -> None:
    deadline = time.monotonic() + 120
    while processed(deployment.worker) < at_least:
        assert deployment.worker.alive(), log_tail(deployment.worker.log_path)
        assert time.monotonic() < deadline, f"fewer than {at_least} messages processed"
        time.sleep(0.02)


def test_broker_down_and_up_twice_mid_run(own_broker: LocalKafka, deployment: Deployment) -> None:
    rng = random.Random(SEED)
    batch = mixed_items(n=30_000, bad=600, seed=SEED)
    half = len(batch.lines) // 2
    deployment.publish(batch.lines[:half])
    deployment.worker.start()

    # First outage at a random point of the first half.
    _wait_processed(deployment, rng.randint(2_000, 8_000))
    _outage(own_broker, deployment, OUTAGES[0])

    # The second half is published after the broker is back; the second outage lands
    # at a random point of it.
    deployment.publish(batch.lines[half:])
    _wait_processed(deployment, half + rng.randint(2_000, 8_000))
    _outage(own_broker, deployment, OUTAGES[1])

    deployment.drain(timeout=180)
    assert_exact(deployment, batch)
    # One incarnation did everything (checked at each outage); nothing was taken for a
    # duplicate of another message.
    assert deployment.worker.stats()["duplicates"] == 0
