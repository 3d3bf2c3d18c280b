"""The engine with an injected clock: when derivation fires, and that it fires once."""

from __future__ import annotations

from collections.abc import Sequence

from tests.unit.core.derivation.builders import (
    CONFIG,
    E1,
    TYPES,
    B,
    at,
    engaged,
    event,
    item,
    presented,
)
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.derivation.inference import inference_id
from turnstream.core.derivation.state import ProfileState
from turnstream.models.object_types import parse_types

CLICK = {"kind": "engaged", "ref": "item_variant:acme:1", "action": "click"}


def _engine() -> SignalsEngine:
    return SignalsEngine(CONFIG, types_for=lambda _space: TYPES)


def test_the_types_sensitive_fields_keep_only_a_count() -> None:
    labels = {"pt": "x", "en": "x", "es": "x"}
    types = parse_types(
        {"types": {"item_variant": {"fields": {
            "color": {"labels": labels, "role": "taste"},
            "fit": {"labels": labels, "role": "taste", "sensitive": True},
        }}}}
    )  # fmt: skip
    engine = SignalsEngine(CONFIG, types_for=lambda space: types if space == "acme" else None)
    assert "item_variant.fit" in engine.config_for("acme").sensitive
    assert "item_variant.fit" not in engine.config_for("lumen").sensitive
    engine.offer(presented("p1", E1, [item(1, B, color="red", fit="slim")]), at(0))
    [derived] = engine.fire_all()
    bucket = derived.state.buckets["self"]
    assert bucket.sensitive_counts == {"item_variant.fit": 1}
    assert set(bucket.values) == {"item_variant.color"}


def test_nothing_fires_before_a_minute_of_quiet_then_once() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "k1", t=0), at(0))
    engine.offer(event("interaction", CLICK, "k2", t=20), at(20))
    assert engine.fire_due(at(79.999)) == []  # 59.999 s after the newest item
    fired = engine.fire_due(at(80))
    assert [d.profile_id for d in fired] == ["p1"]
    assert engine.fire_due(at(80)) == [] and engine.fire_due(at(10_000)) == []
    assert engine.pending == {} and engine.held == {}


def test_five_minutes_of_pending_fire_even_without_quiet() -> None:
    engine = _engine()
    fired_at = None
    for i in range(12):  # an item every 30 s: never a minute of quiet
        t = 30.0 * i
        if engine.fire_due(at(t)):
            fired_at = t
            break
        engine.offer(event("interaction", CLICK, f"k{i}", t=t), at(t))
    assert fired_at == 300.0
    assert engine.pending == {}
    engine.offer(event("interaction", CLICK, "late", t=300), at(300))
    assert engine.fire_due(at(359)) == []  # a new pending list, with its own clock
    assert len(engine.fire_due(at(360))) == 1


def test_sessions_fire_independently() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", t=0, session="s1"), at(0))
    engine.offer(event("interaction", CLICK, "b", t=50, session="s2"), at(50))
    assert engine.due_sessions(at(60)) == [("acme", "p1", "s1")]
    engine.fire_due(at(60))
    assert list(engine.pending) == [("acme", "p1", "s2")]


def test_firing_twice_on_the_same_evidence_changes_nothing() -> None:
    engine = _engine()
    for i in range(3):
        engine.offer(event("interaction", CLICK, f"k{i}", t=i, session=f"s{i}"), at(i))
    first = engine.fire_all()
    interest = inference_id("acme", "p1", "self", "interest", "item_variant.ref", CLICK["ref"])
    assert interest in {i.id for i in first[0].inferences}
    # The same events again (a redelivery) fold to nothing new.
    for i in range(3):
        engine.offer(event("interaction", CLICK, f"k{i}", t=i, session=f"s{i}"), at(100 + i))
    again = engine.fire_all()
    assert again[0].inferences == first[0].inferences


def test_a_rule_that_stops_holding_is_retracted() -> None:
    engine = _engine()
    ids = ["0190f5a2-7b3c-7def-8123-4567890000a1", "0190f5a2-7b3c-7def-8123-4567890000a2",
           "0190f5a2-7b3c-7def-8123-4567890000a3"]  # fmt: skip
    for n, exposure in enumerate(ids):  # shown three times at pos 1, never chosen
        engine.offer(presented(f"p{n}", exposure, [item(1, B)], t=n, session=f"s{n}"), at(n))
    [first] = engine.fire_all()
    negative = inference_id("acme", "p1", "self", "implicit_negative", "item_variant.ref", B)
    assert {i.id: i.status for i in first.inferences}[negative] == "active"
    engine.offer(engaged("c1", B, t=10), at(10))  # now chosen: no longer a negative
    [second] = engine.fire_all()
    retracted = {i.id: i for i in second.inferences}[negative]
    assert retracted.status == "retracted" and retracted.weight == 0.0


