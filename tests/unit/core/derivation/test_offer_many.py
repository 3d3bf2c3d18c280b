"""``SignalsEngine.offer_many`` (the live driver's one call per batch) leaves the engine
exactly as ``offer`` called for each event in turn: pending sessions, held events,
triggers, held offsets, erased drops and what fires."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.unit.core.derivation.builders import CONFIG, PRIORS, TYPES, A, at, command, engaged
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.derivation.events import SignalEvent

TOMBSTONES = {("acme", "p1"): at(40)}


def _engine() -> SignalsEngine:
    return SignalsEngine(
        CONFIG,
        priors_for=lambda _s: PRIORS,
        types_for=lambda _s: TYPES,
        load_tombstones=lambda: TOMBSTONES,
    )


def _snapshot(engine: SignalsEngine) -> dict[str, Any]:
    """Everything offer changes, in the order the dicts hold it."""
    return {
        "pending": list(engine.pending.items()),
        "held": [(k, [(h.event, h.position) for h in v]) for k, v in engine.held.items()],
        # The live entries: a session whose erase arrived after its other events has
        # an entry left behind by each offer (skipped when popped), one by offer_many;
        # so next_due (the heap's first entry, live or not) may differ, never later. A
        # left-behind entry can also equal a live one (a firing that finds the quiet
        # trigger moved pushes the new time): the first pops, the copy is skipped.
        "heap": _live_heap(engine),
        "scheduled": list(engine._scheduled.items()),
        "offsets": {p: sorted(o) for p, o in engine._offsets.items()},
        "live": dict(engine._live),
        "sessions": list(engine._sessions.items()),
        "dropped": engine.dropped_erased,
        "oldest_held": engine.oldest_held(),
    }


def _live_heap(engine: SignalsEngine) -> list[Any]:
    live = sorted({e for e in engine._heap if engine._scheduled.get(e[1]) == e[0]})
    upcoming = engine.next_due()
    assert (upcoming is None) <= (not live) and (not live or upcoming <= live[0][0])
    return live


def _fired(engine: SignalsEngine, seconds: float) -> list[Any]:
    return [
        (d.space_id, d.profile_id, d.erased, sorted(i.id for i in d.inferences))
        for d in engine.fire_due(at(seconds))
    ]


_event = st.builds(
    lambda key, t, profile, session, erase: (
        command(f"k{key}", "erase", t=t, profile=profile, session=session)
        if erase
        else engaged(f"k{key}", A, t=t, profile=profile, session=session)
    ),
    key=st.integers(0, 12),  # repeated keys: a key already pending counts once
    t=st.integers(0, 80),  # p1's tombstone is at 40: some dropped, some kept
    profile=st.sampled_from(["p1", "p2", "p3"]),
    session=st.sampled_from(["s1", "s2"]),
    erase=st.integers(0, 7).map(lambda n: n == 0),  # now and then an erase
)
_partition = st.sampled_from(["t0", "t1"])
_offset = st.integers(0, 30) | st.just(None)  # None: a position that is not an offset
_batch = st.tuples(
    st.integers(0, 400),  # received: may go back in time (a replay of an unsorted file)
    st.lists(st.tuples(_partition, _offset, st.lists(_event, max_size=4)), max_size=8),
    st.integers(0, 600),  # a firing after the batch, at this time
)


# An erase fires its session, whose first event's entry stays behind; the session's next
# event is due at that entry's time again: two equal entries in the heap, one live.
_ERASED_THEN_AGAIN = [
    (
        0,
        [
            (
                "t0",
                0,
                [engaged("k1", A, t=50, profile="p2"), command("k2", "erase", t=51, profile="p2")],
            )
        ],
        0,
    ),
    (0, [("t0", 1, [engaged("k3", A, t=52, profile="p2")])], 0),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(_batch, max_size=6))
@example(_ERASED_THEN_AGAIN)
def test_offer_many_is_offer_for_each_event_in_turn(
    batches: list[tuple[int, list[tuple[str, Any, list[SignalEvent]]], int]],
) -> None:
    one_by_one, batched = _engine(), _engine()
    for received, offers, fire_at in batches:
        for partition, offset, events in offers:
            for one in events:
                one_by_one.offer(one, at(received), position=(partition, offset))
        batched.offer_many(at(received), offers)
        assert _snapshot(batched) == _snapshot(one_by_one)
        assert _fired(batched, fire_at) == _fired(one_by_one, fire_at)
        assert _snapshot(batched) == _snapshot(one_by_one)
    assert _fired(batched, 10_000) == _fired(one_by_one, 10_000)


def test_nothing_offered_reads_no_tombstones() -> None:
    reads: list[int] = []
    engine = SignalsEngine(CONFIG, load_tombstones=lambda: reads.append(1) or {})
    engine.offer_many(at(0), [("t0", 1, [])])
    assert reads == []
    assert engine.pending == {} and engine.oldest_held() == {}
