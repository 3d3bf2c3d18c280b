"""Producers -> real Kafka -> Faust worker -> chDB on disk, counted exactly."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import pytest
from aiokafka import AIOKafkaConsumer

from turnstream.adapters.kafka.topology import TopicNames
from turnstream.adapters.worker_client import read_query
from turnstream.config import Settings
from turnstream.core.ingest import Source, decide
from turnstream.errors import InvalidItem
from turnstream.models import Turn, parse_item
from turnstream.models.deadletter import DeadLetter
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.integration


def _expected(batch) -> dict[str, int]:  # type: ignore[no-untyped-def]
    counts = {t: 0 for t in ("turns", "interactions", "outcomes", "commands")}
    counts.update(batch.accepted)
    counts["dead_letters"] = sum(batch.refused.values())
    return counts


def _accepted(raw: bytes, settings: Settings) -> bool:
    """Whether the worker accepts this line (no duplicates)."""
    decision = decide(raw, Source("t", 0, 0), settings, lambda _: None)
    return decision.refusal is None


def _claims_by_agent(lines: list[bytes]) -> dict[tuple[str, str], tuple[int, int]]:
    """Claims and evidenced claims per (source, agent), counted straight from the file."""
    claims: Counter[tuple[str, str]] = Counter()
    evidenced: Counter[tuple[str, str]] = Counter()
    for raw in lines:
        try:
            item = parse_item(raw)
        except InvalidItem:
            continue
        if isinstance(item, Turn) and item.space_id in ("acme", "vida"):  # claims on
            for claim in item.claims:
                claims[item.source, item.agent] += 1
                evidenced[item.source, item.agent] += claim.verdict in (
                    "matched",
                    "quoted_found",
                    "anchored",
                )
    return {key: (claims[key], evidenced[key]) for key in claims}


def _dead_letter_topic(deployment, count: int) -> list[DeadLetter]:  # type: ignore[no-untyped-def]
    """The first ``count`` messages of the deployment's dead-letter topic."""

    async def read() -> list[DeadLetter]:
        consumer = AIOKafkaConsumer(
            TopicNames(deployment.settings.worker.topic_prefix).dead_letters,
            bootstrap_servers=deployment.settings.broker.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        letters: list[DeadLetter] = []
        try:
            while len(letters) < count:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                for batch in batches.values():
                    letters += [DeadLetter.model_validate_json(m.value) for m in batch]
        finally:
            await consumer.stop()
        return letters

    return asyncio.run(read())


def _landed(counts: dict[str, int]) -> dict[str, int]:
    return {t: counts[t] for t in ("turns", "interactions", "outcomes", "commands", "dead_letters")}


def test_accepted_and_dead_letters_land_exactly_once(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    batch = mixed_items(n=1000, bad=50, seed=11)
    expected = _expected(batch)
    assert sum(batch.accepted.values()) == 950 and expected["dead_letters"] == 50
    deployment = deployment_factory()
    deployment.worker.start()

    deployment.publish(batch.lines)
    deployment.drain()
    assert _landed(deployment.counts()) == expected
    assert deployment.dead_letters() == batch.refused
    claims_sql = (
        "SELECT source, agent, sum(claims), sum(evidenced) FROM context_use_claims "
        "GROUP BY source, agent"
    )
    rolled = {
        (s, a): (int(n), int(e)) for s, a, n, e in read_query(deployment.settings, claims_sql).rows
    }
    assert rolled == _claims_by_agent(batch.lines)
    assert sum(n for n, _ in rolled.values()) > 100  # the batch really carries claims

    # The same file again: every idempotency key (and every invalid line) is known.
    deployment.publish(batch.lines)
    deployment.drain()
    assert _landed(deployment.counts()) == expected
    assert deployment.dead_letters() == batch.refused
    # The dead-letter topic holds each refused line's original bytes, reason and path.
    letters = _dead_letter_topic(deployment, 50)
    bad = set(batch.lines) - {raw for raw in batch.lines if _accepted(raw, deployment.settings)}
    assert {letter.original_bytes() for letter in letters} == bad
    assert Counter(letter.reason for letter in letters) == Counter(batch.refused)
    assert all(letter.field_path or letter.reason == "invalid" for letter in letters)

    again = {
        (s, a): (int(n), int(e)) for s, a, n, e in read_query(deployment.settings, claims_sql).rows
    }
    assert again == rolled
    stats = deployment.worker.stats()
    assert stats["messages"] == 2000
    assert stats["duplicates"] == 1000


def test_sigkill_halfway_then_restart_still_counts_exactly(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    batch = mixed_items(n=1000, bad=50, seed=12)
    expected = _expected(batch)
    # Small batches so that the kill lands in the middle of the work.
    deployment = deployment_factory(batch_size=10, batch_seconds=0.05)
    deployment.publish(batch.lines)
    deployment.worker.start()
    deadline = time.monotonic() + 120
    processed = 0
    while time.monotonic() < deadline:
        processed = deployment.worker.stats()["messages"]
        if processed >= 300:
            break
        time.sleep(0.02)
    deployment.worker.kill()
    assert 300 <= processed < 1000, f"the kill should land halfway (processed {processed})"

    deployment.worker.start()
    deployment.drain()
    assert _landed(deployment.counts()) == expected
    assert deployment.dead_letters() == batch.refused
