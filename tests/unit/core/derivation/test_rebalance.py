"""A partition moving between two members (A -> B -> A), replayed by hand on two pure
engines over one "store" (a dict of saved states, copied as the store serialises them):
what B derived meanwhile is never overwritten by what A had cached."""

from __future__ import annotations

from collections.abc import Sequence

from tests.unit.core.derivation.builders import CONFIG, TYPES, at, event
from turnstream.core.derivation.engine import PersonKey, SignalsEngine
from turnstream.core.derivation.inference import inference_id
from turnstream.core.derivation.state import ProfileState

CLICK = {"kind": "engaged", "ref": "item_variant:acme:1", "action": "click"}
INTEREST = inference_id("acme", "p1", "self", "interest", "item_variant.ref", CLICK["ref"])
P1: PersonKey = ("acme", "p1")


class Saved:
    """The store's signal_state: each derivation's state saved as a copy."""

    def __init__(self) -> None:
        self.states: dict[PersonKey, dict] = {}
        self.asked: list[list[PersonKey]] = []

    def load(self, people: Sequence[PersonKey]) -> dict[PersonKey, ProfileState]:
        self.asked.append(list(people))
        return {p: ProfileState.from_dict(self.states[p]) for p in people if p in self.states}

    def member(self) -> SignalsEngine:
        return SignalsEngine(CONFIG, types_for=lambda _s: TYPES, load_states=self.load)

    def fire(self, engine: SignalsEngine) -> list:
        out = engine.fire_all()
        for d in out:
            self.states[(d.space_id, d.profile_id)] = d.state.to_dict()
        return out


def _click(engine: SignalsEngine, key: str, n: int, partition: str = "t0", **kw: str) -> None:
    """A click in session ``s<n>``, held at ``(partition, n)``."""
    one = event("interaction", CLICK, key, t=n, session=f"s{n}", **kw)  # type: ignore[arg-type]
    engine.offer(one, at(n), (partition, n))


def test_a_partition_moving_a_b_a_keeps_what_b_derived() -> None:
    store = Saved()
    a, b = store.member(), store.member()
    _click(a, "k1", 1)
    store.fire(a)
    assert a.drop_partitions({"t0"}) == (0, 1)  # revoked: A's cached state goes
    assert P1 not in a.states

    b.drop_partitions({"t0"})  # assigned to B
    _click(b, "k2", 2)
    _click(b, "k3", 3)
    [on_b] = store.fire(b)
    assert set(on_b.state.folded.keys) == {"k1", "k2", "k3"}
    assert {i.id: i.status for i in on_b.inferences}.get(INTEREST) == "active"
    b.drop_partitions({"t0"})  # revoked from B

    a.drop_partitions({"t0"})  # assigned back to A: the state is the store's
    _click(a, "k4", 4)
    [back] = store.fire(a)
    assert set(back.state.folded.keys) == {"k1", "k2", "k3", "k4"}
    assert {i.id: i.status for i in back.inferences}[INTEREST] == "active"
    assert set(ProfileState.from_dict(store.states[P1]).folded.keys) == {"k1", "k2", "k3", "k4"}


def test_without_the_drop_the_cached_state_would_win() -> None:
    """The failure the drop prevents (what the engine did before): A folds k4 into the
    k1 it cached and saves it over B's k1..k3."""
    store = Saved()
    a, b = store.member(), store.member()
    _click(a, "k1", 1)
    store.fire(a)
    _click(b, "k2", 2)
    _click(b, "k3", 3)
    store.fire(b)
    _click(a, "k4", 4)
    [stale] = store.fire(a)
    assert set(stale.state.folded.keys) == {"k1", "k4"}


def test_only_the_states_of_the_partitions_that_moved_go() -> None:
    store = Saved()
    a = store.member()
    _click(a, "k1", 1, "t0", profile="p1")
    _click(a, "k2", 2, "t1", profile="p2")
    store.fire(a)
    assert a.drop_partitions({"t1"}) == (0, 1)
    assert set(a.states) == {P1}
    store.asked.clear()
    _click(a, "k3", 3, "t0", profile="p1")
    store.fire(a)
    assert store.asked == []  # p1's partition stayed: its state is still the one in memory


def test_a_person_seen_on_two_partitions_goes_with_either() -> None:
    store = Saved()
    a = store.member()
    _click(a, "k1", 1, "t0")
    _click(a, "k2", 2, "t3")  # the topic was repartitioned, say
    store.fire(a)
    assert a.drop_partitions({"t3"}) == (0, 1)
    _click(a, "k3", 3, "t0")
    store.fire(a)
    assert a.drop_partitions({"t0"}) == (0, 1)


def test_assignment_drops_what_a_run_that_ended_still_held() -> None:
    """A run that failed is never revoked: on the next assignment, the sessions held on
    the partition (consumed again from the last commit) and the cached states go."""
    store = Saved()
    a = store.member()
    _click(a, "k1", 1)
    store.fire(a)
    _click(a, "k2", 2)
    assert a.drop_partitions({"t0"}) == (1, 1)
    assert a.pending == {} and a.oldest_held() == {} and a.states == {}
    _click(a, "k2", 2)  # consumed again
    [again] = store.fire(a)
    assert set(again.state.folded.keys) == {"k1", "k2"}


def test_a_person_still_pending_elsewhere_keeps_the_mark() -> None:
    store = Saved()
    a = store.member()
    _click(a, "k1", 1, "t0")
    _click(a, "k2", 2, "t1")  # p1 on two partitions, s2 pending on t1
    a.fire([("acme", "p1", "s1")])
    assert a.drop_partitions({"t0"}) == (0, 1)
    a.fire_all()  # s2 fires: the state is read back, and still counts as several
    assert a.drop_partitions({"t1"}) == (0, 1)


def test_nothing_to_drop_and_positions_without_offsets() -> None:
    store = Saved()
    a = store.member()
    a.offer(event("interaction", CLICK, "k1"), at(0))  # replay: no position
    store.fire(a)
    assert a.drop_partitions(set()) == (0, 0)
    assert a.drop_partitions({"t0", None}) == (0, 0)
    assert P1 in a.states


def test_the_engine_lists_every_partition_it_holds_something_of() -> None:
    store = Saved()
    a = store.member()
    _click(a, "k1", 1, "t0", profile="p1")
    store.fire(a)  # p1: a cached state only
    _click(a, "k2", 2, "t1", profile="p2")  # p2: pending
    assert a.partitions() == {"t0", "t1"}
    a.drop_partitions(a.partitions())
    assert a.partitions() == set() and a.states == {} and a.pending == {}
