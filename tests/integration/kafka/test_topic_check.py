"""The worker's start-up names an input topic made beforehand without the settings
turnstream creates it with (``adapters/kafka/topic_check``), on a real broker: an
operator's topic with the broker's defaults is named, setting by setting, with the
command that fixes it; a topic made right, or fixed so, is not."""

from __future__ import annotations

import asyncio
import logging
import uuid

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from turnstream.adapters.kafka.topology import INPUT_TOPIC_BYTES, INPUT_TOPIC_CONFIG, TopicNames
from turnstream.config import BrokerSettings, Settings, WorkerSettings
from turnstream.entrypoints import bootstrap

pytestmark = pytest.mark.integration


async def _create(servers: str, topics: dict[str, dict[str, str]]) -> None:
    """Make ``topics`` as an operator would, each with its own settings only."""
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(t, 1, 1, topic_configs=configs) for t, configs in topics.items()]
        )
    finally:
        await admin.close()


async def _alter(servers: str, topic: str, configs: dict[str, str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    try:
        await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs)])
    finally:
        await admin.close()


def _start_up_warnings(settings: Settings, caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the worker's start-up (``ready_topics``) logs as warnings."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=bootstrap.__name__):
        asyncio.run(bootstrap.ready_topics(settings))
    return [r.getMessage() for r in caplog.records if r.name == bootstrap.__name__]


def test_an_input_topic_made_without_the_settings_is_named_and_one_made_right_is_not(
    kafka_broker: str, caplog: pytest.LogCaptureFixture
) -> None:
    prefix = f"tc{uuid.uuid4().hex[:8]}"
    names = TopicNames(prefix)
    plain, right = names.input("turn"), names.input("interaction")
    larger = {**INPUT_TOPIC_CONFIG, "max.message.bytes": str(2 * INPUT_TOPIC_BYTES)}
    asyncio.run(_create(kafka_broker, {plain: {}, right: larger}))
    settings = Settings(
        broker=BrokerSettings(bootstrap=kafka_broker),
        worker=WorkerSettings(app_id=prefix, topic_prefix=prefix, partitions=1),
    )

    warnings = _start_up_warnings(settings, caplog)

    fix = (
        f"set it with: kafka-configs.sh --bootstrap-server {kafka_broker} --command-config "
        f"super.properties --alter --entity-type topics --entity-name {plain} --add-config"
    )
    assert len(warnings) == 2, warnings
    size, stamp = warnings
    assert size.startswith(
        f"input topic {plain}: max.message.bytes is 1048588, expected 1114112 or more: "
    )
    assert size.endswith(f"{fix} max.message.bytes=1114112")
    assert stamp.startswith(
        f"input topic {plain}: message.timestamp.type is CreateTime, expected LogAppendTime: "
    )
    assert stamp.endswith(f"{fix} message.timestamp.type=LogAppendTime")
    # The other three (one made right beforehand, two made by the start-up) say nothing.
    assert not [w for w in warnings if plain not in w]

    asyncio.run(_alter(kafka_broker, plain, dict(INPUT_TOPIC_CONFIG)))
    assert _start_up_warnings(settings, caplog) == []
