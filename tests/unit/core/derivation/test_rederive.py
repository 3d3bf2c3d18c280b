"""The engine derives people again when their space's priors change: the same derivation
a firing makes with the new priors, on the state in memory when there is one."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from tests.unit.core.derivation.builders import (
    CONFIG,
    PRIORS,
    TYPES,
    at,
    command,
    engaged,
    item,
    presented,
)
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.derivation.events import SignalEvent
from turnstream.core.derivation.inference import Inference
from turnstream.core.derivation.state import ProfileState
from turnstream.service.rederive import rederive_people

COLOURS = ("red", "blue", "green", "white")
P1 = ("acme", "p1")


def _events() -> list[SignalEvent]:
    """Four sessions of eight items; the red ones (positions 4 and 8) clicked each time."""
    out = []
    for s in range(4):
        eid = f"0190f5a2-7b3c-7def-8123-4567890{s:05d}"
        items = [
            item(p, f"item_variant:acme:{s * 10 + p}", color=COLOURS[p % 4]) for p in range(1, 9)
        ]
        out.append(presented(f"p{s}", eid, items, visible_k=8, t=s * 1000, session=f"s{s}"))
        for p in (4, 8):
            ref = f"item_variant:acme:{s * 10 + p}"
            out.append(engaged(f"c{s}{p}", ref, t=s * 1000 + 5, session=f"s{s}"))
    return out


class _Priors:
    """A space's priors that the test rewrites, and the spaces told of it."""

    def __init__(self) -> None:
        self.now: dict[tuple[str, str], float] = {}
        self.told: list[str] = []

    def engine(self, **kw: object) -> SignalsEngine:
        return SignalsEngine(
            CONFIG,
            types_for=lambda _space: TYPES,
            priors_for=lambda _space: self.now,
            priors_changed=self.told.append,
            **kw,  # type: ignore[arg-type]
        )


def _fired(engine: SignalsEngine, events: list[SignalEvent]) -> ProfileState:
    for e in events:
        engine.offer(e, e.occurred_at)
    engine.fire_all()
    return engine.states[P1]


def _content(inferences: dict[str, Inference]) -> dict[str, Inference]:
    """Inferences without their times (a re-derived one keeps when it first appeared)."""
    return {i: replace(x, created_at=at(0), updated_at=at(0)) for i, x in inferences.items()}


def test_rederiving_gives_what_firing_with_the_new_priors_gives() -> None:
    priors = _Priors()
    engine = priors.engine()
    before = dict(_fired(engine, _events()).inferences)
    priors.now = PRIORS
    derivations, derived = engine.rederive([P1])
    assert derived == 1 and priors.told == ["acme"]
    [d] = derivations
    assert d.exposures == [] and d.inferences  # only what changed
    assert all(before.get(i.id) != i for i in d.inferences)
    fresh = SignalsEngine(CONFIG, types_for=lambda _s: TYPES, priors_for=lambda _s: PRIORS)
    assert _content(engine.states[P1].inferences) == _content(_fired(fresh, _events()).inferences)
    # Again with the same priors: nothing changed, nothing to write.
    assert engine.rederive([P1]) == ([], 1)


def test_a_saved_state_is_derived_and_not_kept_in_memory() -> None:
    priors = _Priors()
    saved = _fired(priors.engine(), _events())
    loads: list[list[tuple[str, str]]] = []

    def load(people):  # type: ignore[no-untyped-def]
        loads.append(list(people))
        return {P1: saved}

    engine = priors.engine(load_states=load)
    priors.now = PRIORS
    [d], _ = engine.rederive([P1, ("acme", "nobody")])
    assert d.profile_id == "p1" and loads == [[P1, ("acme", "nobody")]]
    assert engine.states == {}


def test_the_state_in_memory_wins_over_the_saved_one() -> None:
    priors = _Priors()
    engine = priors.engine(load_states=lambda _people: {P1: ProfileState()})
    _fired(engine, _events())
    priors.now = PRIORS
    [d], derived = engine.rederive([P1])
    assert derived == 1 and d.state is engine.states[P1]


def test_a_deleted_inference_stays_deleted() -> None:
    priors = _Priors()
    engine = priors.engine()
    state = _fired(engine, _events())
    [affinity] = [i for i in state.inferences.values() if i.kind == "affinity"]
    delete = command("del", "delete", affinity.id, t=5000, session="s9")
    engine.offer(delete, delete.occurred_at)
    engine.fire_all()
    priors.now = PRIORS
    engine.rederive([P1])
    assert engine.states[P1].inferences[affinity.id].status == "deleted"


def test_people_seen_before_since_or_erased_since_are_left_out() -> None:
    priors = _Priors()
    engine = priors.engine()
    newest = _fired(engine, _events()).newest_occurred_at
    assert newest is not None
    priors.now = PRIORS
    assert engine.rederive([P1], since=newest + timedelta(seconds=1)) == ([], 0)
    engine.tombstones[P1] = newest
    assert engine.rederive([P1]) == ([], 0)


def test_a_write_that_fails_leaves_the_states_to_be_read_again() -> None:
    priors = _Priors()
    engine = priors.engine()
    _fired(engine, _events())
    priors.now = PRIORS

    class Failing:
        def write(self, derivations: list) -> dict[str, int]:  # type: ignore[type-arg]
            raise OSError("the store went away")

    with pytest.raises(OSError):
        rederive_people(engine, Failing(), [P1])
    assert P1 not in engine.states
