"""The producer: validates items, keys them by profile and publishes to their topic."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaProducer

from turnstream.config import Settings
from turnstream.errors import InvalidItem, TurnstreamError
from turnstream.identity import resolve_profile
from turnstream.models import ITEM_TYPES, Item, parse_item
from turnstream.streams.kafka_admin import ensure_topics
from turnstream.streams.topics import INPUT_TOPIC_BYTES, TopicNames

__all__ = ["BadLine", "Producer", "PublishReport", "read_lines", "validate_lines"]


@dataclass(frozen=True)
class BadLine:
    line: int
    errors: list[tuple[str, str]]

    def __str__(self) -> str:
        return f"line {self.line}: " + "; ".join(f"{p or '<item>'}: {m}" for p, m in self.errors)


@dataclass
class PublishReport:
    """What a publish did: items sent per type and the lines refused."""

    sent: Counter[str] = field(default_factory=Counter)
    bad: list[BadLine] = field(default_factory=list)
    sent_invalid: int = 0

    @property
    def total(self) -> int:
        return sum(self.sent.values()) + self.sent_invalid


def read_lines(path: Path) -> Iterable[tuple[int, bytes]]:
    """Non-blank lines of a JSONL file with their 1-based numbers."""
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            stripped = line.strip()
            if stripped:
                yield number, stripped


def validate_lines(lines: Iterable[tuple[int, bytes]]) -> tuple[list[Item], list[BadLine]]:
    """Validate every line without a broker."""
    items, bad = [], []
    for number, raw in lines:
        try:
            items.append(parse_item(raw))
        except InvalidItem as exc:
            bad.append(BadLine(number, exc.errors))
    return items, bad


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
        self._producer = AIOKafkaProducer(
            bootstrap_servers=settings.broker.bootstrap,
            acks="all",
            enable_idempotence=True,
            linger_ms=5,
            # An item of the contract's 1 MiB, with its key and framing.
            max_request_size=INPUT_TOPIC_BYTES,
        )

    async def __aenter__(self) -> Producer:
        try:
            await ensure_topics(
                self.settings.broker.bootstrap,
                self.topics.inputs,
                self.settings.worker.partitions,
                configs=self.topics.configs(),
            )
            await self._producer.start()
        except Exception as exc:
            await self._producer.stop()
            raise TurnstreamError(
                f"cannot reach the Kafka broker at {self.settings.broker.bootstrap}: {exc}"
            ) from exc
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._producer.stop()

    async def publish(self, item: bytes | dict[str, Any]) -> Item:
        """Validate one item and publish it; raises InvalidItem and sends nothing if bad."""
        raw = item if isinstance(item, bytes) else json.dumps(item).encode()
        parsed = parse_item(raw)
        key = resolve_profile(parsed, self.settings.secret_bytes()).encode()
        await self._producer.send(self.topics.input(parsed.type), raw, key=key)
        return parsed

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
