"""Shared pytest configuration; fixtures live in tests/fixtures/ and are loaded as plugins."""

pytest_plugins = [
    "tests.fixtures.kafka",
    "tests.fixtures.loop_thread",
    "tests.fixtures.store",
    "tests.fixtures.worker",
]
