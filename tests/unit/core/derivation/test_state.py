"""Folding events into a person's evidence: idempotent, order-free, JSON round trip."""

from __future__ import annotations

import copy
import itertools
import json
from dataclasses import fields, replace

import pytest

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    E2,
    A,
    B,
    at,
    command,
    engaged,
    event,
    feedback,
    fold_all,
    item,
    outcome,
    preference,
    presented,
    seen,
)
from turnstream.core.derivation import ProfileState, SignalsConfig, derive, fold, inference_id
from turnstream.core.derivation.evidence import RefStats, SizeStats, ValueStats
from turnstream.core.derivation.state import (
    BucketState,
    _credit,
    _in_time_order,
    _Presentations,
    resolved,
)


def rich_events() -> list:
    """A bit of everything, in three buckets."""
    return [
        presented("p1", E1, [item(1, A, color="red", price=199.9), item(2, B, color="blue")]),
        seen("s1", E1, 2, t=1),
        engaged("c1", A, t=2),
        engaged("c2", A, "cart", t=3, session="s2"),
        feedback("f1", B, "dislike", ["color"], t=4),
        outcome("o1", A, "purchase", size="M", t=5),
        presented("p2", E2, [item(1, A, color="red")], t=6, for_="beneficiary:kid"),
        presented("p3", E2, [item(1, B)], page=2, t=7, for_="gift"),
        preference("pr1", t=8),
        command("d1", "delete", "inf_000000000000000000000000", t=9),
    ]


def test_folding_the_same_event_twice_changes_nothing() -> None:
    state = fold_all(rich_events())
    before = copy.deepcopy(state)
    for one in rich_events():
        assert fold(state, one, CONFIG) is False
    assert state == before


def test_presented_and_seen_in_either_order_give_the_same_state() -> None:
    events = [
        presented(
            "p1",
            E1,
            [item(pos, f"item_variant:acme:{pos}", color="red") for pos in (1, 2, 3, 4)],
            visible_k=1,
        ),
        seen("s1", E1, 3, t=2),
        seen("s2", E1, 2, t=3),
    ]
    states = [fold_all(order) for order in itertools.permutations(events)]
    assert all(s == states[0] for s in states)
    assert all(s.to_dict() == states[0].to_dict() for s in states)
    # red shown at pos 1..3: 1 + 0.630930 + 0.5
    red = states[0].buckets["self"].values["item_variant.color"]["red"]
    assert red.exposure_micro == 2_130_930


def test_state_round_trips_through_to_dict_and_json() -> None:
    state = fold_all(rich_events())
    derive(state, {}, CONFIG)
    assert state.inferences  # inferences round-trip too
    data = state.to_dict()
    assert ProfileState.from_dict(data) == state
    text = json.dumps(data)
    again = ProfileState.from_dict(json.loads(text))
    assert again == state
    assert json.dumps(again.to_dict()) == text


def test_an_engagement_credits_the_values_of_the_latest_presentation() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red")]),
            presented("p2", E2, [item(1, A, color="blue")], t=10),
            engaged("c1", A, "cart", t=20),
        ]
    )
    colors = resolved(state, CONFIG).buckets["self"].values["item_variant.color"]
    assert (colors["blue"].weighted_signal, colors["blue"].events) == (2.0, 1)
    assert (colors["red"].weighted_signal, colors["red"].events) == (0.0, 0)


def test_an_engagement_on_a_ref_never_presented_adds_to_its_events_only() -> None:
    state = fold_all([engaged("c1", A, "mention")])
    bucket = resolved(state, CONFIG).buckets["self"]
    assert bucket.values == {}
    assert (bucket.refs[A].engagements, bucket.refs[A].exposures) == (1, 0)


def test_feedback_credits_only_the_fields_named() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red", size="M")]),
            feedback("f1", A, "like", ["color"], t=1),
            feedback("f2", A, "dislike", ["item_variant.size"], t=2),
            feedback("f3", A, "like", None, t=3),
        ]
    )
    values = resolved(state, CONFIG).buckets["self"].values
    # color: +2 (f1) +2 (f3); size: -2 (f2) +2 (f3)
    assert values["item_variant.color"]["red"].weighted_signal == 4.0
    assert values["item_variant.size"]["M"].weighted_signal == 0.0
    assert values["item_variant.size"]["M"].events == 2
    assert resolved(state, CONFIG).buckets["self"].refs[A].feedback == 3


