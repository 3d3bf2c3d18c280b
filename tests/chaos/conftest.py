"""Fault tests: every test is marked ``chaos`` and runs under a wall-clock budget.

The broker (``kafka_broker``) and the worker deployments (``deployment_factory``) come
from the plugins that ``tests/conftest.py`` loads; ``own_broker`` is a broker of the
test's own, for tests that stop it (the session broker is shared), and
``own_deployment(batch_size, batch_seconds)`` makes deployments on it, stopped before it.
``@pytest.mark.chaos(budget=SECONDS)`` bounds a test: past its budget it fails with a
``TimeoutError`` raised by SIGALRM, so a stuck pipeline fails the run instead of hanging
it. The alarm covers the test call only; fixture teardown (workers stopped, brokers
stopped, files unlocked) always runs.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import pytest

from turnstream.dev import LocalKafka, free_ports
from turnstream.dev.deployment import Deployment, new_deployment

DEFAULT_BUDGET = 300.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "chaos(budget=SECONDS): a fault test (tests/chaos, `make chaos`), failed past its budget",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("chaos")
    if marker is None or not hasattr(signal, "SIGALRM"):
        yield
        return
    budget = float(marker.kwargs.get("budget", DEFAULT_BUDGET))

    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"{item.name} ran past its budget of {budget:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[LocalKafka]:
    """A Kafka broker of the test's own, on free ports, that the test may stop."""
    port, controller_port = free_ports(2)
    kafka = LocalKafka(home=tmp_path / "kafka", port=port, controller_port=controller_port)
    kafka.up(timeout=120)
    try:
        yield kafka
    finally:
        kafka.down()


@pytest.fixture
def own_deployment(
    own_broker: LocalKafka, tmp_path: Path
) -> Iterator[Callable[[int, float], Deployment]]:
    """Make a deployment on ``own_broker``; its worker is stopped before the broker."""
    made: list[Deployment] = []

    def make(batch_size: int, batch_seconds: float) -> Deployment:
        made.append(new_deployment(own_broker.bootstrap, tmp_path, batch_size, batch_seconds))
        return made[-1]

    yield make
    for deployment in made:
        deployment.worker.stop()
