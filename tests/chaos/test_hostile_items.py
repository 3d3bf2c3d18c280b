"""10,000 malformed or hostile messages: the worker never stops, and every one of them
lands in ``dead_letters`` with its reason, once.

The messages (``tests/chaos/hostile.py``) are sent as they are, without a key, to any
of the input topics, compressed so that the ones over 1 MiB get past the broker's own
limit (as a producer that raised its limits would send them). A valid turn sent after
them must land.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections import Counter

import pytest
from aiokafka import AIOKafkaProducer

from tests.chaos.helpers import Factory, StatusWatch, log_tail, q, scalar
from tests.chaos.hostile import PLAN, Hostile, hostile_items, valid_turn
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.models import parse_item
from turnstream_dev.deployment import Deployment

pytestmark = pytest.mark.chaos(budget=300)

SEED = 7004


async def _send(deployment: Deployment, items: list[Hostile]) -> None:
    rand = random.Random(SEED)
    topics = TopicNames(deployment.settings.worker.topic_prefix).inputs
    producer = AIOKafkaProducer(
        bootstrap_servers=deployment.settings.broker.bootstrap,
        acks="all",
        enable_idempotence=True,
        compression_type="gzip",
        max_request_size=8 << 20,
        linger_ms=5,
    )
    await producer.start()
    try:
        for item in items:
            await producer.send(rand.choice(topics), item.raw)
        await producer.flush()
    finally:
        await producer.stop()


def test_ten_thousand_hostile_messages_become_dead_letters(deployment_factory: Factory) -> None:
    items = hostile_items(seed=SEED)
    assert len(items) == 10_000 == sum(PLAN.values())
    expected = Counter(item.reason for item in items)
    valid = valid_turn(SEED)
    key = parse_item(valid).idempotency_key

    deployment = deployment_factory(batch_size=500, batch_seconds=0.2)
    worker = deployment.worker
    worker.start()
    with StatusWatch(worker) as watch:
        asyncio.run(_send(deployment, items))
        deployment.publish([valid])
        try:
            deployment.drain(timeout=240)
        except (RuntimeError, TimeoutError) as exc:
            raise AssertionError(f"{exc}\n{log_tail(worker.log_path)}") from None
    assert worker.alive(), log_tail(worker.log_path)
    assert not watch.failures, watch.failures[:5]
    assert watch.answers > 0

    # The valid turn sent after them landed, and nothing else did.
    assert [r[0] for r in q(deployment, "SELECT idempotency_key FROM turns")] == [key]
    counts = deployment.counts()
    assert {t: counts[t] for t in ("interactions", "outcomes", "commands")} == dict.fromkeys(
        ("interactions", "outcomes", "commands"), 0
    )

    # Every hostile message is one dead letter with a reason and a message: no more.
    assert deployment.dead_letters() == dict(expected)
    assert scalar(deployment, "SELECT count() FROM dead_letters") == 10_000
    assert scalar(deployment, "SELECT countIf(reason = '' OR message = '') FROM dead_letters") == 0
    digests = {r[0] for r in q(deployment, "SELECT raw_sha256 FROM dead_letters")}
    assert digests == {hashlib.sha256(item.raw).hexdigest() for item in items}
    total = scalar(deployment, "SELECT sum(raw_bytes) FROM dead_letters")
    assert total == sum(len(item.raw) for item in items)

    stats = worker.stats()
    assert stats["messages"] == 10_001
    assert stats["duplicates"] == 0
    assert stats["dead_letters"] == dict(expected)