def test_outcome_weights_and_sizes() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red")]),
            outcome("o1", A, "purchase", size="M", t=1),
            outcome("o2", A, "delivery", t=2),
            outcome("o3", A, "return", size="M", reason="returned_for_size", t=3),
            outcome("o4", A, "kept", size="L", t=4),
        ]
    )
    bucket = resolved(state, CONFIG).buckets["self"]
    red = bucket.values["item_variant.color"]["red"]
    assert (red.weighted_signal, red.events) == (2.0, 3)  # 3 - 2 + 1; delivery adds nothing
    assert bucket.refs[A].outcomes == 4
    sizes = bucket.sizes["item_variant.size"]
    assert (sizes["M"].net, sizes["M"].events, sizes["L"].net) == (0, 2, 1)


def test_stated_kinds_add_no_evidence() -> None:
    state = fold_all(
        [
            preference("pr1"),
            event(
                "interaction",
                {"kind": "attribute", "attr": "person.size", "value": "M", "source": "stated"},
                "at1",
            ),
            event(
                "interaction",
                {"kind": "watch", "condition": {"price_lt": 100}, "consent_event": "ce"},
                "w1",
            ),
            event("interaction", {"kind": "unwatch", "watch_id": "w-1"}, "uw1"),
        ]
    )
    bucket = state.buckets["self"]
    assert (bucket.refs, bucket.values, bucket.sizes, bucket.pages) == ({}, {}, {}, {})
    assert bucket.event_counts == {"attribute": 1, "preference": 1, "unwatch": 1, "watch": 1}
    assert derive(state, {}, CONFIG) == []


def test_an_outcome_follows_its_exposure_token_to_the_exposures_bucket() -> None:
    token = f"nx1.{E1}.1.abcd"
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red")], for_="gift"),
            outcome("o1", A, "purchase", size="M", token=token, t=1),
        ]
    )
    assert "self" not in resolved(state, CONFIG).buckets
    assert resolved(state, CONFIG).buckets["gift"].sizes["item_variant.size"]["M"].net == 1
    assert (
        resolved(state, CONFIG).buckets["gift"].values["item_variant.color"]["red"].weighted_signal
        == 3.0
    )


def test_a_tool_result_token_never_attributes_an_outcome() -> None:
    token = f"nx1.{E1}.1.abcd"
    state = fold_all(
        [
            presented("p1", E1, [item(1, A, color="red")], for_="gift", method="tool_result"),
            outcome("o1", A, "purchase", size="M", token=token, t=1),
        ]
    )
    assert resolved(state, CONFIG).buckets["self"].sizes["item_variant.size"]["M"].net == 1
    assert resolved(state, CONFIG).buckets["self"].values == {}  # never presented in self
    assert resolved(state, CONFIG).buckets["gift"].sizes == {}


def test_sensitive_types_and_fields_keep_only_a_count() -> None:
    config = SignalsConfig(sensitive=frozenset({"health_plan", "recipe.diet"}))
    plan = "health_plan:acme:7"
    state = fold_all(
        [
            presented(
                "p1",
                E1,
                [
                    item(1, plan, network="x"),
                    item(2, "recipe:acme:1", diet="vegan", cuisine="thai"),
                ],
            ),
            engaged("c1", plan, t=1),
            engaged("c2", "recipe:acme:1", t=2),
            outcome("o1", plan, "purchase", t=3),
        ],
        config,
    )
    bucket = resolved(state, CONFIG).buckets["self"]
    assert bucket.sensitive_counts == {"health_plan": 3, "recipe.diet": 2}
    assert plan not in bucket.refs
    assert "recipe.diet" not in bucket.values
    assert "vegan" not in json.dumps(state.to_dict())
    assert bucket.values["recipe.cuisine"]["thai"].weighted_signal == 1.0


def test_erase_clears_evidence_but_keeps_tombstones() -> None:
    state = fold_all(rich_events())
    derive(state, {}, CONFIG)
    fold(state, command("d2", "delete", "inf_111111111111111111111111", t=20), CONFIG)
    fold(state, command("e1", "erase", t=21), CONFIG)
    assert resolved(state, CONFIG).buckets == {} and state.max_seen == {} and state.inferences == {}
    assert state.tombstones == {"inf_000000000000000000000000", "inf_111111111111111111111111"}
    assert derive(state, {}, CONFIG) == []
    # A redelivered event of before the erase brings nothing back.
    assert fold(state, engaged("c1", A, t=2), CONFIG) is False
    assert resolved(state, CONFIG).buckets == {}


