"""Shared pytest configuration: the layer of each test comes from its directory.

``tests/unit``: pure tests, no broker, no store, no spawned worker (`make unit`);
``tests/integration``: the real Kafka broker and chDB, whose fixtures (tests/fixtures)
only ``tests/integration/conftest.py`` and ``tests/chaos/conftest.py`` load, so a unit
test that asks for one fails with "fixture not found"; ``tests/chaos``: the fault tests
(`make chaos`). Each test gets the marker of its layer (``-m unit``, ``-m integration``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.loop_thread import loop_thread

__all__ = ["loop_thread"]  # a pure fixture: an event loop in a thread, for every layer

# The chaos checks assert in a helper module: rewritten, a failure shows the values that
# differed (a bare AssertionError on the claims roll-up told nothing, round four).
pytest.register_assert_rewrite("tests.chaos.helpers")

LAYERS = ("unit", "integration", "chaos")
_TESTS = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: a pure test (tests/unit, `make unit`)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its layer, the first directory under tests/."""
    for item in items:
        parts = item.path.relative_to(_TESTS).parts if item.path.is_relative_to(_TESTS) else ()
        if parts and parts[0] in LAYERS:
            item.add_marker(parts[0])
