"""Time at the edges: an item dated past the raw retention or too far ahead is refused
with a reason that says so, the same in live (a batch's received time) and replay."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.catalog import RETENTION
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.ingest import Reason, Source, decide, judge
from turnstream.core.messages import dead_letter_for
from turnstream.core.rows import rows_for
from turnstream.core.time_edges import KEY_KEEP_DAYS, RAW_KEEP_DAYS, Edge, time_edge
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream.models.deadletter import DeadLetter

NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
AHEAD = timedelta(hours=24)
SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s"},
        "worker": {"occurred_at_max_ahead": 3600},
        "spaces": {"acme": {"features": ["signals", "turns"]}},
    }
)
SRC = Source("turnstream.interactions", 0, 7)


def _item(occurred_at: str, kind: str = "interaction") -> bytes:
    item: dict[str, object] = {
        "type": kind,
        "space_id": "acme",
        "idempotency_key": f"k-{occurred_at}",
        "profile_id": "p-1",
        "source": "web",
        "occurred_at": occurred_at,
    }
    if kind == "interaction":
        item["interaction"] = {"kind": "engaged", "ref": "item:1", "action": "click"}
    elif kind == "turn":
        item |= {"turn_id": "t1", "agent": "sales"}
    else:
        item |= {"outcome": "purchase", "ref": "item:1", "order_id": "o-1"}
    return json.dumps(item).encode()


def test_inside_the_window_is_no_edge_at_both_limits() -> None:
    # One millisecond after the oldest kept instant, and exactly the skew ahead.
    oldest = NOW - timedelta(days=RAW_KEEP_DAYS)
    assert time_edge(oldest + timedelta(milliseconds=1), NOW, AHEAD) is None
    assert time_edge(NOW + AHEAD, NOW, AHEAD) is None
    assert time_edge(NOW, NOW, timedelta(0)) is None


def test_the_oldest_kept_instant_itself_is_past_retention() -> None:
    # The TTL deletes a row at occurred_at + 45 days: that instant is already gone.
    edge = time_edge(NOW - timedelta(days=RAW_KEEP_DAYS), NOW, AHEAD)
    assert edge is not None and edge[0] == Edge.too_old
    assert "45 days" in edge[1] and "deleted on insert" in edge[1]


def test_one_microsecond_past_the_skew_is_ahead_of_clock() -> None:
    edge = time_edge(NOW + AHEAD + timedelta(microseconds=1), NOW, AHEAD)
    assert edge is not None and edge[0] == Edge.too_far_ahead
    assert "1 day 00:00:00 ahead" in edge[1] and "occurred_at_max_ahead" in edge[1]


@pytest.mark.parametrize(
    ("occurred_at", "reason", "says"),
    [
        ("1850-01-01T00:00:00Z", Reason.past_retention, "1850-01-01T00:00:00Z is 64,"),
        ("0001-01-01T00:00:00+05:00", Reason.past_retention, "0001-01-01T00:00:00+05:00"),
        ("2350-01-01T00:00:00Z", Reason.ahead_of_clock, "2350-01-01T00:00:00Z is 118,"),
        ("9999-12-31T23:59:59-05:00", Reason.ahead_of_clock, "check the producer's clock"),
    ],
)
def test_hostile_years_are_refused_whole_with_the_field_and_a_reason(
    occurred_at: str, reason: Reason, says: str
) -> None:
    for kind in ("interaction", "turn", "outcome"):
        decision = decide(_item(occurred_at, kind), SRC, SETTINGS, lambda _: None, NOW)
        assert decision.item is None, kind
        assert decision.refusal is not None
        assert decision.refusal.reason is reason
        assert decision.refusal.field_path == "occurred_at"
        assert says in decision.refusal.message
        # A dead letter row, never a raw row; the digest of its bytes as its key, not the
        # item's: a resend with a fixed clock must not be a duplicate.
        rows = rows_for(decision, SETTINGS, NOW)
        assert set(rows) == {"dead_letters", "idempotency_keys"}
        assert [r["dedup_key"] for r in rows["idempotency_keys"]] == [decision.taken_key]
        assert decision.taken_key != decision.dedup_key


def test_the_skew_is_the_configured_one() -> None:
    within = NOW + timedelta(minutes=59)
    past = NOW + timedelta(minutes=61)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    assert judge(_item(within.strftime(fmt)), SRC, SETTINGS, now=NOW).item is not None
    refused = judge(_item(past.strftime(fmt)), SRC, SETTINGS, now=NOW).refusal
    assert refused is not None and refused.reason is Reason.ahead_of_clock
    assert "01:01:00 after it was received" in refused.message
    # The default: a day.
    default = Settings.model_validate({"identity": {"secret": "s"}, "spaces": SETTINGS.spaces})
    assert judge(_item(past.strftime(fmt)), SRC, default, now=NOW).item is not None


def test_invalid_and_unknown_space_keep_their_own_reasons() -> None:
    # The edges judge valid items of known spaces: an older problem keeps its reason.
    bad = json.loads(_item("1850-01-01T00:00:00Z"))
    bad["space_id"] = "ghost"
    decision = judge(json.dumps(bad).encode(), SRC, SETTINGS, now=NOW)
    assert decision.refusal is not None and decision.refusal.reason is Reason.unknown_space


def test_the_dead_letter_names_the_reason() -> None:
    decision = judge(_item("2350-01-01T00:00:00Z"), SRC, SETTINGS, now=NOW)
    letter = DeadLetter.model_validate_json(dead_letter_for(decision, NOW))
    assert letter.reason == "ahead_of_clock" and letter.field_path == "occurred_at"
    assert letter.original_bytes() == _item("2350-01-01T00:00:00Z")


def test_live_judges_at_the_batch_received_time(tmp_path: Path) -> None:
    # The same line, judged at two received times: the batch's time decides.
    line = _item("2026-10-21T12:00:00Z")  # 44 days before NOW
    message = type("M", (), {"topic": SRC.topic, "partition": 0, "offset": 1,
                             "value": line, "key": None})()  # fmt: skip
    names = TopicNames("t")
    kept = prepare_batch([message], SETTINGS, names, 1 << 20, received_at=NOW)
    assert kept.judged[0].item is not None
    later = prepare_batch([message], SETTINGS, names, 1 << 20, received_at=NOW + timedelta(days=1))
    assert later.judged[0].refusal is not None
    assert later.judged[0].refusal.reason is Reason.past_retention
    assert [topic for topic, _, _ in later.sends[0]] == [names.dead_letters]


def test_the_rule_keeps_what_the_store_keeps() -> None:
    from turnstream.adapters.clickhouse.schema import MIGRATIONS

    assert RETENTION["interactions"].days == RAW_KEEP_DAYS
    ttl = f"TTL toDateTime(occurred_at) + INTERVAL {RAW_KEEP_DAYS} DAY"
    assert any(ttl in sql for m in MIGRATIONS for sql in m.statements)


def _presented(delivered_at: str, kind: str = "interaction") -> bytes:
    """An item received at ``NOW``, dated an hour before it, presenting a list delivered
    at ``delivered_at``: alone, or in a turn beside an engaged."""
    presented = {
        "kind": "presented",
        "exposure_id": "0190f5a2-7b3c-7def-8123-456789abcdef",
        "list_id": "l-1",
        "list_kind": "search",
        "delivered_at": delivered_at,
        "visible_k": 1,
        "items": [{"pos": 1, "ref": "item:1"}],
    }
    item = json.loads(_item("2026-12-04T11:00:00Z", kind))
    if kind == "interaction":
        item["interaction"] = presented
    else:
        item["interactions"] = [{"kind": "engaged", "ref": "item:1", "action": "click"}, presented]
    return json.dumps(item).encode()


FMT = "%Y-%m-%dT%H:%M:%S.%fZ"


@pytest.mark.parametrize(
    ("delivered_at", "reason", "says"),
    [
        ("1850-01-01T00:00:00Z", Reason.past_retention, "1850-01-01T00:00:00Z is 64,"),
        ("0001-01-01T00:00:00Z", Reason.past_retention, "keep 45 days after delivered_at"),
        ((NOW - timedelta(days=50)).strftime(FMT), Reason.past_retention, "is 50 days 00:00:00"),
        ((NOW - timedelta(days=45)).strftime(FMT), Reason.past_retention, "deleted on insert"),
        ("2350-01-01T00:00:00Z", Reason.ahead_of_clock, "2350-01-01T00:00:00Z is 118,"),
        ((NOW + timedelta(seconds=3601)).strftime(FMT), Reason.ahead_of_clock, "01:00:01 after"),
    ],
)
def test_a_delivered_at_past_the_edges_refuses_the_interaction_whole(
    delivered_at: str, reason: Reason, says: str
) -> None:
    # occurred_at is an hour ago: only delivered_at (which dates the exposure rows' TTL)
    # is past an edge.
    raw = _presented(delivered_at)
    decision = decide(raw, SRC, SETTINGS, lambda _: None, NOW)
    assert decision.item is None and decision.refusal is not None
    assert decision.refusal.reason is reason
    assert decision.refusal.field_path == "interaction.delivered_at"
    assert decision.refusal.message.startswith("interaction.delivered_at ")
    assert says in decision.refusal.message
    rows = rows_for(decision, SETTINGS, NOW)
    assert [r["dedup_key"] for r in rows["idempotency_keys"]] == [decision.taken_key]
    assert set(rows) == {"dead_letters", "idempotency_keys"}
    letter = DeadLetter.model_validate_json(dead_letter_for(decision, NOW))
    assert letter.reason == reason.value and letter.field_path == "interaction.delivered_at"
    assert letter.original_bytes() == raw


@pytest.mark.parametrize(
    "delivered_at",
    [
        NOW - timedelta(days=RAW_KEEP_DAYS) + timedelta(milliseconds=1),  # the oldest kept
        NOW + timedelta(seconds=3600),  # exactly the configured skew ahead
        NOW,
    ],
)
def test_a_delivered_at_inside_the_edges_is_accepted_at_both_limits(delivered_at: datetime) -> None:
    for kind in ("interaction", "turn"):
        decision = decide(_presented(delivered_at.strftime(FMT), kind), SRC, SETTINGS,
                          lambda _: None, NOW)  # fmt: skip
        assert decision.item is not None and decision.refusal is None, kind
        assert decision.keep_interactions
        kinds = [row["kind"] for row in rows_for(decision, SETTINGS, NOW)["interactions"]]
        assert kinds[-1] == "presented", kind


def test_a_turn_with_a_list_past_the_edges_stands_without_its_interactions() -> None:
    # As for an unknown field: the turn's own rows are kept, its interactions go, and the
    # dead letter names the list by its position among the producer's interactions.
    decision = decide(_presented("1850-01-01T00:00:00Z", "turn"), SRC, SETTINGS,
                      lambda _: None, NOW)  # fmt: skip
    assert decision.item is not None and decision.refusal is not None
    assert decision.refusal.reason is Reason.past_retention
    assert decision.refusal.field_path == "interactions.1.delivered_at"
    assert decision.refusal.message.endswith("(2 interactions refused)")
    assert not decision.keep_interactions
    rows = rows_for(decision, SETTINGS, NOW)
    assert "turns" in rows and "dead_letters" in rows and "interactions" not in rows


def test_without_a_received_time_no_delivered_at_is_judged() -> None:
    # Rule tests judge without a clock; the edges are the received time's.
    assert judge(_presented("1850-01-01T00:00:00Z"), SRC, SETTINGS).item is not None


@pytest.mark.parametrize(
    ("occurred_at", "kept_from"),
    [
        # Older than its receipt: the key's days start at the receipt.
        ((NOW - timedelta(days=RAW_KEEP_DAYS - 1)).isoformat(), NOW),
        # Dated ahead: accepted until its date plus the window, so kept from its date.
        ((NOW + timedelta(minutes=50)).isoformat(), NOW + timedelta(minutes=50)),
    ],
)
def test_an_accepted_item_s_key_outlives_the_window_its_date_is_accepted_in(
    occurred_at: str, kept_from: datetime
) -> None:
    decision = decide(_item(occurred_at), SRC, SETTINGS, lambda _: None, NOW)
    assert decision.item is not None and decision.refusal is None
    [row] = rows_for(decision, SETTINGS, NOW)["idempotency_keys"]
    assert row["kept_from"] == kept_from
    # When the key is deleted (KEY_KEEP_DAYS after that), the gate refuses the item.
    deleted = row["kept_from"] + timedelta(days=KEY_KEEP_DAYS)
    edge = time_edge(decision.item.occurred_at, deleted, AHEAD)
    assert edge is not None and edge[0] == Edge.too_old