def test_delete_marks_an_emitted_inference_deleted_at_the_commands_time() -> None:
    state = fold_all(
        [
            presented("p1", E1, [item(1, A)]),
            engaged("c1", A, t=1),
            engaged("c2", A, t=2),
        ]
    )
    [interest] = derive(state, {}, CONFIG)
    fold(state, command("d1", "delete", interest.id, t=30), CONFIG)
    stored = state.inferences[interest.id]
    assert (stored.status, stored.created_at, stored.updated_at) == ("deleted", at(2), at(30))


def test_evidence_is_still_measured_after_an_opt_out() -> None:
    state = fold_all([command("x1", "opt_out"), presented("p1", E1, [item(1, A)], t=1)])
    assert state.opted_out
    assert [e.ref for e in state.exposures("self")] == [A]


def test_events_of_another_profile_are_refused() -> None:
    state = fold_all([engaged("c1", A)])
    with pytest.raises(ValueError, match="another profile"):
        fold(state, engaged("c2", A, profile="p2"), CONFIG)


def test_the_folded_keys_are_bounded_to_the_latest() -> None:
    config = SignalsConfig(max_folded_keys=2)
    state = fold_all([engaged("c3", A, t=3), engaged("c1", A, t=1), engaged("c2", A, t=2)], config)
    assert set(state.folded.keys) == {"c2", "c3"}


def test_origin_events_keep_the_latest() -> None:
    config = SignalsConfig(max_origin_events=2)
    events = [presented("p1", E1, [item(1, A, color="red")])]
    events += [engaged(f"c{i}", A, t=i) for i in (3, 1, 2)]
    red = (
        resolved(fold_all(events, config), config)
        .buckets["self"]
        .values["item_variant.color"]["red"]
    )
    assert [key for _, key in red.origin] == ["c2", "c3"]
    assert red.events == 3


def test_ids_of_a_profile_are_deterministic() -> None:
    first, second = fold_all(rich_events()), fold_all(rich_events())
    assert derive(first, {}, CONFIG) == derive(second, {}, CONFIG)
    assert inference_id("acme", "p1", "self", "interest", "item_variant.ref", A) == inference_id(
        "acme", "p1", "self", "interest", "item_variant.ref", A
    )


def test_engagements_and_outcomes_give_the_same_evidence_in_any_order() -> None:
    token = f"nx1.{E2}.1.abcd"
    events = [
        presented("p1", E1, [item(1, A, color="red")]),
        presented("p2", E2, [item(1, A, color="blue")], t=10, for_="gift"),
        engaged("c1", A, "cart", t=5),
        feedback("f1", A, "like", ["color"], t=6),
        outcome("o1", A, "purchase", size="M", token=token, t=20),
    ]
    forward = resolved(fold_all(events), CONFIG)
    backward = resolved(fold_all(list(reversed(events))), CONFIG)
    assert forward.buckets == backward.buckets
    # The engagement at t=5 credits the presentation delivered before it (red), the
    # outcome the line its token names (blue, in the gift bucket).
    assert forward.buckets["self"].values["item_variant.color"]["red"].weighted_signal == 4.0
    assert forward.buckets["gift"].values["item_variant.color"]["blue"].weighted_signal == 3.0


def test_resolving_leaves_the_folded_state_as_it_was_and_equals_a_deep_copy() -> None:
    """``resolved`` credits a copy that shares the frozen pages: the same result as
    crediting a deep copy, twice in a row, and the folded state untouched."""
    state = fold_all(rich_events())
    before = copy.deepcopy(state)
    deep = replace(state, buckets=copy.deepcopy(state.buckets))
    shown = _Presentations()
    for e in _in_time_order(state.signals.values()):
        _credit(deep, e, CONFIG, shown)
    assert resolved(state, CONFIG) == deep
    assert resolved(state, CONFIG) == deep
    assert state == before
    # Every field of a bucket is copied by credit_copy: a new one must be added there.
    assert {f.name for f in fields(BucketState)} == {
        "pages", "refs", "values", "sizes", "sensitive_counts", "event_counts",
        "last_occurred_at",
    }  # fmt: skip


def test_a_stats_copy_holds_every_field() -> None:
    """Each stats ``copy`` names its fields in order: a field added must be added there."""
    for cls in (RefStats, SizeStats, ValueStats):
        original = cls(
            *(
                f.default_factory()  # type: ignore[misc]
                | {f.name}
                if f.default_factory is set
                else [f.name]
                if f.default_factory is list
                else f.name
                for f in fields(cls)
            )
        )
        assert cls.copy(original) == original
