"""Unit tests: no broker, no store. Opening either fails the test, naming the layer it
belongs to (tests/integration, whose conftest gives the session's broker and stores)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


def _refuse(what: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"a unit test opened {what}: move it to tests/integration")

    return refuse


@pytest.fixture(autouse=True)
def _no_broker_no_store() -> Iterator[None]:
    """Per test, not per session: the same process (or xdist worker) may run integration
    tests next, which must open both."""
    from turnstream.adapters.clickhouse.store import Store
    from turnstream_dev import kafka

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "__init__", _refuse("a store (chDB or a server)"))
        # What LocalKafka.up runs once its checks pass, before it spawns the JVM.
        patch.setattr(kafka, "ensure_jars", _refuse("a Kafka broker"))
        yield
