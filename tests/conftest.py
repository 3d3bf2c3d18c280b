"""Shared pytest configuration; fixtures live in tests/fixtures/ and are loaded as plugins."""

import pytest

# The chaos checks assert in a helper module: rewritten, a failure shows the values that
# differed (a bare AssertionError on the claims roll-up told nothing, round four).
pytest.register_assert_rewrite("tests.chaos.helpers")

pytest_plugins = [
    "tests.fixtures.kafka",
    "tests.fixtures.loop_thread",
    "tests.fixtures.store",
    "tests.fixtures.worker",
]
