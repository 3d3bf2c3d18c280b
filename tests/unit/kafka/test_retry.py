"""Transient broker errors at start-up: which they are, their bounded back-off, and a
worker's start-up (its topics made ready) waiting them out instead of exiting."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import (
    CoordinatorNotAvailableError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    LeaderNotAvailableError,
    NotLeaderForPartitionError,
    RequestTimedOutError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
    UnrecognizedBrokerVersion,
)

from turnstream.adapters.kafka import admin, retry
from turnstream.adapters.kafka.retry import MAX_DELAY, retrying, transient
from turnstream.config import Settings, load_settings
from turnstream.entrypoints import bootstrap

TRANSIENT = [
    NotLeaderForPartitionError(),
    LeaderNotAvailableError(),
    UnknownTopicOrPartitionError(),  # a topic just made, not yet in the metadata
    KafkaConnectionError("Unable to bootstrap"),
    RequestTimedOutError(),
    CoordinatorNotAvailableError(),
    KafkaTimeoutError(),
    ConnectionRefusedError(),
    TimeoutError("topics not ready"),
]
LASTING = [
    TopicAuthorizationFailedError(),
    UnrecognizedBrokerVersion(),
    KafkaError("no max.message.bytes"),
    ValueError("a bug"),
]


@pytest.mark.parametrize("exc", TRANSIENT, ids=lambda e: type(e).__name__)
def test_a_leader_election_or_a_broker_not_answering_yet_is_transient(exc: Exception) -> None:
    assert transient(exc)


@pytest.mark.parametrize("exc", LASTING, ids=lambda e: type(e).__name__)
def test_what_does_not_pass_by_itself_is_not(exc: Exception) -> None:
    assert not transient(exc)


class _Clock:
    """A clock that moves only when the retry sleeps: the delays it slept, in order."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def _failing(errors: list[Exception], result: str = "ready") -> Callable[[], Any]:
    """A call that raises ``errors`` one per call, then returns ``result``."""
    left = iter(errors)

    async def call() -> str:
        for exc in left:
            raise exc
        return result

    return call


def test_transient_errors_are_retried_with_a_doubling_bounded_back_off() -> None:
    clock = _Clock()
    call = _failing([NotLeaderForPartitionError()] * 7 + [LeaderNotAvailableError()])
    got = asyncio.run(retrying(call, "creating the topics", 120.0, clock.sleep, clock))
    assert got == "ready"
    assert clock.slept == [0.2, 0.4, 0.8, 1.6, 3.2, MAX_DELAY, MAX_DELAY, MAX_DELAY]


def test_an_error_that_lasts_raises_at_once() -> None:
    clock = _Clock()
    call = _failing([TopicAuthorizationFailedError()])
    with pytest.raises(TopicAuthorizationFailedError):
        asyncio.run(retrying(call, "creating the topics", 120.0, clock.sleep, clock))
    assert clock.slept == []


def test_a_transient_error_past_the_deadline_raises_the_last_error() -> None:
    clock = _Clock()
    call = _failing([KafkaConnectionError("Unable to bootstrap")] * 100)
    with pytest.raises(KafkaConnectionError):
        asyncio.run(retrying(call, "creating the topics", 10.0, clock.sleep, clock))
    assert clock.now <= 10.0 and sum(clock.slept) == clock.now
    assert clock.slept == [0.2, 0.4, 0.8, 1.6, 3.2]  # the next, 5 s, would pass 10


@pytest.fixture
def no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "FIRST_DELAY", 0.0)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    config = tmp_path / "turnstream.toml"
    config.write_text('[worker]\ntopic_prefix = "t1"\npartitions = 4\n')
    return load_settings(config, environ={})


def test_the_worker_start_up_waits_out_leader_elections_after_creating_its_topics(
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    no_delay: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Before the retry, the first of these errors ended ``run_worker``: the worker
    exited at start-up."""
    created = _failing([KafkaConnectionError("Unable to bootstrap"), RequestTimedOutError()])
    described = _failing([NotLeaderForPartitionError(), LeaderNotAvailableError()], "1048588")
    calls: list[str] = []

    async def ensure_topics(bootstrap: str, topics: list[str], partitions: int, **kw: Any) -> None:
        calls.append("ensure_topics")
        assert partitions == 4 and "t1.accepted" in topics
        await created()

    async def max_message_bytes(bootstrap: str, topic: str, options: Any) -> int:
        calls.append("max_message_bytes")
        assert topic == "t1.accepted"
        return int(await described())

    async def input_topic_warnings(*args: Any) -> list[str]:
        return []

    monkeypatch.setattr(bootstrap, "ensure_topics", ensure_topics)
    monkeypatch.setattr(bootstrap, "max_message_bytes", max_message_bytes)
    monkeypatch.setattr(bootstrap, "input_topic_warnings", input_topic_warnings)
    with caplog.at_level("WARNING", logger=retry.__name__):
        assert asyncio.run(bootstrap.ready_topics(settings)) == 1048588
    assert calls == ["ensure_topics"] * 3 + ["max_message_bytes"] * 3
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 4
    assert logged[0] == (
        "creating the topics: transient broker error (KafkaConnectionError: Unable to "
        "bootstrap); retrying in 0.0 s"
    )
    assert "transient broker error ([Error 7] RequestTimedOutError)" in logged[1]
    assert "transient broker error ([Error 6] NotLeaderForPartitionError)" in logged[2]


def test_the_worker_start_up_still_refuses_what_lasts(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, no_delay: None
) -> None:
    refused = _failing([TopicAuthorizationFailedError()] * 2)

    async def ensure_topics(*args: Any, **kw: Any) -> None:
        await refused()

    monkeypatch.setattr(bootstrap, "ensure_topics", ensure_topics)
    with pytest.raises(TopicAuthorizationFailedError):
        asyncio.run(bootstrap.ready_topics(settings))


class _Admin:
    """An admin client whose ``describe_configs`` answers ``error_code`` for the topic."""

    error_code = 0

    def __init__(self, **options: Any) -> None:
        pass

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def describe_configs(self, resources: Any) -> list[Any]:
        entries = [("max.message.bytes", "2097152")]
        return [SimpleNamespace(resources=[(self.error_code, "", 2, "t1.accepted", entries)])]


@pytest.fixture
def fake_admin(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Admin]]:
    monkeypatch.setattr(admin, "AIOKafkaAdminClient", _Admin)
    monkeypatch.setattr(_Admin, "error_code", 0)
    yield _Admin


@pytest.mark.parametrize(
    ("code", "error", "is_transient"),
    [(6, NotLeaderForPartitionError, True), (29, TopicAuthorizationFailedError, False)],
)
def test_a_topics_limit_refused_by_the_broker_raises_as_the_brokers_error(
    fake_admin: type[_Admin], code: int, error: type[Exception], is_transient: bool
) -> None:
    """The error's class, not a bare KafkaError: a transient one is retried."""
    assert asyncio.run(admin.max_message_bytes("b:9092", "t1.accepted")) == 2097152
    fake_admin.error_code = code
    with pytest.raises(error) as raised:
        asyncio.run(admin.max_message_bytes("b:9092", "t1.accepted"))
    assert transient(raised.value) is is_transient
