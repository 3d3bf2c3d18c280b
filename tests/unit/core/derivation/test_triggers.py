"""When the pending items of a session fire derivation."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from tests.unit.core.derivation.builders import CONFIG, at
from turnstream.core.derivation import (
    PendingSession,
    SignalsConfig,
    add_pending,
    due,
    next_due_at,
    split_due,
)


def pending_at(*seconds: float) -> PendingSession:
    pending = None
    for i, s in enumerate(seconds):
        pending = add_pending(pending, at(s), f"k{i}", profile_id="p1", session="s1")
    assert pending is not None
    return pending


def test_nothing_fires_before_sixty_seconds_of_quiet() -> None:
    pending = pending_at(0)
    assert not due(pending, at(0), CONFIG)
    assert not due(pending, at(59.999), CONFIG)


def test_fires_at_exactly_sixty_seconds_of_quiet() -> None:
    pending = pending_at(0, 20)
    assert not due(pending, at(79), CONFIG)
    assert due(pending, at(80), CONFIG)
    assert next_due_at(pending, CONFIG) == at(80)


def test_fires_at_three_hundred_seconds_since_the_oldest_while_items_keep_arriving() -> None:
    arrivals = list(range(0, 300, 30))  # 0, 30, ..., 270: never 60 s of quiet
    pending = None
    for i, s in enumerate(arrivals):
        pending = add_pending(pending, at(s), f"k{i}", profile_id="p1", session="s1")
        assert not due(pending, at(s + 29), CONFIG)
    assert pending is not None
    assert not due(pending, at(299), CONFIG)
    assert due(pending, at(300), CONFIG)
    assert next_due_at(pending, CONFIG) == at(300)  # not 270 + 60
    assert pending.count == 10


def test_nothing_pending_never_fires() -> None:
    assert not due(None, at(10_000), CONFIG)
    empty = PendingSession("p1", "s1", at(0), at(0), 0, ())
    assert not due(empty, at(10_000), CONFIG)


def test_fires_once_then_the_session_is_no_longer_pending() -> None:
    table = {("p1", "s1"): pending_at(0), ("p1", "s2"): pending_at(50)}
    fired, rest = split_due(table, at(60), CONFIG)
    assert [(p.profile_id, p.session, p.count) for p in fired] == [("p1", "s1", 1)]
    assert list(rest) == [("p1", "s2")]
    fired_again, rest_again = split_due(rest, at(61), CONFIG)
    assert fired_again == [] and rest_again == rest


def test_a_key_already_pending_counts_once() -> None:
    pending = pending_at(0)
    same = add_pending(pending, at(40), "k0")
    assert same == pending
    assert due(same, at(60), CONFIG)


def test_out_of_order_receipts_keep_the_oldest_and_the_newest() -> None:
    pending = pending_at(100, 40, 70)
    assert (pending.first_received, pending.last_received) == (at(40), at(100))
    assert pending.keys == ("k0", "k1", "k2")


def test_thresholds_come_from_the_config() -> None:
    quick = SignalsConfig(quiet_seconds=5, oldest_pending_seconds=20)
    pending = pending_at(0, 4, 8, 12, 16)
    assert not due(pending, at(19), quick)
    assert due(pending, at(20), quick)
    assert due(pending_at(0), at(5), quick)


def test_a_new_pending_session_needs_its_owner() -> None:
    with pytest.raises(ValueError, match="profile_id and session"):
        add_pending(None, at(0), "k0")


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError, match="zone"):
        add_pending(None, datetime(2026, 9, 29, 14, 0), "k0", profile_id="p1", session="s1")


def test_pending_round_trips_through_json() -> None:
    pending = pending_at(0, 30)
    again = PendingSession.from_dict(json.loads(json.dumps(pending.to_dict())))
    assert again == pending
