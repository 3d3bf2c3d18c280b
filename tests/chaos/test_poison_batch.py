"""Poison in a full batch: the store refuses a few messages for good; they are isolated
and dead-lettered with the store's reason while their batch-mates land, and a SIGKILL
in the middle of the split, then a replay, leaves every table exact.

The poison must pass validation and be refused by the store the same way every time.
With counts and positions bounded by their columns, no value of the contract is refused
by turnstream's own schema any more, so the store here refuses by a rule an operator
added: a CHECK constraint on ``interactions`` (rows of one source), which
ClickHouse enforces with VIOLATED_CONSTRAINT on every insert. No code of turnstream is
told to fail: the real store refuses the real rows.
"""

from __future__ import annotations

import base64
import json
import random
import re
from collections import Counter

import pytest

from tests.chaos.helpers import Factory, log_tail, prepare_store, q, read_topic, scalar, wait_for
from tests.chaos.test_long_keys import items
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.ingest import refused_key_for

pytestmark = pytest.mark.chaos(budget=420)

SEED = 7019
POISON = 24
#: The source whose interaction rows the store refuses. (A date before 2000 was the
#: poison once: it is refused before the store now, past the raw tables' retention.)
POISONED = "poisoned"
CONSTRAINT = f"ALTER TABLE interactions ADD CONSTRAINT no_poison CHECK source != '{POISONED}'"
_REFUSED = re.compile(r"the store refused ")


def test_poison_is_isolated_and_dead_lettered_while_its_batch_mates_land(
    deployment_factory: Factory,
) -> None:
    lines, expected = items(6_000, seed=SEED)
    rng = random.Random(SEED)
    # Poison: interactions (of acme and lumen) of the poisoned source, valid by the contract.
    candidates = [i for i, raw in enumerate(lines) if b'"type": "interaction"' in raw]
    poisoned = sorted(rng.sample(candidates, POISON))
    for i in poisoned:
        item = json.loads(lines[i])
        item["source"] = POISONED
        lines[i] = json.dumps(item, ensure_ascii=False).encode()
    poison_keys = {json.loads(lines[i])["idempotency_key"] for i in poisoned}

    deployment = deployment_factory(batch_size=5_000, batch_seconds=0.5)
    prepare_store(deployment, CONSTRAINT)
    worker = deployment.worker
    deployment.publish(lines)  # one batch of 5,000 holds most of the poison
    worker.start()
    # SIGKILL once the split has isolated its first refused message, then start again:
    # the batch is consumed again from its first offset.
    wait_for(
        lambda: _REFUSED.search(worker.log_path.read_text(errors="replace")),
        120,
        "no refused message isolated",
        every=0.05,
    )
    worker.kill()
    worker.start()
    deployment.drain(timeout=240)
    assert worker.alive(), log_tail(worker.log_path)

    counts = deployment.counts()
    assert counts["interactions"] == expected["interactions"] - POISON
    assert counts["turns"] == expected["turns"]
    assert scalar(deployment, "SELECT count() FROM turn_claims") == expected["turn_claims"]
    # One key per message: each poison message's is the digest of its bytes, not its
    # item's key (left free for the item corrected).
    assert scalar(deployment, "SELECT count() FROM idempotency_keys") == len(lines)
    digests = q(
        deployment, "SELECT dedup_key FROM idempotency_keys WHERE dedup_key LIKE 'refused%'"
    )
    assert sorted(k for (k,) in digests) == sorted(refused_key_for(lines[i]) for i in poisoned)
    assert deployment.dead_letters() == {"store_refused": POISON}
    letters = q(deployment, "SELECT idempotency_key, message FROM dead_letters")
    assert {k for k, _ in letters} == poison_keys
    assert all("interactions refused it" in m and "VIOLATED_CONSTRAINT" in m for _, m in letters)
    # No batch-mate is missing, none is there twice.
    landed = Counter(k for (k,) in q(deployment, "SELECT idempotency_key FROM interactions"))
    assert set(landed.values()) == {1} and not poison_keys & set(landed)

    # The dead-letter topic has every poison item with its bytes as sent (a replay may
    # send a letter twice: the topic is at least once).
    names = TopicNames(deployment.settings.worker.topic_prefix)
    bootstrap = deployment.settings.broker.bootstrap
    sent = {lines[i] for i in poisoned}
    letters_sent = [json.loads(v) for _, v in read_topic(bootstrap, names.dead_letters)]
    assert {base64.b64decode(x["original"]) for x in letters_sent} == sent
    assert {x["reason"] for x in letters_sent} == {"store_refused"}
    # A refused item is never fanned out as accepted, not even by the replay.
    accepted = {json.loads(v)["idempotency_key"] for _, v in read_topic(bootstrap, names.accepted)}
    assert not accepted & poison_keys
    assert len(accepted) == len(lines) - POISON

    stats = worker.stats()
    assert stats["ingest"]["state"] == "running", stats["ingest"]
    assert stats["dead_letters"].get("store_refused", 0) <= POISON  # since the restart
