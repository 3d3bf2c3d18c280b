"""What a broker singleton (the scheduler's role) logs when its partition is revoked: a
process that stops says it gives the role up, not that another process took it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from turnstream.config import Settings
from turnstream.entrypoints.kafka.singleton import BrokerSingleton


def _revoked_while_held(singleton: BrokerSingleton) -> None:
    singleton.role.held = lambda: True  # type: ignore[method-assign]  # held until now
    asyncio.run(singleton._held(set()))  # the rebalance takes its partition


@pytest.mark.parametrize(
    ("stopping", "said"),
    [
        (True, "scheduler: this process stops and gives the role up"),
        (False, "scheduler: the role went to another process"),
    ],
)
def test_a_revoked_role_is_logged_by_why(
    caplog: pytest.LogCaptureFixture, stopping: bool, said: str
) -> None:
    singleton = BrokerSingleton(Settings(), "scheduler")
    singleton._stopping = stopping
    with caplog.at_level(logging.INFO, logger="turnstream.entrypoints.kafka.singleton"):
        _revoked_while_held(singleton)
    assert [r.getMessage() for r in caplog.records] == [said]
