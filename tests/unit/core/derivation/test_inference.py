"""Each inference kind, with hand-computed numbers, and the rules that bound them."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    E2,
    E3,
    PRIORS,
    TYPES,
    A,
    B,
    C,
    D,
    at,
    command,
    engaged,
    feedback,
    fold_all,
    item,
    outcome,
    preference,
    presented,
)
from turnstream.core.derivation import (
    Evidence,
    Inference,
    ProfileState,
    SignalsConfig,
    derive,
    fold,
    inference_id,
)
from turnstream.core.derivation.exposure import weight
from turnstream.core.derivation.shrinkage import posterior
from turnstream.core.derivation.state import resolved
from turnstream.core.derivation.taste import field_posterior
from turnstream.core.derivation.values import value_key

COLOR = "item_variant.color"


def four_colours(suffix: str = "", red_ref: str = A, **red: Any) -> list[dict[str, Any]]:
    """A red item at pos 1, then blue, green and white ones (refs with ``suffix``)."""
    return [
        item(1, red_ref, color="red", **red),
        item(2, B + suffix, color="blue"),
        item(3, C + suffix, color="green"),
        item(4, D + suffix, color="white"),
    ]


E4 = "0190f5a2-7b3c-7def-8123-456789abcde4"
R3 = "item_variant:acme:13"
R4 = "item_variant:acme:14"


def affinity_events(for_: str = "self", key: str = "", t0: float = 0, **red: Any) -> list:
    """Four lists of four colours, red at pos 1 (EE 4.0): A in lists 1 and 2, R3 and R4 in
    lists 3 and 4 (with other blue, green and white objects too). A clicked, opened and
    mentioned in s1, clicked, carted and opened in s2; R3 clicked in s3, R4 in s4:
    weighted signal 9 from 8 events, 3 engaged red objects over 4 sessions."""
    lists = [
        presented(
            f"{key}p{i}", eid, four_colours("0" * (i > 2), red_ref, **red), visible_k=4,
            t=t0 + 5 * i, for_=for_,
        )
        for i, (eid, red_ref) in enumerate(((E1, A), (E2, A), (E3, R3), (E4, R4)), 1)
    ]  # fmt: skip
    steps = [
        ("c1", "click", 20, "s1"),
        ("c2", "detail", 25, "s1"),
        ("c3", "mention", 27, "s1"),
        ("c4", "click", 30, "s2"),
        ("c7", "click", 31, "s3"),
        ("c8", "click", 32, "s4"),
        ("c5", "cart", 35, "s2"),
        ("c6", "detail", 37, "s2"),
    ]
    clicks = [
        engaged(
            f"{key}{k}",
            {"s3": R3, "s4": R4}.get(session, A),
            action,
            t=t0 + t,
            session=session,
            for_=for_,
        )
        for k, action, t, session in steps
    ]
    return lists + clicks


def by_kind(inferences: list[Inference]) -> dict[str, list[Inference]]:
    out: dict[str, list[Inference]] = {}
    for inf in inferences:
        out.setdefault(inf.kind, []).append(inf)
    return out


def affinities(state: ProfileState, priors: dict | None = None, **config: Any) -> list:
    settings = SignalsConfig(**config) if config else CONFIG
    found = derive(state, PRIORS if priors is None else priors, settings, TYPES)
    return by_kind(found).get("affinity", [])


def test_affinity_numbers() -> None:
    state = fold_all(affinity_events())
    [affinity] = affinities(state)
    assert (affinity.attr, affinity.value, affinity.polarity) == (COLOR, "red", "prefer")
    # Per colour: engagement per object and engaged session (A clicked, opened and
    # mentioned in s1, clicked, carted and opened in s2: 3.5 a session, counted 1 + 0.25 * 2
    # in each of its 2 sessions; R3 and R4 clicked: 1 each) over the objects' effective
    # exposure (A twice at pos 1, R3 and R4 once; B and B0 twice at pos 2, ...), scaled by
    # the space's prior over the field's mean prior (0.325).
    scale = {"red": 0.1 / 0.325, "other": 0.4 / 0.325}
    counts = {
        "red": (2 * 1.5 + 2 * 1.0, 4.0 * scale["red"]),
        **{
            colour: (0.0, 2 * 2 * weight(pos) * scale["other"])
            for colour, pos in (("blue", 2), ("green", 3), ("white", 4))
        },
    }
    expected = field_posterior(counts, CONFIG.taste_prior)
    assert expected is not None
    assert affinity.confidence == pytest.approx(expected.favour["red"], abs=1e-5)
    assert affinity.confidence >= CONFIG.affinity_min_confidence
    assert affinity.evidence == Evidence(
        effective_exposure=4.0, weighted_signal=9.0, events=3, sessions=4,
        lift=affinity.evidence.lift,
    )  # fmt: skip
    assert affinity.evidence.lift == pytest.approx(expected.lift["red"], abs=1e-4)
    assert affinity.weight == affinity.confidence  # lift > 2: as sure as it is
    assert affinity.origin_events == ("c1", "c2", "c3", "c4", "c7", "c8", "c5", "c6")
    assert (affinity.applies, affinity.status, affinity.purposes) == (
        "always",
        "active",
        ("personalization",),
    )
    assert (affinity.created_at, affinity.updated_at) == (at(37), at(37))
    assert affinity.id == inference_id("acme", "p1", "self", "affinity", COLOR, "red")


def test_what_the_space_engages_with_anyway_is_no_taste() -> None:
    # The space's priors say red is engaged with 30 times as much as the other colours:
    # the person's red clicks are what anyone would do, not a taste.
    state = fold_all(affinity_events())
    popular = {**PRIORS, (COLOR, "red"): 12.0}
    assert affinities(state, popular) == []
    assert len(affinities(state)) == 1


def test_one_heavy_event_is_not_as_sure_as_many_light_ones() -> None:
    light = posterior(6.0, 3.0, 0.5, 4.0, events=6)  # six clicks
    heavy = posterior(6.0, 3.0, 0.5, 4.0, events=2)  # a cart and ... a purchase's worth
    assert light.lift == heavy.lift
    assert light.confidence > heavy.confidence


def test_someone_who_engages_with_every_colour_likes_none() -> None:
    lists = affinity_events()[:4]
    even = fold_all(
        [
            *lists,
            *(
                engaged(f"e{r}{i}", r, t=40 + i, session=f"s{i}")
                for r in (A, B, C, D)
                for i in (1, 2, 3, 4)
            ),
        ]
    )
    assert affinities(even, {}) == []


def test_an_object_engaged_again_in_another_session_is_new_evidence() -> None:
    # A (red) clicked twice in s1, or once in s1 and once in s2: the second session counts
    # (engaged 2 against 1.25), so the second posterior is surer of red.
    lists = affinity_events()[:4]

    def person(second: str) -> ProfileState:
        clicks = [engaged("c1", A, t=20, session="s1"), engaged("c2", A, t=21, session=second)]
        return fold_all([*lists, *clicks, engaged("c3", R3, t=22, session="s3")])

    same = affinities(person("s1"), {}, affinity_min_confidence=0.01)
    again = affinities(person("s2"), {}, affinity_min_confidence=0.01)
    assert [a.value for a in again] == ["red"]
    assert not same or same[0].confidence < again[0].confidence


def test_clicks_on_objects_skipped_many_times_say_less() -> None:
    # The same two red objects engaged, once red was shown at the top of 4 lists, once
    # of 12: the 8 more lists where red was examined and skipped are negative evidence.
    red = "item_variant:acme:9"

    def person(lists: int) -> ProfileState:
        ids = [f"0190f5a2-7b3c-7def-8123-{i:012d}" for i in range(lists)]
        shown = [
            presented(f"l{i}", eid, [item(1, A if i % 2 else red, color="red"),
                                    item(2, B, color="blue"), item(3, C, color="green")],
                      visible_k=3, t=i)
            for i, eid in enumerate(ids)
        ]  # fmt: skip
        clicks = [
            engaged(f"c{i}", ref, t=100 + i, session=f"s{i}") for i, ref in ((1, A), (2, red))
        ]
        clicks += [engaged(f"d{i}", B, t=120 + i, session=f"s{i}") for i in (3,)]
        return fold_all([*shown, *clicks])

    few, many = (person(n) for n in (4, 12))
    sure = affinities(few, {}, affinity_min_confidence=0.01)
    less = affinities(many, {}, affinity_min_confidence=0.01)
    assert [a.value for a in sure] == ["red"]
    assert not less or less[0].confidence < sure[0].confidence


def test_a_colour_skipped_at_the_top_again_and_again_is_avoided() -> None:
    # A red object shown first in each of 8 lists, none engaged; the blue, green and
    # white objects of every list engaged over 4 sessions: a soft avoid on red, the
    # value, not per object.
    ids = [f"0190f5a2-7b3c-7def-8124-{i:012d}" for i in range(8)]
    shown = [
        presented(f"l{i}", eid, four_colours(str(i), A + str(i)), visible_k=4, t=i)
        for i, eid in enumerate(ids)
    ]
    clicks = [
        engaged(f"e{r}{i}", r + str(i), t=40 + i, session=f"s{i % 4}")
        for r in (B, C, D)
        for i in range(8)
    ]
    found = affinities(fold_all([*shown, *clicks]), {})
    [avoid] = [a for a in found if a.polarity == "avoid"]
    assert (avoid.attr, avoid.value, avoid.kind) == (COLOR, "red", "affinity")
    assert avoid.confidence >= CONFIG.avoid_min_confidence
    assert avoid.weight == pytest.approx(CONFIG.avoid_weight * avoid.confidence, abs=1e-6)
    assert avoid.evidence.events == 0 and avoid.evidence.effective_exposure == 8.0
    # Engaged once: no longer avoided.
    again = fold_all([*shown, *clicks, engaged("r1", A + "0", t=60, session="s9")])
    assert [a for a in affinities(again, {}) if a.polarity == "avoid"] == []


def test_affinity_min_sessions_is_a_setting() -> None:
    reds = [f"item_variant:acme:r{i}" for i in range(4)]
    lists = [
        presented(f"l{i}", eid, [item(1, ref, color="red"), item(2, B, color="blue"),
                                 item(3, C, color="green"), item(4, D, color="white")],
                  visible_k=4, t=i)
        for i, (eid, ref) in enumerate(zip((E1, E2, E3, E4), reds, strict=True))
    ]  # fmt: skip
    clicks = [engaged(f"x{i}", ref, t=40 + i) for i, ref in enumerate(reds)]
    state = fold_all([*lists, *clicks])  # four red objects, one session
    assert affinities(state, affinity_min_sessions=2) == []
    assert len(affinities(state)) == 1  # one session is enough by default


def test_only_taste_fields_get_affinities() -> None:
    shown = {"size": "M", "price_sale": 199.9, "in_stock": True, "sku": "x1"}
    priors = {
        **PRIORS,
        **{(f"item_variant.{name}", value_key(value)): 0.1 for name, value in shown.items()},
    }
    state = fold_all(affinity_events(**shown))
    assert [a.attr for a in affinities(state, priors)] == [COLOR]  # no size, price, stock, sku
    # Size is an attribute: a value from outcomes only, never an affinity.
    assert {i.kind for i in derive(state, priors, CONFIG, TYPES)} == {"affinity", "interest"}


def test_a_field_no_type_declares_is_never_a_taste() -> None:
    state = fold_all(affinity_events(material="wool"))
    assert [
        a.attr for a in affinities(state, {("item_variant.material", "wool"): 0.01, **PRIORS})
    ] == [COLOR]
    # And without a types document, nothing is a taste.
    red = fold_all(affinity_events())
    assert by_kind(derive(red, PRIORS, CONFIG, None)).get("affinity") is None


def test_no_affinity_below_a_threshold() -> None:
    two = fold_all(affinity_events()[:4])  # ws 2 < 3, one session
    assert affinities(two) == []
    lift_bar = fold_all(affinity_events())
    [affinity] = affinities(lift_bar)
    assert affinities(lift_bar, affinity_min_lift=affinity.evidence.lift + 0.1) == []


def test_lift_is_zero_without_exposure() -> None:
    events = [
        presented("p1", E1, [item(1, A, color="red")], visible_k=0),
        engaged("c1", A, t=1),
        engaged("c2", A, "cart", t=2),
    ]
    inferences = by_kind(derive(fold_all(events), PRIORS, CONFIG, TYPES))
    assert "affinity" not in inferences
    [interest] = inferences["interest"]
    assert (interest.evidence.effective_exposure, interest.evidence.lift) == (0.0, 0.0)


def test_interest_numbers() -> None:
    events = [presented("p1", E1, [item(2, B)], visible_k=3)]
    events += [engaged(f"c{i}", B, t=i) for i in (1, 2, 3)]
    [interest] = derive(fold_all(events), PRIORS, CONFIG, TYPES)
    assert (interest.kind, interest.attr, interest.value) == ("interest", "item_variant.ref", B)
    assert (interest.polarity, interest.weight, interest.confidence) == ("prefer", 0.6, 0.75)
    # EE 0.630930 (pos 2); ws 3; lift 3 / 0.630930 = 4.754886 (from the rounded EE)
    assert interest.evidence == Evidence(0.63093, 3.0, 3, 1, 4.754886, 1)
    assert interest.origin_events == ("c1", "c2", "c3")


def test_interest_weight_is_capped_at_one() -> None:
    events = [engaged(f"c{i}", B, t=i) for i in range(1, 7)]
    [interest] = derive(fold_all(events), PRIORS, CONFIG, TYPES)
    assert (interest.weight, interest.confidence) == (1.0, 0.857143)


def shown_three_times(ref: str, pos: int) -> list:
    """``ref`` at ``pos`` (visible) in three lists of its own, at t = 100, 110, 120."""
    filler = [item(p, f"item_variant:acme:f{p}") for p in range(1, pos)]
    return [
        presented(f"{ref}#{i}", eid, [*filler, item(pos, ref)], visible_k=pos, t=100 + 10 * i)
        for i, eid in enumerate(exposure_ids(ref))
    ]


def exposure_ids(ref: str) -> list[str]:
    """Three UUIDv7 exposure ids of ``ref``'s own."""
    tail = hashlib.sha256(ref.encode()).hexdigest()[:10]
    return [f"0190f5a2-7b3c-7def-8123-{i:02d}{tail}" for i in range(3)]


