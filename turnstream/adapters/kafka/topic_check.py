"""The input topics' settings, checked at the worker's start-up.

turnstream creates its input topics with ``topology.INPUT_TOPIC_CONFIG``; a topic an
operator made beforehand keeps its own (``admin.ensure_topics``). Each setting
of an existing input topic unlike what turnstream would give it is said as a warning
naming the topic, the setting, its value, the value expected and the command that sets
it (the one docs/security.md gives). The worker starts all the same; a user the broker
does not let describe a topic's configuration gets a warning that it could not check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka.errors import KafkaError

from turnstream.adapters.kafka.admin import topic_configs
from turnstream.adapters.kafka.retry import named_error, retrying
from turnstream.adapters.kafka.topology import INPUT_TOPIC_CONFIG
from turnstream.models.items import MAX_ITEM_BYTES

__all__ = ["AT_LEAST", "Unlike", "fix_command", "input_topic_warnings", "unlike_created"]

#: Settings whose larger value holds too: a topic that takes larger records still takes
#: every item of the contract's size.
AT_LEAST = frozenset({"max.message.bytes"})

#: The contract's largest item, in words.
_LARGEST = f"{MAX_ITEM_BYTES >> 20} MiB"

#: What goes wrong without each setting, for its warning.
_WHY = {
    "max.message.bytes": f"the broker refuses an item of the contract's largest size ({_LARGEST})",
    "message.timestamp.type": "records keep their producers' timestamps, and timestamps "
    "days apart make the broker roll a segment per record (docs/security.md)",
}


def fix_command(bootstrap: str, topic: str, setting: str, value: str) -> str:
    """The command that gives ``topic`` its ``setting``, as docs/security.md gives it (run
    as a user that may alter the topic: ``super.properties``)."""
    return (
        f"kafka-configs.sh --bootstrap-server {bootstrap} --command-config super.properties "
        f"--alter --entity-type topics --entity-name {topic} --add-config {setting}={value}"
    )


@dataclass(frozen=True)
class Unlike:
    """A setting of an input topic unlike what turnstream creates the topic with."""

    topic: str
    setting: str
    #: As the broker described it (None: it gave no value).
    value: str | None
    expected: str

    def warning(self, bootstrap: str) -> str:
        """The warning: the topic, the setting, its value and the value expected, why it
        matters and the command that sets it."""
        expected = f"{self.expected} or more" if self.setting in AT_LEAST else self.expected
        return (
            f"input topic {self.topic}: {self.setting} is {self.value or 'not set'}, "
            f"expected {expected}: {_WHY.get(self.setting, 'turnstream creates it so')}; "
            f"set it with: {fix_command(bootstrap, self.topic, self.setting, self.expected)}"
        )


def _holds(setting: str, value: str | None, expected: str) -> bool:
    if value is None:
        return False
    if setting in AT_LEAST:
        return value.isdigit() and int(value) >= int(expected)
    return value == expected


def unlike_created(topic: str, configs: Mapping[str, str]) -> list[Unlike]:
    """The settings of :data:`INPUT_TOPIC_CONFIG` that ``configs`` (``topic``'s, as the
    broker describes them) does not hold, in that order."""
    return [
        Unlike(topic, setting, configs.get(setting), expected)
        for setting, expected in INPUT_TOPIC_CONFIG.items()
        if not _holds(setting, configs.get(setting), expected)
    ]


def _unchecked(what: str, error: BaseException) -> str:
    return (
        f"could not check the settings of {what} ({named_error(error)}): the worker "
        f"starts without knowing whether they take an item of {_LARGEST} and are stamped by the "
        f"broker ({', '.join(f'{k}={v}' for k, v in INPUT_TOPIC_CONFIG.items())}); grant "
        "the worker's user DescribeConfigs on them, or check with kafka-configs.sh --describe"
    )


async def input_topic_warnings(
    bootstrap: str,
    topics: Sequence[str],
    deadline: float,
    options: Mapping[str, Any] | None = None,
) -> list[str]:
    """A warning per setting of ``topics`` unlike :data:`INPUT_TOPIC_CONFIG`, and per topic
    the broker would not describe; none when every topic holds them. Transient broker
    errors are retried until ``deadline`` (``time.monotonic()``); then, or for any other
    error, one warning that the topics could not be checked: this never raises a broker's
    error."""
    try:
        described = await retrying(
            lambda: topic_configs(bootstrap, topics, list(INPUT_TOPIC_CONFIG), options),
            "reading the input topics' settings",
            deadline,
        )
    except (KafkaError, OSError) as exc:  # OSError: a connection refused, timed out
        return [_unchecked("the input topics", exc)]
    warnings: list[str] = []
    for topic in topics:
        configs = described.get(topic)
        if configs is None:
            configs = KafkaError("the broker did not describe it")
        if isinstance(configs, KafkaError):
            warnings.append(_unchecked(f"input topic {topic}", configs))
            continue
        warnings += [unlike.warning(bootstrap) for unlike in unlike_created(topic, configs)]
    return warnings
