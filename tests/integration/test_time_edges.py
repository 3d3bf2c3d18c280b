"""Time at the edges on the real broker and in a replay: an item dated past the raw
tables' retention or too far ahead is a dead letter that says why, never a silent loss;
the same lines give the same decisions in ``turnstream replay``."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures.queries import read_one
from turnstream.adapters.worker_client import read_query

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC)
#: occurred_at → the reason it is refused with (None: accepted).
CASES = {
    "1850-01-01T00:00:00Z": "past_retention",
    "2350-01-01T00:00:00Z": "ahead_of_clock",
    "0001-01-01T00:00:00Z": "past_retention",
    (NOW - timedelta(days=46)).strftime("%Y-%m-%dT%H:%M:%SZ"): "past_retention",
    (NOW + timedelta(hours=26)).strftime("%Y-%m-%dT%H:%M:%SZ"): "ahead_of_clock",
    (NOW - timedelta(days=44)).strftime("%Y-%m-%dT%H:%M:%SZ"): None,
    (NOW + timedelta(hours=22)).strftime("%Y-%m-%dT%H:%M:%SZ"): None,
}


def _line(n: int, occurred_at: str) -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": f"edge-{n}",
            "profile_id": f"p-{n}",
            "source": "web",
            "occurred_at": occurred_at,
            "interaction": {"kind": "engaged", "ref": f"item:{n}", "action": "click"},
        }
    ).encode()


LETTERS = "SELECT idempotency_key, reason, field_path, message FROM dead_letters ORDER BY 1"


_MERGE_AND_COUNT = """
import sys
from turnstream.adapters.clickhouse.store import Store
store = Store(sys.argv[1], sys.argv[2])
store.command("OPTIMIZE TABLE interactions FINAL")
print(store.query("SELECT count() FROM interactions").rows[0][0])
store.close()
"""


def test_edges_are_dead_letters_live_and_in_a_replay(deployment_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = [_line(n, at) for n, at in enumerate(CASES)]
    # The default skew: 22 hours ahead is inside a day, 26 hours is not.
    live = deployment_factory()
    live.worker.start()
    live.publish(lines)
    live.drain()
    counts = live.counts()
    assert counts["interactions"] == 2 and counts["dead_letters"] == 5
    assert live.dead_letters() == {"past_retention": 3, "ahead_of_clock": 2}
    letters = read_query(live.settings, LETTERS).rows
    expected = {f"edge-{n}": why for n, why in enumerate(CASES.values()) if why}
    assert {key: reason for key, reason, _, _ in letters} == expected
    assert all(path == "occurred_at" for _, _, path, _ in letters)
    assert any("keep 45 days" in message for _, _, _, message in letters)
    live.worker.stop()
    # The item 44 days old stays in the raw table through a merge that applies the TTL.
    # In a process of its own: chDB opens one path per process, and this one (an xdist
    # worker) may hold the session's store already. It runs beside the replay (another
    # store, another process).
    merge = subprocess.Popen(
        [sys.executable, "-c", _MERGE_AND_COUNT, live.settings.store.dsn,
         live.settings.store.database],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip

    events = tmp_path / "edges.jsonl"
    events.write_bytes(b"\n".join(lines) + b"\n")
    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    out = subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert "2 accepted, 5 dead letters" in " ".join(out.split())
    merged, errors = merge.communicate(timeout=300)
    assert merge.returncode == 0, errors
    assert merged.split() == ["2"]
    replayed = read_one(
        live.config, replay_dsn,
        "SELECT idempotency_key, reason, field_path FROM dead_letters ORDER BY 1",
    )  # fmt: skip
    assert [(r["idempotency_key"], r["reason"], r["field_path"]) for r in replayed] == [
        (key, reason, path) for key, reason, path, _ in letters
    ]


FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"
HOUR_AGO = (NOW - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
#: A presented list's delivered_at → the reason it is refused with (None: accepted). The
#: items occurred an hour ago: only delivered_at, which dates the exposure rows, is off.
DELIVERED = {
    "1850-01-01T00:00:00Z": "past_retention",
    "0001-01-01T00:00:00Z": "past_retention",
    "2350-01-01T00:00:00Z": "ahead_of_clock",
    (NOW - timedelta(days=50)).strftime("%Y-%m-%dT%H:%M:%SZ"): "past_retention",
    (NOW - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ"): None,
}


def _presented(n: int, delivered_at: str, turn: bool = False) -> bytes:
    presented = {
        "kind": "presented",
        "exposure_id": f"0190f5a2-7b3c-7def-8123-{n:012x}",
        "list_id": f"list-{n}",
        "list_kind": "search",
        "delivered_at": delivered_at,
        "visible_k": 1,
        "items": [{"pos": 1, "ref": f"item:{n}"}],
    }
    item: dict[str, object] = {
        "type": "turn" if turn else "interaction",
        "space_id": "acme",
        "idempotency_key": f"delivered-{n}",
        "profile_id": f"p-{n}",
        "source": "web",
        "occurred_at": HOUR_AGO,
    }
    if turn:
        item |= {"turn_id": f"t-{n}", "agent": "sales", "interactions": [presented]}
    else:
        item["interaction"] = presented
    return json.dumps(item).encode()


EXPOSED = "SELECT list_id FROM exposure_items FINAL ORDER BY 1"
DELIVERED_LETTERS = "SELECT idempotency_key, reason, field_path FROM dead_letters ORDER BY 1"


def test_a_delivered_at_past_the_edges_is_a_dead_letter_and_no_exposure(  # type: ignore[no-untyped-def]
    deployment_factory, tmp_path: Path
) -> None:
    lines = [_presented(n, at) for n, at in enumerate(DELIVERED)]
    # A turn with a list delivered in 2350: the turn stands, its interactions go.
    lines.append(_presented(len(lines), "2350-01-01T00:00:00Z", turn=True))
    live = deployment_factory(extra=FAST_TRIGGERS)
    live.worker.start()
    live.publish(lines)
    live.drain()
    live.drain_signals()
    expected = [
        (f"delivered-{n}", why, "interaction.delivered_at")
        for n, why in enumerate(DELIVERED.values())
        if why
    ] + [(f"delivered-{len(DELIVERED)}", "ahead_of_clock", "interactions.0.delivered_at")]
    letters = read_query(live.settings, DELIVERED_LETTERS).rows
    assert sorted(tuple(r) for r in letters) == sorted(expected)
    counts = live.counts()
    # The list delivered yesterday, and the turn without its interactions.
    assert counts["interactions"] == 1 and counts["turns"] == 1
    accepted = [f"list-{n}" for n, why in enumerate(DELIVERED.values()) if why is None]
    assert [r[0] for r in read_query(live.settings, EXPOSED).rows] == accepted
    live.worker.stop()

    events = tmp_path / "delivered.jsonl"
    events.write_bytes(b"\n".join(lines) + b"\n")
    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    replayed = read_one(live.config, replay_dsn, DELIVERED_LETTERS)
    assert sorted((r["idempotency_key"], r["reason"], r["field_path"]) for r in replayed) == sorted(
        expected
    )
    assert [r["list_id"] for r in read_one(live.config, replay_dsn, EXPOSED)] == accepted


KEYS = "SELECT dedup_key, _offset FROM idempotency_keys"
AHEAD = "2350-01-01T00:00:00Z"


def test_an_item_refused_at_an_edge_is_accepted_when_sent_again_with_a_fixed_clock(  # type: ignore[no-untyped-def]
    deployment_factory, tmp_path: Path
) -> None:
    # The same idempotency key each time, as the SDK mints it: refused ahead of the clock,
    # then sent again once the producer's clock is fixed, then sent again twice more.
    wrong, fixed = _line(0, AHEAD), _line(0, NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
    live = deployment_factory()
    live.worker.start()
    live.publish([wrong, wrong])
    live.drain()
    assert live.dead_letters() == {"ahead_of_clock": 1}  # the same bytes twice: one letter
    # The refusal took the digest of its bytes, not the item's key.
    assert [offset for _, offset in read_query(live.settings, KEYS).rows] == [0]
    live.publish([fixed])
    live.drain()
    counts = live.counts()
    assert counts["interactions"] == 1 and counts["dead_letters"] == 1
    assert len(read_query(live.settings, KEYS).rows) == 2
    # Accepted once: the same item again, or the wrong one again, is a duplicate.
    live.publish([fixed, wrong])
    live.drain()
    counts = live.counts()
    assert counts["interactions"] == 1 and counts["dead_letters"] == 1
    assert len(read_query(live.settings, KEYS).rows) == 2
    live.worker.stop()

    events = tmp_path / "resent.jsonl"
    events.write_bytes(b"\n".join([wrong, wrong, fixed, fixed, wrong]) + b"\n")
    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    out = subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert "1 accepted, 1 dead letters, 3 duplicates" in " ".join(out.split())
    replayed = read_one(live.config, replay_dsn, "SELECT count() AS n FROM interactions")
    assert replayed == [{"n": 1}]