def negatives(state: ProfileState) -> list[Inference]:
    return [
        i
        for i in derive(state, PRIORS, CONFIG, TYPES)
        if i.kind == "implicit_negative" and i.value == C
    ]


def test_implicit_negative_numbers() -> None:
    [negative] = negatives(fold_all(shown_three_times(C, 2)))
    assert (negative.attr, negative.value, negative.polarity) == ("item_variant.ref", C, "avoid")
    assert (negative.weight, negative.confidence) == (0.5, 0.75)  # 1 - 1 / (1 + 3)
    assert negative.evidence == Evidence(effective_exposure=1.89279, exposures=3)
    assert negative.origin_events == (f"{C}#0", f"{C}#1", f"{C}#2")


def test_implicit_negative_thresholds() -> None:
    assert len(negatives(fold_all(shown_three_times(C, 3)))) == 1  # EE exactly 1.5
    assert negatives(fold_all(shown_three_times(C, 4))) == []  # EE 1.292030 < 1.5
    assert negatives(fold_all(shown_three_times(C, 1)[:2])) == []  # 2 exposures
    shown = shown_three_times(C, 1)
    assert negatives(fold_all([*shown, engaged("c1", C, t=150)])) == []
    assert negatives(fold_all([*shown, outcome("o1", C, "delivery", t=150)])) == []
    assert negatives(fold_all([*shown, feedback("f1", C, "like", t=150)])) == []


