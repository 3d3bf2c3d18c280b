"""The raw window: evidence older than 45 days is settled into counts and dropped, and
derivation gives the same inferences from what is left."""

from __future__ import annotations

import copy
import json
from datetime import timedelta

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    E2,
    PRIORS,
    TYPES,
    A,
    B,
    at,
    engaged,
    feedback,
    fold_all,
    item,
    outcome,
    presented,
    seen,
)
from turnstream.core.derivation import SignalsConfig, derive, fold
from turnstream.core.derivation.state import resolved
from turnstream.core.derivation.window import cut_for, evidence_from, expire

DAY = 86_400.0
E3 = "0190f5a2-7b3c-7def-8123-456789abcde3"
TOKEN = f"nx1.{E1}.1.{'A' * 22}"


def _history() -> list:
    """Two sessions 60 days ago (red shown and chosen, a size bought), and one today."""
    old = [
        presented("p1", E1, [item(1, A, color="red", size="M"), item(2, B, color="blue")],
                  visible_k=1, t=0),
        seen("v1", E1, 2, t=5),
        engaged("c1", A, t=10),
        engaged("c2", A, "cart", t=20, session="s2"),
        feedback("f1", B, "dislike", ["color"], t=30, session="s2"),
        outcome("o1", A, "purchase", size="M", t=40, token=TOKEN),
        outcome("o2", A, "kept", size="M", t=50, session="s2"),
    ]  # fmt: skip
    now = 60 * DAY
    recent = [
        presented("p2", E2, [item(1, A, color="red"), item(2, B, color="blue")], t=now),
        engaged("c3", A, t=now + 10, session="s3"),
        engaged("c4", A, "detail", t=now + 20, session="s3"),
    ]
    return old + recent


def test_expired_evidence_is_settled_into_counts_and_dropped() -> None:
    state = fold_all(_history())
    before = resolved(state, CONFIG)
    inferences = derive(copy.deepcopy(state), PRIORS, CONFIG, TYPES)
    cut = cut_for(state.newest_occurred_at, CONFIG)  # type: ignore[arg-type]
    assert cut == at(15 * DAY + 20)
    done = expire(state, cut, CONFIG)
    assert (done.signals, done.pages) == (5, 1) and done.keys == 7
    # Nothing older than the window is left: no page, no payload, no key, no seen mark.
    assert evidence_from(state) == at(60 * DAY)
    assert all(p.exposure_id == E2 for b in state.buckets.values() for p in b.all_pages())
    assert set(state.signals) == {"c3", "c4"} and state.max_seen == {}
    assert all(when >= cut for when in state.folded.keys.values())
    assert E1 not in json.dumps([p.to_dict() for b in state.buckets.values()
                                 for p in b.all_pages()])  # fmt: skip
    # What derivation needs lives on in the counts: the same view, the same inferences.
    after = resolved(state, CONFIG)
    for name, bucket in before.buckets.items():
        assert after.buckets[name].refs == bucket.refs
        assert after.buckets[name].values == bucket.values
        assert after.buckets[name].sizes == bucket.sizes
    assert derive(state, PRIORS, CONFIG, TYPES) == inferences
    assert {i.kind for i in inferences} >= {"attribute", "interest"}


def test_expiring_twice_changes_nothing_and_a_saved_state_reads_back() -> None:
    state = fold_all(_history())
    cut = cut_for(state.newest_occurred_at, CONFIG)  # type: ignore[arg-type]
    expire(state, cut, CONFIG)
    again = copy.deepcopy(state)
    assert not expire(again, cut, CONFIG)
    assert again == state
    reread = type(state).from_dict(json.loads(json.dumps(state.to_dict())))
    assert reread.to_dict() == state.to_dict()
    # A page shown later than the dropped one becomes the object's latest.
    fold(reread, presented("p3", E3, [item(1, A, color="green")], t=61 * DAY), CONFIG)
    assert reread.buckets["self"].refs[A].latest == (E3, 1, 1)


def test_an_event_older_than_the_window_is_not_folded() -> None:
    state = fold_all([engaged("c9", A, t=60 * DAY)])
    assert fold(state, engaged("late", A, t=10 * DAY), CONFIG) is False
    assert "late" not in state.folded and set(state.signals) == {"c9"}
    # Within the window it is.
    assert fold(state, engaged("ok", A, t=16 * DAY), CONFIG) is True
    wide = SignalsConfig(raw_window_days=60)
    assert fold(state, engaged("late", A, t=10 * DAY), wide) is True


def test_the_engine_expires_before_it_derives() -> None:
    from turnstream.core.derivation.engine import SignalsEngine

    engine = SignalsEngine(CONFIG, types_for=lambda _space: TYPES)
    for one in _history():
        engine.offer(one, one.occurred_at)
    [derivation] = engine.fire_all()
    assert evidence_from(derivation.state) == at(60 * DAY)
    assert {e.exposure_id for e in derivation.exposures} == {E2}
    assert derivation.state.newest_occurred_at - at(60 * DAY) < timedelta(minutes=1)
