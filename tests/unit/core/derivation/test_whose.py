"""Whose evidence it is: an outcome's ``for``, the disposable gift bucket, and an erase
that leaves the same state whatever order the person's events arrive in."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    E2,
    PRIORS,
    TYPES,
    A,
    B,
    command,
    engaged,
    feedback,
    fold_all,
    item,
    outcome,
    preference,
    presented,
    seen,
)
from turnstream.core.derivation import SignalsConfig, derive, fold
from turnstream.core.derivation.state import GIFT, ProfileState, dispose_gift, resolved

KID = "beneficiary:kid"
DAY = 86_400.0
#: A token the state reads by line (derivation only ever sees verified ones).
TOKEN = f"nx1.{E1}.1.{'A' * 22}"


def _sizes(whose: str | None, token: str | None = None) -> list:
    return [
        presented("p1", E1, [item(1, A, color="red", size="M")], t=0),
        outcome("o1", A, "purchase", size="S", t=10, whose=whose, token=token),
        outcome("o2", A, "kept", size="S", t=20, whose=whose, token=token),
    ]


def test_an_outcome_for_a_dependent_never_becomes_the_buyers_size() -> None:
    # The dependent's purchases were shown on the buyer's own list (the token names it).
    state = fold_all(_sizes(KID, token=TOKEN))
    view = resolved(state, CONFIG)
    assert view.buckets[KID].sizes["item_variant.size"]["S"].net == 2
    assert "item_variant.size" not in view.buckets["self"].sizes
    inferences = derive(state, PRIORS, CONFIG, TYPES)
    sizes = [i for i in inferences if i.kind == "attribute"]
    assert [(i.for_, i.value) for i in sizes] == [(KID, "S")]


def test_an_outcome_without_for_follows_its_token_then_self() -> None:
    state = fold_all(_sizes(None, token=TOKEN))
    [size] = [i for i in derive(state, PRIORS, CONFIG, TYPES) if i.kind == "attribute"]
    assert (size.for_, size.value) == ("self", "S")


def test_an_outcome_for_a_dependent_credits_their_taste_not_the_buyers() -> None:
    events = [presented("p1", E1, [item(1, A, color="red")], t=0)]
    events += [outcome(f"o{i}", A, "purchase", t=10 + i, whose=KID, token=TOKEN) for i in range(3)]
    view = resolved(fold_all(events), CONFIG)
    assert view.buckets[KID].values["item_variant.color"]["red"].signal_micro == 9_000_000
    assert view.buckets["self"].values["item_variant.color"]["red"].signal_micro == 0


def _gift_events() -> list:
    return [
        presented("g1", E2, [item(1, B, color="blue")], t=0, for_=GIFT),
        feedback("g2", B, "like", t=60, for_=GIFT),
        outcome("g3", B, "purchase", size="P", t=120, whose=GIFT),
        presented("s1", E1, [item(1, A, color="red")], t=200),
        engaged("s2", A, t=210),
    ]


def test_the_gift_bucket_stays_while_the_gift_is_chosen() -> None:
    state = fold_all([*_gift_events(), engaged("s3", A, t=120 + 7 * DAY)])
    assert dispose_gift(state, CONFIG) is False
    assert GIFT in state.buckets
    assert {k for k, e in state.signals.items() if e.for_ == GIFT} == {"g2", "g3"}


def test_the_gift_bucket_goes_past_gift_days_and_self_is_untouched() -> None:
    state = fold_all([*_gift_events(), engaged("s3", A, t=121 + 7 * DAY)])
    assert dispose_gift(state, CONFIG) is True
    assert GIFT not in state.buckets
    assert set(state.signals) == {"s2", "s3"}
    assert "self" in state.buckets and state.buckets["self"].refs[A].exposures == 1
    assert GIFT not in resolved(state, CONFIG).buckets
    # The setting decides the window.
    again = fold_all([*_gift_events(), engaged("s3", A, t=121 + 7 * DAY)])
    assert dispose_gift(again, SignalsConfig(gift_days=8)) is False


def test_a_gift_outcome_by_token_alone_goes_with_the_bucket() -> None:
    token = f"nx1.{E2}.1.{'A' * 22}"
    events = [
        presented("g1", E2, [item(1, B, color="blue")], t=0, for_=GIFT),
        outcome("g3", B, "purchase", t=120, token=token),  # no for: the token's bucket
        engaged("s3", A, t=8 * DAY),
    ]
    state = fold_all(events)
    assert dispose_gift(state, CONFIG) is True
    # Not credited to the buyer once the gift's page is gone.
    assert set(state.signals) == {"s3"}


def test_the_engine_disposes_of_the_gift_at_derivation() -> None:
    from turnstream.core.derivation.engine import SignalsEngine

    engine = SignalsEngine(CONFIG, types_for=lambda _space: TYPES)
    events = [*_gift_events(), engaged("s3", A, t=8 * DAY)]
    for one in events:
        engine.offer(one, one.occurred_at)
    [derivation] = engine.fire_all()
    assert GIFT not in derivation.state.buckets
    assert all(e.for_ != GIFT for e in derivation.exposures)


# -- erase, in any order ---------------------------------------------------------------

#: One person's events before the erase (t < 1000): every kind, three buckets, commands.
_BEFORE = [
    presented("p1", E1, [item(1, A, color="red", size="M"), item(2, B, color="blue")], t=0),
    seen("v1", E1, 2, t=5),
    engaged("c1", A, t=10),
    engaged("c2", A, "cart", t=20, session="s2"),
    feedback("f1", B, "dislike", ["color"], t=30),
    outcome("o1", A, "purchase", size="M", t=40, token=TOKEN),
    outcome("o2", A, "kept", size="M", t=45, whose=KID),
    presented("p2", E2, [item(1, A, color="red")], t=50, for_=KID),
    presented("p3", E2, [item(1, B)], page=2, t=60, for_=GIFT),
    preference("pr1", t=70),
    command("d1", "delete", "inf_000000000000000000000000", t=80),
    command("x1", "opt_out", t=90),
]
_ERASE = command("e1", "erase", t=1000)
_AFTER = [
    presented("p9", "0190f5a2-7b3c-7def-8123-456789abcde9", [item(1, B, color="green")], t=1100),
    engaged("c9", B, t=1110),
    command("d9", "delete", "inf_999999999999999999999999", t=1120),
]


def _state(order: list) -> ProfileState:
    state = ProfileState()
    for one in order:
        fold(state, one, CONFIG)
    return state


@settings(max_examples=200, deadline=None)
@given(st.permutations([*_BEFORE, _ERASE]), st.sets(st.integers(0, len(_BEFORE) - 1)))
def test_an_erase_leaves_the_same_state_in_any_order(order: list, again: set[int]) -> None:
    # Redeliveries of some events, anywhere after their first delivery, change nothing.
    events = [*order, *(_BEFORE[i] for i in sorted(again))]
    reference = _state([*_BEFORE, _ERASE])
    state = _state(events)
    assert state.to_dict() == reference.to_dict()
    assert state.buckets == {} and state.signals == {} and state.max_seen == {}
    assert state.tombstones == {"inf_000000000000000000000000"} and state.opted_out
    assert derive(state, PRIORS, CONFIG, TYPES) == []


@settings(max_examples=200, deadline=None)
@given(st.permutations([*_BEFORE, _ERASE, *_AFTER]))
def test_nothing_before_an_erase_survives_it_in_any_order(order: list) -> None:
    state = _state(order)
    erased_at = _ERASE.occurred_at
    pages = [p for b in state.buckets.values() for p in b.all_pages()]
    assert all(p.occurred_at > erased_at for p in pages)
    assert all(e.occurred_at > erased_at for e in state.signals.values())
    assert state.erased_through == erased_at
    # What came after the erase and arrived after it is kept.
    if order.index(_ERASE) < min(order.index(e) for e in _AFTER):
        assert set(state.signals) == {"c9"} and len(pages) == 1
    # Commands are not evidence: tombstones and the opt-out hold in any order.
    assert state.tombstones >= {"inf_000000000000000000000000", "inf_999999999999999999999999"}
    assert state.opted_out


def test_the_erase_mark_survives_a_saved_state() -> None:
    state = _state([_ERASE])
    again = ProfileState.from_dict(state.to_dict())
    assert again.erased_through == _ERASE.occurred_at
    assert fold(again, engaged("late", A, t=999), CONFIG) is True
    assert again.signals == {} and again.buckets == {}
    assert fold(again, engaged("new", A, t=1001), CONFIG) is True
    assert set(again.signals) == {"new"}
    assert _ERASE.occurred_at - timedelta(seconds=1) < again.newest_occurred_at