def size_events(for_: str = "self") -> list:
    return [
        outcome("o1", A, "purchase", size="M", t=1, for_=for_),
        outcome("o2", A, "kept", size="M", t=2, for_=for_),
        outcome("o3", B, "purchase", size="L", t=3, for_=for_),
        outcome("o4", B, "return", size="L", reason="returned_for_size", t=4, for_=for_),
        outcome("o5", C, "return", size="M", reason="changed_mind", t=5, for_=for_),
    ]


def test_attribute_size_numbers() -> None:
    [size] = derive(fold_all(size_events()), {}, CONFIG, TYPES)
    assert (size.kind, size.attr, size.value, size.polarity) == (
        "attribute",
        "item_variant.size",
        "M",
        None,
    )
    assert (size.applies, size.weight, size.confidence) == ("when_asked", 1.0, 0.666667)
    assert size.evidence == Evidence(weighted_signal=2.0, events=2, sessions=1)
    assert size.origin_events == ("o1", "o2")


def test_a_tie_between_sizes_infers_none() -> None:
    events = [outcome("o1", A, "purchase", size="M"), outcome("o2", B, "purchase", size="L")]
    assert derive(fold_all(events), PRIORS, CONFIG, TYPES) == []


def test_the_gift_bucket_yields_no_attribute() -> None:
    state = fold_all(size_events("gift"))
    assert resolved(state, CONFIG).buckets["gift"].sizes["item_variant.size"]["M"].net == 2
    assert derive(state, PRIORS, CONFIG, TYPES) == []


