"""What the worker's start-up says of the input topics' settings
(``adapters/kafka/topic_check``): the rule, and a broker that answers with an error or not
at all. On a real broker: ``tests/integration/kafka/test_topic_check.py``."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.errors import KafkaConnectionError, TopicAuthorizationFailedError

from turnstream.adapters.kafka import admin, retry
from turnstream.adapters.kafka.topic_check import Unlike, input_topic_warnings, unlike_created
from turnstream.adapters.kafka.topology import INPUT_TOPIC_CONFIG

RIGHT = {"max.message.bytes": "1114112", "message.timestamp.type": "LogAppendTime"}


def test_a_topic_made_as_turnstream_makes_it_or_taking_more_holds() -> None:
    assert unlike_created("t.turns", RIGHT) == []
    assert unlike_created("t.turns", {**RIGHT, "max.message.bytes": "4194304"}) == []


def test_a_smaller_limit_another_timestamp_or_none_given_is_unlike() -> None:
    configs = {"max.message.bytes": "1048588", "message.timestamp.type": "CreateTime"}
    assert unlike_created("t.turns", configs) == [
        Unlike("t.turns", "max.message.bytes", "1048588", "1114112"),
        Unlike("t.turns", "message.timestamp.type", "CreateTime", "LogAppendTime"),
    ]
    assert [u.value for u in unlike_created("t.turns", {})] == [None, None]


def test_the_warning_names_the_topic_the_setting_both_values_and_the_command() -> None:
    unlike = Unlike("t.turns", "message.timestamp.type", "CreateTime", "LogAppendTime")
    assert unlike.warning("k1:9092,k2:9092") == (
        "input topic t.turns: message.timestamp.type is CreateTime, expected LogAppendTime: "
        "records keep their producers' timestamps, and timestamps days apart make the broker "
        "roll a segment per record (docs/security.md); set it with: kafka-configs.sh "
        "--bootstrap-server k1:9092,k2:9092 --command-config super.properties --alter "
        "--entity-type topics --entity-name t.turns --add-config "
        "message.timestamp.type=LogAppendTime"
    )
    size = Unlike("t.turns", "max.message.bytes", None, "1114112").warning("k:9092")
    assert size.startswith(
        "input topic t.turns: max.message.bytes is not set, expected 1114112 or more"
    )


class _Admin:
    """An admin client describing each topic with ``configs``, or ``error_code``
    for the topics in ``refused``; ``fails`` raises from ``describe_configs``."""

    configs: dict[str, str] = RIGHT
    refused: frozenset[str] = frozenset()
    fails: Exception | None = None

    def __init__(self, **options: Any) -> None:
        pass

    async def start(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def describe_configs(self, resources: Any) -> list[Any]:
        if self.fails is not None:
            raise self.fails
        answered = [
            (29, "", 2, r.name, []) if r.name in self.refused else
            (0, "", 2, r.name, [(k, self.configs.get(k)) for k in r.configs])
            for r in resources
        ]  # fmt: skip
        return [SimpleNamespace(resources=answered)]


@pytest.fixture
def fake_admin(monkeypatch: pytest.MonkeyPatch) -> type[_Admin]:
    monkeypatch.setattr(admin, "AIOKafkaAdminClient", _Admin)
    monkeypatch.setattr(retry, "FIRST_DELAY", 0.0)
    return _Admin


def _warnings(topics: list[str], within: float = 5.0) -> list[str]:
    return asyncio.run(input_topic_warnings("k:9092", topics, time.monotonic() + within))


def test_every_topic_is_described_in_one_call_and_only_the_unlike_ones_are_said(
    fake_admin: type[_Admin], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _warnings(["t.turns", "t.outcomes"]) == []
    monkeypatch.setattr(fake_admin, "configs", {**RIGHT, "message.timestamp.type": "CreateTime"})
    said = _warnings(["t.turns", "t.outcomes"])
    assert [w.split(":")[0] for w in said] == ["input topic t.turns", "input topic t.outcomes"]


def test_a_topic_the_broker_will_not_describe_is_a_warning_that_names_it(
    fake_admin: type[_Admin], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fake_admin, "refused", frozenset({"t.turns"}))
    [said] = _warnings(["t.turns", "t.outcomes"])
    assert said.startswith(
        "could not check the settings of input topic t.turns ([Error 29] "
        "TopicAuthorizationFailedError: cannot describe topic t.turns): the worker starts"
    )
    assert "DescribeConfigs" in said


@pytest.mark.parametrize(
    "error", [TopicAuthorizationFailedError(), KafkaConnectionError("gone"), TimeoutError()]
)
def test_a_broker_that_refuses_or_does_not_answer_is_one_warning_never_a_failure(
    fake_admin: type[_Admin], monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    """A transient error is retried until the deadline (none left here), then said."""
    monkeypatch.setattr(fake_admin, "fails", error)
    [said] = _warnings(["t.turns"], within=0.0)
    assert said.startswith("could not check the settings of the input topics (")
    assert type(error).__name__ in said


def test_the_warnings_name_every_setting_turnstream_gives_its_input_topics() -> None:
    """The rule reads the settings the topics are created with: a new one is checked too."""
    assert [u.setting for u in unlike_created("t", {})] == list(INPUT_TOPIC_CONFIG)
