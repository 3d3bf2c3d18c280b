"""A profile id is unique only within its space: the same producer-given id in two spaces
is two people, each derived and saved on their own, and neither stalls the other."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from turnstream.adapters.worker_client import read_query

pytestmark = pytest.mark.integration

FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"


def _clicks(space: str, profile: str, n: int) -> list[bytes]:
    at = datetime.now(UTC) - timedelta(minutes=5)
    return [
        json.dumps(
            {
                "type": "interaction",
                "space_id": space,
                "profile_id": profile,
                "source": "web",
                "session_id": f"{space}-s{i % 2}",
                "occurred_at": (at + timedelta(seconds=i)).isoformat(),
                "idempotency_key": f"{space}-{profile}-{i}",
                "interaction": {
                    "kind": "engaged",
                    "ref": f"item_variant:{space}:1",
                    "action": "click",
                },
            }
        ).encode()
        for i in range(n)
    ]


def test_one_profile_id_in_two_spaces(deployment_factory) -> None:  # type: ignore[no-untyped-def]
    deployment = deployment_factory(extra=FAST_TRIGGERS)
    deployment.worker.start()
    deployment.publish(_clicks("acme", "shared-id", 3) + _clicks("lumen", "shared-id", 3))
    deployment.drain()
    deployment.drain_signals(timeout=60)
    # Later items of both spaces are still derived: the loop did not stall on the first.
    deployment.publish(_clicks("acme", "after", 2))
    # The accepted topic grows only once ingestion has fanned the new items out: wait for
    # that first, or the derivation group may look drained against the old end offsets.
    deployment.drain()
    deployment.drain_signals(timeout=60)

    def rows(sql: str) -> list[tuple]:
        return [tuple(r) for r in read_query(deployment.settings, sql).rows]

    states = rows("SELECT space_id, profile_id FROM signal_state FINAL ORDER BY ALL")
    assert states == [("acme", "after"), ("acme", "shared-id"), ("lumen", "shared-id")]
    interests = rows(
        "SELECT space_id, value FROM inferences FINAL WHERE profile_id = 'shared-id' "
        "AND kind = 'interest' ORDER BY ALL"
    )
    assert interests == [("acme", "item_variant:acme:1"), ("lumen", "item_variant:lumen:1")]