def test_a_beneficiarys_evidence_never_becomes_selfs() -> None:
    kid = "beneficiary:kid"
    state = fold_all([*affinity_events(kid), *size_events(kid)])
    inferences = derive(state, PRIORS, CONFIG, TYPES)
    assert {i.for_ for i in inferences} == {kid}
    assert {i.kind for i in inferences} == {"affinity", "interest", "attribute"}
    assert "self" not in state.buckets
    [affinity] = by_kind(inferences)["affinity"]
    assert affinity.id == inference_id("acme", "p1", kid, "affinity", COLOR, "red")
    assert affinity.id != inference_id("acme", "p1", "self", "affinity", COLOR, "red")


def test_sensitive_types_and_fields_give_no_inference_but_a_count() -> None:
    config = SignalsConfig(sensitive=frozenset({"health_plan", "item_variant.color"}))
    plan = "health_plan:acme:7"
    events = [*affinity_events(), *shown_three_times(plan, 1)]
    events += [engaged("h1", plan, t=60), engaged("h2", plan, "cart", t=61)]
    state = fold_all(events, config)
    assert {i.kind for i in derive(state, PRIORS, config, TYPES)} == {"interest"}  # A's
    assert resolved(state, CONFIG).buckets["self"].sensitive_counts == {
        "health_plan": 5,  # 3 presented + 2 engaged
        "item_variant.color": 24,  # 4 lists of 4 presented + 8 engaged
    }


