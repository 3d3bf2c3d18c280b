"""The erase tombstone in the engine: an event that occurred at or before a person's
erase never starts a new state, whenever it arrives, live or after a restart."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.core.derivation.builders import (
    CONFIG,
    PRIORS,
    TYPES,
    A,
    B,
    at,
    command,
    engaged,
    feedback,
    item,
    outcome,
    preference,
    presented,
    seen,
)
from turnstream.core.derivation.engine import Derivation, SignalsEngine
from turnstream.core.derivation.events import SignalEvent

E = [f"0190f5a2-7b3c-7def-8123-4567890000{i:02d}" for i in range(40)]
ERASE_AT = 1_000.0


def _engine(**kw: Any) -> SignalsEngine:
    return SignalsEngine(CONFIG, priors_for=lambda _s: PRIORS, types_for=lambda _s: TYPES, **kw)


def _events(n: int, at_most: float, session: str = "s1", key: str = "k") -> list[SignalEvent]:
    """A person's mixed events (every kind derivation folds), all at or before
    ``at_most``, the last exactly at it."""
    out: list[SignalEvent] = []
    for i in range(n):
        t = at_most if i == n - 1 else at_most * i / n
        kw = {"t": t, "session": f"{session}{i % 3}"}
        k = f"{key}{i}"
        out += [
            presented(
                f"{k}p", E[i % 40], [item(1, A, color="red"), item(2, B, color="blue")], **kw
            ),
            seen(f"{k}s", E[i % 40], 2, **kw),
            engaged(f"{k}e", A, **kw),
            feedback(f"{k}f", B, "like", **kw),
            outcome(f"{k}o", A, "purchase", size="M", **kw),
            preference(f"{k}r", **kw),
        ]
        if i % 4 == 3:
            out.append(command(f"{k}c", "opt_out", **kw))
    return out


def _store(rows: dict[tuple[str, str], Any], fired: list[Derivation]) -> None:
    """What the derivation sink leaves: an erased person's rows deleted, others replaced."""
    for d in fired:
        person = (d.space_id, d.profile_id)
        if d.erased:
            rows.pop(person, None)
        else:
            rows[person] = (
                sorted(i.id for i in d.inferences if i.status != "retracted"),
                len(d.exposures),
            )


def _run(arrivals: list[tuple[SignalEvent, float]]) -> tuple[SignalsEngine, dict]:
    """Offer each event at its received time (firing what is due first); the engine and
    what the store holds at the end."""
    engine = _engine()
    rows: dict[tuple[str, str], Any] = {}
    for one, received in arrivals:
        _store(rows, engine.fire_due(at(received)))
        engine.offer(one, at(received))
    _store(rows, engine.fire_all())
    return engine, rows


ERASE = command("erase-1", "erase", t=ERASE_AT, session="desk")


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=6),
    order=st.randoms(use_true_random=False),
    gaps=st.lists(st.sampled_from([0.0, 1.0, 59.0, 61.0, 301.0]), min_size=60, max_size=60),
)
def test_any_interleaving_of_pre_erase_events_ends_as_the_erase_applied_last(
    n: int, order: Any, gaps: list[float]
) -> None:
    before = _events(n, ERASE_AT)
    # The reference: every event, then the erase last.
    reference, reference_rows = _run([(e, i) for i, e in enumerate([*before, ERASE])])
    shuffled = [*before, ERASE]
    order.shuffle(shuffled)
    received, arrivals = 0.0, []
    for i, one in enumerate(shuffled):
        received += gaps[i % len(gaps)]  # sometimes a trigger fires between arrivals
        arrivals.append((one, received))
    engine, rows = _run(arrivals)

    person = ("acme", "p1")
    assert rows == reference_rows == {}
    assert person not in engine.states and person not in reference.states
    assert not engine.pending and not engine.held
    assert engine.tombstones == reference.tombstones == {person: at(ERASE_AT)}
    late = len(shuffled) - 1 - shuffled.index(ERASE)
    # Those offered after the erase fired were dropped, never held: at most the late ones.
    assert engine.dropped_erased <= late


