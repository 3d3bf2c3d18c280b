"""What the local SASL broker lets each user do: its controller's listener takes the broker's
own user alone, and its ACLs let a producer write the input topics and nothing else
(``turnstream_dev/kafka_acls.py``). The worker's side, end to end through the same kind
of broker: ``tests/integration/kafka/test_producer_keys.py``."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError

from tests.fixtures.kafka import PRODUCERS, SASL_USERS
from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.topic_check import input_topic_warnings
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import BrokerSecurity, BrokerSettings, Settings, WorkerSettings
from turnstream.entrypoints.kafka.singleton import BrokerSingleton
from turnstream_dev import LocalKafka, ensure_jars
from turnstream_dev.kafka import BROKER_USER, _find_java

pytestmark = pytest.mark.integration

WORKER, PRODUCER = SASL_USERS[0], PRODUCERS[0]


def _as(kafka: LocalKafka, user: str) -> dict[str, Any]:
    return kafka.client_options(user)


def _deployment(kafka: LocalKafka) -> TopicNames:
    """A deployment's names of its own, granted on ``kafka``, its topics made by its worker."""
    name = f"acl{uuid.uuid4().hex[:8]}"
    kafka.grant(WorkerSettings(app_id=name, topic_prefix=name))
    names = TopicNames(name)
    asyncio.run(ensure_topics(kafka.bootstrap, names.every, 1, options=_as(kafka, WORKER)))
    return names


def _retention(kafka: LocalKafka, topic: str) -> str:
    async def read() -> str:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap, **kafka.client_options())
        await admin.start()
        try:
            [response] = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic, {"retention.ms": None})]
            )
        finally:
            await admin.close()
        entries = response.resources[0][4]
        return next(str(entry[1]) for entry in entries if entry[0] == "retention.ms")

    return asyncio.run(read())


def _alter_through_controller(kafka: LocalKafka, topic: str, client: Path) -> int:
    """``kafka-configs.sh --bootstrap-controller``: set the topic's retention.ms to 1000 as
    the client of the properties file ``client``; the tool's exit code."""
    libs = ensure_jars(progress=None)
    command = [
        _find_java(),
        "-cp",
        f"{libs}/*",
        "kafka.admin.ConfigCommand",
        "--bootstrap-controller",
        f"127.0.0.1:{kafka.controller_port}",
        "--command-config",
        str(client),
        "--alter",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--add-config",
        "retention.ms=1000",
    ]
    return subprocess.run(command, capture_output=True, timeout=120, check=False).returncode


def _client(path: Path, kafka: LocalKafka | None = None, user: str = "") -> Path:
    """A client's properties file: ``user``'s PLAIN credentials, or none (anonymous)."""
    lines = ["default.api.timeout.ms=8000", "request.timeout.ms=4000"]
    if kafka is not None:
        lines += [
            "security.protocol=SASL_PLAINTEXT",
            "sasl.mechanism=PLAIN",
            "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
            f'required username="{user}" password="{kafka.users()[user]}";',
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_controller_listener_takes_the_broker_s_user_alone(
    sasl_broker: LocalKafka, tmp_path: Path
) -> None:
    topic = _deployment(sasl_broker).accepted
    before = _retention(sasl_broker, topic)
    # Anonymous, and the worker's user (every topic of its own on the client listener).
    for refused in (
        _client(tmp_path / "anonymous.properties"),
        _client(tmp_path / "worker.properties", sasl_broker, WORKER),
    ):
        assert _alter_through_controller(sasl_broker, topic, refused) != 0
        assert _retention(sasl_broker, topic) == before != "1000"
    # The same call as the broker's own user goes through: the path the others took.
    broker = _client(tmp_path / "broker.properties", sasl_broker, BROKER_USER)
    assert _alter_through_controller(sasl_broker, topic, broker) == 0
    assert _retention(sasl_broker, topic) == "1000"


def test_a_producer_writes_the_input_topics_and_nothing_else(sasl_broker: LocalKafka) -> None:
    names = _deployment(sasl_broker)
    topic = names.input("interaction")

    async def run() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=sasl_broker.bootstrap,
            acks="all",
            enable_idempotence=True,
            **_as(sasl_broker, PRODUCER),
        )
        await producer.start()
        try:
            await producer.send_and_wait(topic, b"an item", partition=0)
            with pytest.raises(TopicAuthorizationFailedError):
                await producer.send_and_wait(names.accepted, b"a forged accepted item")
        finally:
            await producer.stop()
        # It cannot read what it (or another space's producer) wrote; the worker can.
        for user, reads in ((PRODUCER, False), (WORKER, True)):
            consumer = AIOKafkaConsumer(
                bootstrap_servers=sasl_broker.bootstrap,
                auto_offset_reset="earliest",
                **_as(sasl_broker, user),
            )
            await consumer.start()
            try:
                consumer.assign([TopicPartition(topic, 0)])
                if reads:
                    assert (await asyncio.wait_for(consumer.getone(), 30)).value == b"an item"
                else:
                    with pytest.raises(TopicAuthorizationFailedError):
                        await asyncio.wait_for(consumer.getone(), 30)
            finally:
                await consumer.stop()
        # Nor join the worker's consumer group.
        consumer = AIOKafkaConsumer(
            topic,
            group_id=names.prefix,
            bootstrap_servers=sasl_broker.bootstrap,
            **_as(sasl_broker, PRODUCER),
        )
        try:
            with pytest.raises(GroupAuthorizationFailedError):
                await consumer.start()
                await asyncio.wait_for(consumer.getone(), 30)
        finally:
            await consumer.stop()

    asyncio.run(run())