def test_a_tombstoned_inference_never_comes_back() -> None:
    state = fold_all(affinity_events())
    [affinity] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["affinity"]
    fold(state, command("d1", "delete", affinity.id, t=40), CONFIG)
    deleted = [i for i in derive(state, PRIORS, CONFIG, TYPES) if i.id == affinity.id]
    assert [(i.status, i.created_at, i.updated_at) for i in deleted] == [
        ("deleted", at(37), at(40))
    ]
    # More of the same evidence: still deleted, unchanged.
    fold_all([engaged("c3", A, "cart", t=50), engaged("c4", A, t=51)], state=state)
    again = [i for i in derive(state, PRIORS, CONFIG, TYPES) if i.id == affinity.id]
    assert again == deleted


def test_a_corrected_inference_is_tombstoned_too() -> None:
    state = fold_all(affinity_events())
    [interest] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["interest"]
    fold(state, command("x1", "correct", interest.id, t=40), CONFIG)
    assert [i.status for i in derive(state, PRIORS, CONFIG, TYPES) if i.kind == "interest"] == [
        "deleted"
    ]


def test_a_tombstone_before_emission_is_never_active() -> None:
    doomed = inference_id("acme", "p1", "self", "affinity", COLOR, "red")
    early = fold_all([command("d0", "delete", doomed), *affinity_events()])
    statuses = {i.kind: i.status for i in derive(early, PRIORS, CONFIG, TYPES)}
    assert statuses == {"affinity": "deleted", "interest": "active"}
    # The same as when the delete comes after the inference was emitted.
    late = fold_all(affinity_events())
    derive(late, PRIORS, CONFIG, TYPES)
    fold(late, command("d0", "delete", doomed), CONFIG)
    assert [(i.kind, i.status) for i in derive(late, PRIORS, CONFIG, TYPES)] == [
        (i.kind, i.status) for i in derive(early, PRIORS, CONFIG, TYPES)
    ]