def test_a_late_pre_erase_event_is_dropped_and_counted_not_a_new_state() -> None:
    engine = _engine()
    engine.offer(engaged("k1", A, t=10), at(10))
    engine.offer(ERASE, at(20))
    [erased] = engine.fire_due(at(200))
    assert erased.erased
    engine.offer(presented("k2", E[0], [item(1, A, color="red")], t=ERASE_AT), at(300))
    engine.offer(engaged("k3", A, t=500), at(300))
    assert engine.fire_all() == []
    assert engine.states == {} and engine.pending == {}
    assert engine.dropped_erased == 2


def test_what_occurs_after_the_erase_is_a_new_state() -> None:
    engine = _engine()
    engine.offer(ERASE, at(0))
    engine.fire_all()
    engine.offer(presented("k2", E[0], [item(1, A, color="red")], t=ERASE_AT + 1), at(300))
    [fired] = engine.fire_all()
    assert not fired.erased and fired.exposures
    assert engine.dropped_erased == 0


def test_a_second_later_erase_moves_the_tombstone_an_earlier_one_does_not() -> None:
    engine = _engine()
    engine.offer(ERASE, at(0))
    engine.offer(command("erase-0", "erase", t=ERASE_AT - 500, session="desk"), at(0))
    engine.fire_all()
    assert engine.tombstones == {("acme", "p1"): at(ERASE_AT)}
    # An erase is never dropped, even one older than the tombstone: erasing again is safe.
    engine.offer(command("erase-2", "erase", t=ERASE_AT + 5, session="desk"), at(400))
    [again] = engine.fire_all()
    assert again.erased
    assert engine.tombstones == {("acme", "p1"): at(ERASE_AT + 5)}


def test_the_tombstone_outlives_a_restart_through_the_store() -> None:
    first = _engine()
    first.offer(ERASE, at(0))
    [erased] = first.fire_all()
    assert erased.state.erased_through == at(ERASE_AT)  # what the sink records
    saved = dict(first.tombstones)
    loads: list[int] = []
    restarted = _engine(load_tombstones=lambda: loads.append(1) or saved)
    restarted.offer(engaged("k1", A, t=ERASE_AT - 1), at(500))
    restarted.offer(engaged("k9", A, t=ERASE_AT - 1, profile="p2"), at(500))
    [other] = restarted.fire_all()
    assert other.profile_id == "p2" and ("acme", "p1") not in restarted.states
    assert restarted.dropped_erased == 1 and loads == [1]  # read once
    restarted.reload_tombstones()
    restarted.offer(engaged("k2", A, t=ERASE_AT - 2), at(600))
    assert loads == [1, 1] and restarted.dropped_erased == 2


def test_an_erase_in_one_space_leaves_the_same_id_in_another_later_too() -> None:
    engine = _engine()
    engine.offer(ERASE, at(0))
    engine.fire_all()
    engine.offer(engaged("k1", A, t=10, space="other"), at(100))
    [fired] = engine.fire_all()
    assert fired.space_id == "other" and not fired.erased


def test_an_erase_fires_at_once_before_the_persons_held_sessions_write_anything() -> None:
    # Live, ingest has already erased the store when the erase reaches derivation: a
    # session of theirs held then must not fire and write their profile back while the
    # erase waits out its own session's quiet time.
    for batched in (False, True):
        engine = _engine()
        held = [engaged("k1", A, t=10, session="chat"), feedback("k2", B, "like", t=11,
                                                                 session="chat")]  # fmt: skip
        other = engaged("k9", A, t=10, session="chat", profile="p2")
        if batched:
            engine.offer_many(at(0), [(0, 1, [*held, other])])
            engine.offer_many(at(CONFIG.quiet_seconds - 1), [(0, 2, [ERASE])])
        else:
            for one in [*held, other]:
                engine.offer(one, at(0))
            engine.offer(ERASE, at(CONFIG.quiet_seconds - 1))
        assert engine.next_due() == at(CONFIG.quiet_seconds - 1)
        fired = engine.fire_due(at(CONFIG.quiet_seconds - 1))
        assert [(d.profile_id, d.erased) for d in fired] == [("p1", True)], batched
        assert ("acme", "p1") not in engine.states and engine.oldest_held() == (
            {0: 1} if batched else {}
        )
        # The other person's session keeps its own time.
        assert [d.profile_id for d in engine.fire_due(at(CONFIG.quiet_seconds))] == ["p2"]
