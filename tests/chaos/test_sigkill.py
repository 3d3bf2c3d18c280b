"""SIGKILL the worker at random points of a 100,000-item run: every total stays exact."""

from __future__ import annotations

import random
import threading
import time

import pytest

from tests.chaos.helpers import Factory, assert_exact, log_tail, processed
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.chaos(budget=420)

ITEMS = 100_000
BAD = 2_000
KILLS = 4
SEED = 7001


def test_random_sigkills_during_a_100k_run_leave_exact_totals(deployment_factory: Factory) -> None:
    rng = random.Random(SEED)
    batch = mixed_items(n=ITEMS, bad=BAD, seed=SEED)
    assert sum(batch.accepted.values()) == ITEMS - BAD
    deployment = deployment_factory(batch_size=1000, batch_seconds=0.5)
    worker = deployment.worker
    worker.start()

    # Publish while the worker runs and is killed: producers never stop for a crash.
    errors: list[BaseException] = []

    def publish() -> None:
        try:
            deployment.publish(batch.lines)
        except BaseException as exc:
            errors.append(exc)

    publisher = threading.Thread(target=publish, name="publisher", daemon=True)
    publisher.start()

    for n in range(KILLS):
        # A random amount of work for this incarnation, then a random instant within a
        # batch cycle (fetch, write, fan-out, commit), so the kill lands anywhere.
        target = rng.randint(2_000, 15_000)
        pause = rng.uniform(0.0, 0.6)
        deadline = time.monotonic() + 120
        done = 0
        while done < target:
            assert worker.alive(), f"the worker died by itself:\n{log_tail(worker.log_path)}"
            assert time.monotonic() < deadline, f"kill {n + 1}: stuck at {done} messages"
            done = max(done, processed(worker))
            time.sleep(0.02)
        time.sleep(pause)
        worker.kill()
        worker.start()

    publisher.join(120)
    assert not publisher.is_alive() and not errors, errors
    deployment.drain(timeout=240)
    assert_exact(deployment, batch)
