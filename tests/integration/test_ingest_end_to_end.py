"""Producers -> real Kafka -> Faust worker -> chDB on disk, counted exactly."""

from __future__ import annotations

import time

import pytest

from turnstream.sample import mixed_items

pytestmark = pytest.mark.integration


def _expected(batch) -> dict[str, int]:  # type: ignore[no-untyped-def]
    counts = {t: 0 for t in ("turns", "interactions", "outcomes", "commands")}
    counts.update(batch.accepted)
    counts["dead_letters"] = sum(batch.refused.values())
    return counts


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

    # The same file again: every idempotency key (and every invalid line) is known.
    deployment.publish(batch.lines)
    deployment.drain()
    assert _landed(deployment.counts()) == expected
    assert deployment.dead_letters() == batch.refused
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
