"""Idempotency keys as real producers make them: every item lands once, at any batch size.

Issue #18: 6,000 interactions keyed by SHA-256 hex digests (64 characters) or by keys
of the contract's largest size (256 characters), published to a fresh worker at the
default batch size (then 5,000), never landed: the key look-up wrote the keys into the SQL
text and passed ClickHouse's 256 KiB ``max_query_size``, batch after batch. Every test
before used short keys. Here the keys also hold what a key may hold (quotes,
backslashes, tabs, accents, emoji), in the three languages' spaces (pt, en, es), and the
same items are sent twice: the second copy of each is a duplicate.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.chaos.helpers import Factory, log_tail, q, scalar
from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import MAX_BATCH_SIZE, WorkerSettings
from turnstream_dev.deployment import Deployment

#: Yesterday: inside the raw tables' retention whenever the test runs (core/time_edges.py).
DAY = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
pytestmark = pytest.mark.chaos(budget=300)

SEED = 7018
_ASCII = "abcdefghijklmnopqrstuvwxyz0123456789-_:/'\\\"\t {}[]%;"
_WIDE = "áéíóúãõçñ¿¡äöüß€😀"


def key_of(n: int, rng: random.Random) -> str:
    """A SHA-256 hex digest, or 256 characters of ASCII (quotes, backslashes, tabs), or
    of accents and emoji (up to 4 bytes each)."""
    kind = n % 3
    if kind == 0:
        return hashlib.sha256(f"item-{n}".encode()).hexdigest()
    alphabet = _ASCII if kind == 1 else _WIDE + _ASCII
    body = "".join(rng.choices(alphabet, k=256))
    return f"{n:06d}" + body[6:]  # unique, and exactly 256 characters


def items(n: int, seed: int = SEED) -> tuple[list[bytes], dict[str, int]]:
    """``n`` valid items with long keys, and the rows each raw table must end with."""
    rng = random.Random(seed)
    lines: list[bytes] = []
    expected = {"interactions": 0, "turns": 0, "turn_claims": 0}
    for i in range(n):
        key = key_of(i, rng)
        envelope: dict[str, Any] = {
            "idempotency_key": key,
            "profile_id": f"p-{i % 97}",
            "source": "whatsapp",
            "occurred_at": f"{DAY}T10:00:00Z",
        }
        space = ("acme", "lumen", "vida")[i % 3]
        if space == "vida":  # es: turns with a claim (vida has no signals feature)
            item = {
                "type": "turn",
                "space_id": space,
                **envelope,
                "turn_id": f"t-{i}",
                "agent": "asistente",
                "claims": [
                    {"category": "entrega", "nature": "model", "verdict": "no_evidence",
                     "action": "warn", "value": "llega mañana"}
                ],
            }  # fmt: skip
            expected["turns"] += 1
            expected["turn_claims"] += 1
        else:
            reason = "cor escura demais" if space == "acme" else "too dark for me"
            item = {
                "type": "interaction",
                "space_id": space,
                **envelope,
                "interaction": {"kind": "feedback", "ref": f"item:{i}", "polarity": "dislike",
                                "reason": reason},
            }  # fmt: skip
            expected["interactions"] += 1
        lines.append(json.dumps(item, ensure_ascii=False).encode())
    return lines, expected


def _totals(deployment: Deployment) -> dict[str, int]:
    counts = deployment.counts()
    return {t: counts[t] for t in ("interactions", "turns", "dead_letters")} | {
        "turn_claims": scalar(deployment, "SELECT count() FROM turn_claims"),
        "keys": scalar(deployment, "SELECT count() FROM idempotency_keys"),
    }


def _land_twice(deployment: Deployment, lines: list[bytes], expected: dict[str, int]) -> None:
    worker = deployment.worker
    deployment.publish(lines)  # all of them before the worker starts: full batches
    worker.start()
    deployment.drain(timeout=180)
    assert worker.alive(), log_tail(worker.log_path)
    want = {**expected, "dead_letters": 0, "keys": len(lines)}
    assert _totals(deployment) == want
    # Each key, as sent, is in the store once.
    stored = {k for (k,) in q(deployment, "SELECT idempotency_key FROM interactions")}
    stored |= {k for (k,) in q(deployment, "SELECT idempotency_key FROM turns")}
    assert stored == {json.loads(raw)["idempotency_key"] for raw in lines}

    deployment.publish(lines)  # the same items again: every one a duplicate
    deployment.drain(timeout=180)
    stats = worker.stats()
    assert stats["duplicates"] == len(lines) and stats["messages"] == 2 * len(lines)
    assert _totals(deployment) == want
    assert stats["ingest"]["state"] == "running", stats["ingest"]


def test_six_thousand_items_with_long_keys_land_once_at_the_default_batch_size(
    deployment_factory: Factory,
) -> None:
    lines, expected = items(6_000)
    assert {len(json.loads(raw)["idempotency_key"]) for raw in lines} == {64, 256}
    defaults = WorkerSettings()
    deployment = deployment_factory(
        batch_size=defaults.batch_size, batch_seconds=defaults.batch_seconds
    )
    _land_twice(deployment, lines, expected)
    # The batches were as large as the one that used to halt the worker.
    assert deployment.worker.stats()["largest_batch"] >= 4_000


def test_twenty_thousand_keys_of_256_characters_in_one_batch_at_the_largest_batch_size(
    deployment_factory: Factory,
) -> None:
    lines, expected = items(30_000)
    lines = [raw for i, raw in enumerate(lines) if i % 3]  # the 256-character keys only
    expected = {"interactions": 10_000, "turns": 10_000, "turn_claims": 10_000}
    assert {len(json.loads(raw)["idempotency_key"]) for raw in lines} == {256}
    assert len(lines) == MAX_BATCH_SIZE
    deployment = deployment_factory(batch_size=MAX_BATCH_SIZE, batch_seconds=1.0)
    # Eight partitions: one fetch then holds every one of these items (a partition gives
    # at most 4 MiB a fetch, adapters/kafka/clients.BACKLOG_FETCH).
    settings = deployment.settings
    names = TopicNames(settings.worker.topic_prefix)
    asyncio.run(ensure_topics(settings.broker.bootstrap, names.inputs, 8, configs=names.configs()))
    _land_twice(deployment, lines, expected)
    assert deployment.worker.stats()["largest_batch"] >= 0.9 * MAX_BATCH_SIZE