def test_a_deleted_inference_is_listed_as_deleted() -> None:
    engine = _engine()
    for i in range(2):
        engine.offer(event("interaction", CLICK, f"k{i}", t=i), at(i))
    [first] = engine.fire_all()
    active = [i for i in first.inferences if i.status == "active"]
    assert active
    delete = {"command": "delete", "inference_id": active[0].id}
    engine.offer(event("command", delete, "del-1", t=10), at(10))
    [second] = engine.fire_all()
    by_id = {i.id: i for i in second.inferences}
    assert by_id[active[0].id].status == "deleted"


def test_a_partition_handed_over_takes_its_pending_sessions() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", profile="p1"), at(0), position=("t", 0))
    engine.offer(event("interaction", CLICK, "b", profile="p2"), at(0), position=("t", 1))
    assert engine.forget(lambda position: position == ("t", 1)) == 1
    assert list(engine.pending) == [("acme", "p1", "s1")]
    assert engine.held_positions() == [("t", 0)]
    assert engine.oldest_held() == {"t": 0}


def test_an_erased_person_leaves_nothing_pending_and_no_state() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", session="s1"), at(0))
    engine.offer(event("interaction", CLICK, "b", session="s2"), at(50))
    engine.offer(event("command", {"command": "erase"}, "e", session="s1"), at(1))
    [derivation] = engine.fire_due(at(61))  # s1 is due, s2 is not
    assert derivation.erased and derivation.inferences == [] and derivation.exposures == []
    assert engine.pending == {} and engine.held == {} and engine.states == {}


def test_one_profile_id_in_two_spaces_is_two_people() -> None:
    engine = _engine()
    for space in ("acme", "other"):
        for i in range(2):
            engine.offer(event("interaction", CLICK, f"{space}{i}", space=space, t=i), at(i))
    fired = engine.fire_due(at(61))
    assert sorted((d.space_id, d.profile_id) for d in fired) == [("acme", "p1"), ("other", "p1")]
    assert set(engine.states) == {("acme", "p1"), ("other", "p1")}
    for d in fired:
        assert d.inferences and {i.space_id for i in d.inferences} == {d.space_id}


def test_an_erase_in_one_space_leaves_the_same_id_in_another() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", space="acme"), at(0))
    engine.offer(event("interaction", CLICK, "b", space="other"), at(0))
    engine.offer(event("command", {"command": "erase"}, "e", space="acme"), at(0))
    fired = {d.space_id: d for d in engine.fire_due(at(60))}
    assert fired["acme"].erased and not fired["other"].erased
    assert set(engine.states) == {("other", "p1")}


def test_states_are_loaded_by_space_and_profile() -> None:
    asked: list[list[tuple[str, str]]] = []
    engine = SignalsEngine(CONFIG, load_states=lambda people: asked.append(list(people)) or {})
    engine.offer(event("interaction", CLICK, "a", space="other"), at(0))
    engine.fire_all()
    assert asked == [[("other", "p1")]]


def test_a_firing_loads_the_states_it_lacks_in_one_call() -> None:
    # One store query per person was the derivation driver's bottleneck (~5 ms of chDB
    # CPU each, 27 of 55 CPU-seconds in bench/derivation.py): a firing asks once.
    saved = {("acme", "p0"): ProfileState(space_id="acme", profile_id="p0")}
    asked: list[list[tuple[str, str]]] = []

    def load_states(people: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ProfileState]:
        asked.append(list(people))
        return {p: saved[p] for p in people if p in saved}

    engine = SignalsEngine(CONFIG, load_states=load_states)
    for n in range(50):
        for session in ("s1", "s2"):  # two sessions of one person: asked for once
            engine.offer(event("interaction", CLICK, f"k{n}{session}", profile=f"p{n}",
                               session=session), at(0))  # fmt: skip
    fired = engine.fire_due(at(60))
    assert len(fired) == 50
    [first] = asked
    assert sorted(first) == sorted(("acme", f"p{n}") for n in range(50))
    assert len(first) == 50  # each person once
    assert next(d for d in fired if d.profile_id == "p0").state is saved[("acme", "p0")]
    # Those now in memory are not asked for again.
    engine.offer(event("interaction", CLICK, "again", profile="p1"), at(100))
    engine.offer(event("interaction", CLICK, "new", profile="p99"), at(100))
    engine.fire_due(at(200))
    assert asked[1:] == [[("acme", "p99")]]


