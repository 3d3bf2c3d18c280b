"""Fault tests: every test is marked ``chaos`` and runs under a wall-clock budget.

The broker (``kafka_broker``), the worker deployments (``deployment_factory``), a broker
of the test's own (``own_broker``, for tests that stop it) and deployments on it
(``own_deployment``) come from tests/fixtures, imported here.
``@pytest.mark.chaos(budget=SECONDS)`` bounds a test: past its budget it fails with a
``TimeoutError`` raised by SIGALRM, so a stuck pipeline fails the run instead of hanging
it. The alarm covers the test call only; fixture teardown (workers stopped, brokers
stopped, files unlocked) always runs.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from tests.fixtures.kafka import kafka_broker, own_broker
from tests.fixtures.store import chdb_path, migrated_template, store, store_factory
from tests.fixtures.worker import deployment_factory, own_deployment

__all__ = [
    "chdb_path",
    "deployment_factory",
    "kafka_broker",
    "migrated_template",
    "own_broker",
    "own_deployment",
    "store",
    "store_factory",
]

DEFAULT_BUDGET = 300.0


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "chaos(budget=SECONDS): a fault test (tests/chaos, `make chaos`), failed past its budget",
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    # The budget a test or its module names: the layer's bare ``chaos`` marker, added to
    # every item at collection (tests/conftest.py), is the closest and names none.
    budgets = [m.kwargs["budget"] for m in item.iter_markers("chaos") if "budget" in m.kwargs]
    if item.get_closest_marker("chaos") is None or not hasattr(signal, "SIGALRM"):
        yield
        return
    budget = float(budgets[0] if budgets else DEFAULT_BUDGET)

    def expired(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError(f"{item.name} ran past its budget of {budget:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, budget)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