def test_a_user_named_as_a_producer_stays_one_on_later_ups(sasl_broker: LocalKafka) -> None:
    again = LocalKafka(
        home=sasl_broker.home,
        port=sasl_broker.port,
        controller_port=sasl_broker.controller_port,
        worker=sasl_broker.worker,
    )
    again.up(timeout=60)
    assert again.producer_users() == {PRODUCER}
    names = TopicNames(sasl_broker.worker.topic_prefix)

    async def forge() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=again.bootstrap, **_as(sasl_broker, PRODUCER))
        await producer.start()
        try:
            with pytest.raises(TopicAuthorizationFailedError):
                await producer.send_and_wait(names.accepted, b"a forged accepted item")
        finally:
            await producer.stop()

    asyncio.run(forge())


def test_the_scheduler_s_singleton_holds_its_role_as_a_worker_user(
    sasl_broker: LocalKafka,
) -> None:
    name = f"acl{uuid.uuid4().hex[:8]}"
    worker = WorkerSettings(app_id=name, topic_prefix=name, session_timeout=6.0)
    sasl_broker.grant(worker)
    security = BrokerSecurity(
        protocol="SASL_PLAINTEXT",
        mechanism="PLAIN",
        username=WORKER,
        password=sasl_broker.users()[WORKER],
    )
    settings = Settings(
        broker=BrokerSettings(bootstrap=sasl_broker.bootstrap, security=security), worker=worker
    )
    owner = BrokerSingleton(settings, "scheduler")

    async def run() -> None:
        stopping = False
        task = asyncio.create_task(owner.run(lambda: stopping))
        try:
            async with asyncio.timeout(60):
                while not owner.held():
                    await asyncio.sleep(0.1)
        finally:
            stopping = True
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(run())


def test_a_user_that_may_not_describe_the_topics_settings_gets_a_warning_not_a_failure(
    sasl_broker: LocalKafka,
) -> None:
    """The start-up's check of the input topics' settings (``adapters/kafka/topic_check``)
    as a producer's user, which may describe the input topics but not their settings."""
    names = _deployment(sasl_broker)
    deadline = time.monotonic() + 30
    warnings = asyncio.run(
        input_topic_warnings(
            sasl_broker.bootstrap, names.inputs, deadline, _as(sasl_broker, PRODUCER)
        )
    )
    assert [w.split(" (")[0] for w in warnings] == [
        f"could not check the settings of input topic {t}" for t in names.inputs
    ]
    assert all("TopicAuthorizationFailedError" in w for w in warnings), warnings
    # The worker's user reads them: made by _deployment without turnstream's settings.
    as_worker = _as(sasl_broker, WORKER)
    warnings = asyncio.run(
        input_topic_warnings(sasl_broker.bootstrap, names.inputs, deadline, as_worker)
    )
    assert [w.split(":")[0] for w in warnings] == [
        f"input topic {t}" for t in names.inputs for _ in range(2)
    ]