def test_erase_then_the_same_evidence_does_not_revive_a_tombstone() -> None:
    state = fold_all(affinity_events())
    [affinity] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["affinity"]
    fold(state, command("d1", "delete", affinity.id, t=40), CONFIG)
    fold(state, command("e1", "erase", t=41), CONFIG)
    fold_all(affinity_events(key="q", t0=50), state=state)
    statuses = [(i.kind, i.status) for i in derive(state, PRIORS, CONFIG, TYPES)]
    assert statuses == [("affinity", "deleted"), ("interest", "active")]


def test_opt_out_stops_derivation_and_withdraws_inferences() -> None:
    state = fold_all(affinity_events())
    assert derive(state, PRIORS, CONFIG, TYPES)
    fold(state, command("x1", "opt_out", t=40), CONFIG)
    fold_all(shown_three_times(C, 1), state=state)
    fold_all([engaged("c9", B, t=60), engaged("c10", B, t=61)], state=state)
    assert derive(state, PRIORS, CONFIG, TYPES) == []
    assert derive(state, {(COLOR, "red"): 1.25}, CONFIG) == []
    assert state.inferences == {}
    # Exposures are still measured after the opt-out.
    assert any(e.ref == C for e in state.exposures("self"))


def test_opt_out_gives_the_same_result_wherever_it_falls() -> None:
    early = fold_all([command("x0", "opt_out", t=-1), *affinity_events()])
    late = fold_all([*affinity_events(), command("x0", "opt_out", t=-1)])
    assert derive(early, PRIORS, CONFIG, TYPES) == derive(late, PRIORS, CONFIG, TYPES) == []
    assert early.exposures("self") == late.exposures("self")


def test_never_a_preference_and_never_hard() -> None:
    state = fold_all([preference("pr1"), *affinity_events(), *shown_three_times(C, 1)])
    inferences = derive(state, PRIORS, CONFIG, TYPES)
    assert {i.kind for i in inferences} == {"affinity", "interest", "implicit_negative"}
    assert {i.polarity for i in inferences} == {"prefer", "avoid"}


def test_created_at_stays_and_updated_at_follows_changes() -> None:
    state = fold_all(affinity_events())
    [first] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["affinity"]
    fold(state, presented("p5", E3.replace("e3", "e5"), four_colours("5", "item_variant:acme:15"),
                          visible_k=4, t=38), CONFIG)  # fmt: skip
    fold(state, engaged("c9", "item_variant:acme:15", t=40, session="s5"), CONFIG)
    [changed] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["affinity"]
    assert (changed.created_at, changed.updated_at) == (at(37), at(40))
    assert changed.confidence > first.confidence  # one more red object engaged: surer
    fold(state, preference("pr1", t=50), CONFIG)
    [same] = by_kind(derive(state, PRIORS, CONFIG, TYPES))["affinity"]
    assert same == changed
    assert first.id == same.id


def test_inference_ids_are_deterministic() -> None:
    iid = inference_id("acme", "p1", "self", "affinity", COLOR, "red")
    digest = hashlib.sha256(b"acme\x1fp1\x1fself\x1faffinity\x1fitem_variant.color\x1fred")
    assert iid == "inf_" + digest.hexdigest()[:24]
    assert re.fullmatch(r"inf_[0-9a-f]{24}", iid)
    parts = ["acme", "p1", "self", "affinity", COLOR, "red"]
    for i in range(len(parts)):
        changed = [*parts]
        changed[i] += "x"
        assert inference_id(*changed) != iid


def test_derivation_is_idempotent() -> None:
    state = fold_all([*affinity_events(), *shown_three_times(C, 1), *size_events()])
    first = derive(state, PRIORS, CONFIG, TYPES)
    assert derive(state, PRIORS, CONFIG, TYPES) == first
    other = fold_all([*affinity_events(), *shown_three_times(C, 1), *size_events()])
    assert derive(other, PRIORS, CONFIG, TYPES) == first
    assert [Inference.from_dict(i.to_dict()) for i in first] == first


def test_sizes_only_for_a_field_the_types_declare_an_attribute() -> None:
    state = fold_all(size_events())
    assert [i.attr for i in derive(state, {}, CONFIG, TYPES)] == ["item_variant.size"]
    assert derive(state, {}, CONFIG, None) == []  # without types, no inferred size
    shoes = fold_all([outcome("o1", "shoe:acme:1", "purchase", size="42", t=1)])
    assert derive(shoes, {}, CONFIG, TYPES) == []  # shoe.size is not declared