def test_a_later_item_postpones_the_quiet_trigger_not_the_five_minute_one() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", session="s1"), at(0))
    engine.offer(event("interaction", CLICK, "b", session="s1"), at(50))
    assert engine.fire_due(at(60)) == []  # its first due time (60 s) passed: rescheduled
    assert engine.fire_due(at(109)) == []
    assert len(engine.fire_due(at(110))) == 1
    assert engine.fire_due(at(1_000)) == []


def test_an_item_received_earlier_than_the_oldest_brings_the_trigger_forward() -> None:
    engine = _engine()  # replay of an unsorted file: received is occurred_at
    engine.offer(event("interaction", CLICK, "a", t=200), at(200))
    engine.offer(event("interaction", CLICK, "b", t=0), at(0))
    assert engine.fire_due(at(259)) == []  # quiet due at 260
    assert len(engine.fire_due(at(260))) == 1


def test_oldest_held_is_the_lowest_offset_still_pending_per_partition() -> None:
    engine = _engine()
    engine.offer(event("interaction", CLICK, "a", session="s1"), at(0), position=("t0", 5))
    engine.offer(event("interaction", CLICK, "b", session="s2"), at(30), position=("t0", 7))
    engine.offer(event("interaction", CLICK, "c", session="s2"), at(30), position=("t1", 3))
    assert engine.oldest_held() == {"t0": 5, "t1": 3}
    engine.fire_due(at(60))  # s1 fires: offset 5 is free
    assert engine.oldest_held() == {"t0": 7, "t1": 3}
    engine.fire_due(at(90))
    assert engine.oldest_held() == {}


def test_a_tick_with_many_pending_sessions_takes_only_the_due_ones() -> None:
    engine = _engine()
    for i in range(1_000):
        engine.offer(event("interaction", CLICK, f"k{i}", session=f"s{i}", t=i), at(i))
    fired = engine.fire_due(at(100))  # the sessions offered at 0..40 are quiet a minute
    assert len(fired) == 1  # one person: all of their due sessions fold into one derivation
    assert {k[2] for k in engine.pending} == {f"s{i}" for i in range(41, 1_000)}


def test_beyond_max_states_the_least_recently_derived_idle_people_are_dropped() -> None:
    saved: dict[tuple[str, str], ProfileState] = {}
    engine = SignalsEngine(
        CONFIG, max_states=2, load_states=lambda people: {p: saved[p] for p in people if p in saved}
    )
    for n, profile in enumerate(["p1", "p2", "p3"]):
        engine.offer(event("interaction", CLICK, f"k{n}", profile=profile, t=n), at(n))
        for d in engine.fire_all():
            saved[(d.space_id, d.profile_id)] = d.state  # what the live driver writes
    assert set(engine.states) == {("acme", "p2"), ("acme", "p3")}
    # p1 comes back: its state is loaded as it was saved, and folding goes on from it.
    engine.offer(event("interaction", CLICK, "k9", profile="p1", t=9), at(9))
    [again] = engine.fire_all()
    assert again.state is saved[("acme", "p1")]
    assert "k0" in again.state.folded and "k9" in again.state.folded


def test_people_with_pending_sessions_are_never_dropped() -> None:
    engine = SignalsEngine(CONFIG, max_states=1)
    engine.offer(event("interaction", CLICK, "a", profile="p1", session="s1"), at(0))
    engine.offer(event("interaction", CLICK, "b", profile="p1", session="s2"), at(50))
    engine.offer(event("interaction", CLICK, "c", profile="p2"), at(0))
    engine.fire_due(at(60))  # p1/s1 and p2 fire; p1 still has s2 pending
    assert ("acme", "p1") in engine.states and ("acme", "p2") not in engine.states


def test_next_due_is_never_later_than_the_first_session_due() -> None:
    engine = _engine()
    assert engine.next_due() is None
    engine.offer(event("interaction", CLICK, "a", session="s1"), at(0))
    engine.offer(event("interaction", CLICK, "b", session="s2"), at(10))
    assert engine.next_due() == at(60)
    engine.offer(event("interaction", CLICK, "c", session="s1"), at(30))  # s1 now due at 90
    assert engine.next_due() <= at(70)  # s2's time, or s1's stale one: a wake-up, no more
    assert engine.fire_due(at(60)) == [] and engine.next_due() == at(70)
    assert len(engine.fire_due(at(70))) == 1 and engine.next_due() == at(90)
