"""Kafka administration: topics, their limits, and how far the worker's consumer group is
behind."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, TopicAlreadyExistsError, for_code

from turnstream.adapters.kafka.retry import transient
from turnstream.errors import WorkerFailing

__all__ = [
    "ensure_topics",
    "group_lag",
    "max_message_bytes",
    "topic_configs",
    "wait_until_drained",
]


async def group_lag(
    bootstrap: str,
    group: str,
    topics: Sequence[str],
    options: Mapping[str, Any] | None = None,
) -> dict[TopicPartition, int]:
    """Messages not yet committed by ``group``, per input partition; ``options``: the
    clients' security (``adapters/kafka/auth.client_options``), as in every function here."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **(options or {}))
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, enable_auto_commit=False, **(options or {})
    )
    try:
        await admin.start()
        await consumer.start()
        committed = await admin.list_consumer_group_offsets(group)
        partitions = [
            TopicPartition(d["topic"], p["partition"])
            for d in await admin.describe_topics(list(topics))
            if d["error_code"] == 0  # a topic that does not exist holds nothing
            for p in d["partitions"]
        ]
        ends = await consumer.end_offsets(partitions) if partitions else {}
        lag = {}
        for tp in partitions:
            meta = committed.get(tp)
            done = meta.offset if meta is not None and meta.offset >= 0 else 0
            lag[tp] = max(ends[tp] - done, 0)
        return lag
    finally:
        await consumer.stop()
        await admin.close()


async def wait_until_drained(
    bootstrap: str,
    group: str,
    topics: Sequence[str],
    timeout: float = 300.0,
    on_progress: Callable[[int], None] | None = None,
    alive: Callable[[], bool] | None = None,
    failing: Callable[[], str | None] | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Return once ``group`` has committed everything in ``topics``.

    Raises TimeoutError after ``timeout`` seconds, RuntimeError if ``alive()`` turns
    false, :class:`WorkerFailing` when ``failing()`` says why the worker fails.
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            remaining = sum((await group_lag(bootstrap, group, topics, options)).values())
        except Exception as exc:
            if not transient(exc) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)  # e.g. the group coordinator is still being elected
            continue
        if on_progress is not None:
            on_progress(remaining)
        if remaining == 0:
            return
        if alive is not None and not alive():
            raise RuntimeError(f"the worker stopped with {remaining} messages unprocessed")
        why = failing() if failing is not None else None
        if why:
            raise WorkerFailing(f"{remaining} messages unprocessed: {why}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{remaining} messages still unprocessed after {timeout:.0f}s")
        await asyncio.sleep(0.5)


async def ensure_topics(
    bootstrap: str,
    topics: Sequence[str],
    partitions: int,
    compacted: Sequence[str] = (),
    timeout: float = 30.0,
    configs: dict[str, dict[str, str]] | None = None,
    options: Mapping[str, Any] | None = None,
) -> None:
    """Create the topics that do not exist yet, and wait until the broker lists every one
    of them with its partitions (a fresh broker answers before its metadata settles).

    ``compacted`` topics (table changelogs) get ``cleanup.policy=compact``; ``configs``
    adds settings per topic created (an existing topic keeps its own).
    """
    configs = configs or {}
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **(options or {}))
    try:
        await admin.start()
        existing = set(await admin.list_topics())
        wanted = [*topics, *compacted]
        missing = [t for t in wanted if t not in existing]
        if missing:
            new = [
                NewTopic(
                    t,
                    num_partitions=partitions,
                    replication_factor=1,
                    topic_configs={
                        **({"cleanup.policy": "compact"} if t in compacted else {}),
                        **configs.get(t, {}),
                    },
                )
                for t in missing
            ]
            with contextlib.suppress(TopicAlreadyExistsError):  # created meanwhile
                await admin.create_topics(new)
        deadline = time.monotonic() + timeout
        while True:
            described = await admin.describe_topics(wanted)
            if all(
                d["error_code"] == 0
                and d["partitions"]
                and all(p["leader"] >= 0 for p in d["partitions"])
                for d in described
            ):
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topics not ready after {timeout:.0f}s: {wanted}")
            await asyncio.sleep(0.2)
    finally:
        await admin.close()


async def topic_configs(
    bootstrap: str,
    topics: Sequence[str],
    settings: Sequence[str],
    options: Mapping[str, Any] | None = None,
) -> dict[str, dict[str, str] | KafkaError]:
    """Per topic, the values of ``settings`` the broker holds for it (its own or the
    broker's default), in one request; a topic the broker refuses to describe (no
    ``DescribeConfigs`` right, no such topic) maps to the broker's error, by its class
    (``aiokafka.errors.for_code``)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, **(options or {}))
    try:
        await admin.start()
        responses = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t, dict.fromkeys(settings)) for t in topics]
        )
    finally:
        await admin.close()
    described: dict[str, dict[str, str] | KafkaError] = {}
    for response in responses:
        for resource in response.resources:
            error_code, _, _, topic, entries = resource[:5]
            if error_code:
                described[topic] = for_code(error_code)(f"cannot describe topic {topic}")
            else:
                described[topic] = {entry[0]: entry[1] for entry in entries if entry[1] is not None}
    return described


async def max_message_bytes(
    bootstrap: str, topic: str, options: Mapping[str, Any] | None = None
) -> int:
    """The largest record batch ``topic`` takes (its ``max.message.bytes``); an error
    the broker answers raises as its class (``aiokafka.errors.for_code``)."""
    described = await topic_configs(bootstrap, [topic], ["max.message.bytes"], options)
    configs = described.get(topic, {})
    if isinstance(configs, KafkaError):  # the broker's error by its class: retriable or not
        raise configs
    if "max.message.bytes" not in configs:
        raise KafkaError(f"topic {topic} has no max.message.bytes")
    return int(configs["max.message.bytes"])