def test_implicit_negatives_only_for_objects_that_carry_a_taste() -> None:
    voucher = "voucher:acme:9"  # a type the document does not declare
    state = fold_all([*shown_three_times(C, 1), *shown_three_times(voucher, 1)])
    found = derive(state, {}, CONFIG, TYPES)
    assert [(i.kind, i.value) for i in found if i.kind == "implicit_negative"] == [
        ("implicit_negative", C)
    ]
    assert derive(state, {}, CONFIG, None) == []


def test_the_colour_of_a_loved_brands_objects_is_no_taste() -> None:
    # Every engaged object is of brand "b1", the brand of 3 of the 12 objects shown in each
    # of 6 lists; colours are spread evenly, but the 3 loved objects happen to be red.
    lists, clicks = [], []
    for i in range(6):
        eid = f"0190f5a2-7b3c-7def-8125-{i:012d}"
        shown = [
            item(pos, f"item_variant:acme:{i}-{pos}",
                 color=("red", "blue", "green", "white")[pos % 4] if pos > 3 else "red",
                 brand="b1" if pos <= 3 else f"b{2 + pos % 3}")
            for pos in range(1, 13)
        ]  # fmt: skip
        lists.append(presented(f"l{i}", eid, shown, visible_k=12, t=i))
        clicks += [
            engaged(f"c{i}{pos}", f"item_variant:acme:{i}-{pos}", t=40 + i, session=f"s{i}")
            for pos in (1, 2)
        ]
    found = affinities(fold_all([*lists, *clicks]), {})
    assert [(a.attr, a.value) for a in found if a.polarity == "prefer"] == [
        ("item_variant.brand", "b1")
    ]


def test_the_field_posterior_refuses_nonsense_and_says_nothing_without_evidence() -> None:
    with pytest.raises(ValueError, match="taste_prior"):
        field_posterior({"red": (1, 1.0), "blue": (0, 1.0)}, 1.0)
    with pytest.raises(ValueError, match="avoid_prior"):
        field_posterior({"red": (1, 1.0), "blue": (0, 1.0)}, 0.5, 0.0)
    assert field_posterior({"red": (3, 2.0)}, 0.5) is None  # one value: no contrast
    assert field_posterior({"red": (0, 2.0), "blue": (0, 2.0)}, 0.5) is None  # no engagement
    assert field_posterior({"red": (2, 0.0), "blue": (1, 0.0)}, 0.5) is None  # no exposure
    post = field_posterior({"red": (-5, 2.0), "blue": (3, 2.0), "x": (1, 1e9)}, 0.5)
    assert post is not None  # a negative count counts as none; a huge exposure is finite
    assert sum(post.favour.values()) + post.none == pytest.approx(1.0)
    assert all(0 <= p <= 1 for p in [*post.favour.values(), *post.avoid.values()])


def test_deleting_an_affinity_deletes_the_interests_resting_on_it() -> None:
    state = fold_all(affinity_events())
    found = by_kind(derive(state, PRIORS, CONFIG, TYPES))
    [affinity], [interest] = found["affinity"], found["interest"]  # A, red, engaged 6 times
    fold(state, command("d1", "delete", affinity.id, t=40), CONFIG)
    statuses = {i.id: i.status for i in derive(state, PRIORS, CONFIG, TYPES)}
    assert statuses == {affinity.id: "deleted", interest.id: "deleted"}
    # The same evidence again never infers the interest again.
    fold_all([engaged("c10", A, t=50, session="s7"), engaged("c11", A, t=51)], state=state)
    assert {i.id: i.status for i in derive(state, PRIORS, CONFIG, TYPES)} == statuses
    # An interest in an object of another colour stays.
    fold_all(
        [engaged("b1", B, t=60, session="s8"), engaged("b2", B, "cart", t=61, session="s8")],
        state=state,
    )
    active = [i for i in derive(state, PRIORS, CONFIG, TYPES) if i.status == "active"]
    assert [(i.kind, i.value) for i in active] == [("interest", B)]
