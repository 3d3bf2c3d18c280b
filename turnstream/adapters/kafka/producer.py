"""The producer: validates items, keys them by profile and publishes to their topic."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaProducer

from turnstream.adapters.jsonl import BadLine
from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.topology import INPUT_TOPIC_BYTES, TopicNames
from turnstream.config import Settings
from turnstream.core.identity import resolve_profile
from turnstream.core.signing import HEADER, sign
from turnstream.errors import InvalidItem, TurnstreamError
from turnstream.models import ITEM_TYPES, Command, Item, parse_item

__all__ = ["Producer", "PublishReport"]


@dataclass
class PublishReport:
    """What a publish did: items sent per type and the lines refused."""

    sent: Counter[str] = field(default_factory=Counter)
    bad: list[BadLine] = field(default_factory=list)
    sent_invalid: int = 0

    @property
    def total(self) -> int:
        return sum(self.sent.values()) + self.sent_invalid


def _guess_type(raw: bytes) -> str:
    try:
        value = json.loads(raw).get("type")
    except (ValueError, AttributeError, RecursionError):
        return "interaction"
    return value if value in ITEM_TYPES else "interaction"


class Producer:
    """Publishes wire items to Kafka, one topic per item type, keyed by profile id.

    Use as ``async with Producer(settings) as producer: await producer.publish(item)``.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.topics = TopicNames(settings.worker.topic_prefix)
        # aiokafka binds a client to the running event loop: it is made in start(), so a
        # Producer can be built before the loop runs (the worker's bootstrap does).
        self._client: AIOKafkaProducer | None = None
        #: The event loop the producer was started on (a sync caller in another thread
        #: publishes through it: ``turnstream.sdk.Conversation``).
        self.loop: asyncio.AbstractEventLoop | None = None

    @property
    def _producer(self) -> AIOKafkaProducer:
        if self._client is None:
            raise TurnstreamError("the producer is not started: use `async with Producer(...)`")
        return self._client

    async def start(self) -> None:
        """Create the input topics if needed and connect to the broker."""
        self.loop = asyncio.get_running_loop()
        self._client = AIOKafkaProducer(
            bootstrap_servers=self.settings.broker.bootstrap,
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            # An item of the contract's 1 MiB, with its key and framing.
            max_request_size=INPUT_TOPIC_BYTES,
            **client_options(self.settings),
        )
        try:
            await ensure_topics(
                self.settings.broker.bootstrap,
                self.topics.inputs,
                self.settings.worker.partitions,
                configs=self.topics.configs(),
                options=client_options(self.settings),
            )
            await self._client.start()
        except Exception as exc:
            await self.stop()
            raise TurnstreamError(
                f"cannot reach the Kafka broker at {self.settings.broker.bootstrap}: {exc}"
            ) from exc

    async def stop(self) -> None:
        """Flush and disconnect (nothing to do when not started)."""
        client, self._client = self._client, None
        if client is not None:
            await client.stop()

    async def __aenter__(self) -> Producer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def publish(self, item: bytes | dict[str, Any]) -> Item:
        """Validate one item and publish it; raises InvalidItem and sends nothing if bad."""
        raw = item if isinstance(item, bytes) else json.dumps(item).encode()
        parsed = parse_item(raw)
        key = resolve_profile(parsed, self.settings.secret_bytes()).encode()
        headers = self._signed(parsed, raw)
        await self._producer.send(self.topics.input(parsed.type), raw, key=key, headers=headers)
        return parsed

    def _signed(self, item: Item, raw: bytes) -> list[tuple[str, bytes]] | None:
        """The signature header of ``raw`` with its space's first key (an erase: the erase
        key); none for a space this process holds no keys of (an open space)."""
        space = self.settings.space(item.space_id)
        if space is None:
            return None
        erase = isinstance(item, Command) and item.command == "erase"
        keys = space.signing_keys(erase)
        if not keys:
            if erase and space.producer_keys:
                # The worker would dead-letter it: say so here, where it can be fixed.
                raise TurnstreamError(
                    f"spaces.{item.space_id}.erase_keys: an erase is signed with the space's "
                    "erase key, and none is configured here (TURNSTREAM_ERASE_KEYS_"
                    f"{item.space_id.upper().replace('-', '_')})"
                )
            return None
        return [(HEADER, sign(raw, keys[0]))]

    async def flush(self) -> None:
        """Wait until everything sent so far is acknowledged by the broker."""
        await self._producer.flush()

    async def publish_raw(self, raw: bytes, key: bytes | None = None) -> None:
        """Send bytes unvalidated (to exercise the worker's dead-letter path)."""
        await self._producer.send(self.topics.input(_guess_type(raw)), raw, key=key)

    async def publish_lines(
        self,
        lines: Iterable[tuple[int, bytes]],
        *,
        send_invalid: bool = False,
        on_line: Callable[[], None] | None = None,
    ) -> PublishReport:
        """Publish numbered lines; invalid ones are reported (and sent raw if asked)."""
        report = PublishReport()
        for number, raw in lines:
            try:
                parsed = await self.publish(raw)
                report.sent[parsed.type] += 1
            except InvalidItem as exc:
                report.bad.append(BadLine(number, exc.errors))
                if send_invalid:
                    await self.publish_raw(raw)
                    report.sent_invalid += 1
            if on_line is not None:
                on_line()
        await self._producer.flush()
        return report
