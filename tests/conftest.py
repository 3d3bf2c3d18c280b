"""Shared pytest configuration: the layer of each test comes from its directory.

``tests/unit``: pure tests, no broker, no store, no spawned worker (`make unit`);
``tests/integration``: the real Kafka broker and chDB, whose fixtures (tests/fixtures)
only ``tests/integration/conftest.py`` and ``tests/chaos/conftest.py`` load, so a unit
test that asks for one fails with "fixture not found"; ``tests/chaos``: the fault tests
(`make chaos`). Each test gets the marker of its layer (``-m unit``, ``-m integration``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.loop_thread import loop_thread

__all__ = ["loop_thread"]  # a pure fixture: an event loop in a thread, for every layer

# The chaos checks assert in a helper module: rewritten, a failure shows the values that
# differed (a bare AssertionError on the claims roll-up told nothing, round four).
pytest.register_assert_rewrite("tests.chaos.helpers")

LAYERS = ("unit", "integration", "chaos")
_TESTS = Path(__file__).parent


#: Set to ``only`` by `make test` for its second, in-process run of the ``serial`` tests.
SERIAL_ONLY = os.environ.get("TURNSTREAM_TESTS_SERIAL") == "only"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "unit: a pure test (tests/unit, `make unit`)")
    config.addinivalue_line(
        "markers",
        "serial: runs in one process, not on pytest-xdist workers (`make test` runs these"
        " after the parallel run, with TURNSTREAM_TESTS_SERIAL=only)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its layer, the first directory under tests/; keep the
    ``serial`` tests off xdist workers (skipped there, saying where they run)."""
    on_worker = hasattr(config, "workerinput")
    kept, dropped = [], []
    for item in items:
        parts = item.path.relative_to(_TESTS).parts if item.path.is_relative_to(_TESTS) else ()
        if parts and parts[0] in LAYERS:
            item.add_marker(parts[0])
        serial = item.get_closest_marker("serial") is not None
        if SERIAL_ONLY and not serial:
            dropped.append(item)
            continue
        if serial and on_worker:
            item.add_marker(pytest.mark.skip(reason=_SERIAL_SKIP))
        kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


_SERIAL_SKIP = (
    "a serial test skipped on an xdist worker (schemathesis's items share one node id, and"
    " xdist's loadscope runs one of them): `make test` runs it in one process afterwards"
)
