"""When a new space is fitted before the night (core/derivation/first_fit.py)."""

from __future__ import annotations

from turnstream.core.derivation.engine import Derivation
from turnstream.core.derivation.first_fit import FirstFits
from turnstream.core.derivation.state import ProfileState


def _see(fits: FirstFits, space_id: str, people: range) -> None:
    for n in people:
        fits.saw(space_id, f"p{n}")


def test_a_space_is_due_at_ten_people_then_each_time_its_derivations_double() -> None:
    fits = FirstFits(floor=10, last=10_000)
    _see(fits, "acme", range(9))
    _see(fits, "acme", range(9))  # 18 derivations of 9 people: not yet
    assert fits.due() == []
    fits.saw("acme", "p9")
    assert fits.due() == ["acme"]  # the 10th person, 19 derivations
    assert fits.due() == []  # taken
    _see(fits, "acme", range(18))  # 37: the same people's next sessions
    assert fits.due() == []
    fits.saw("acme", "p0")
    assert fits.due() == ["acme"]  # 38 = twice 19


def test_spaces_are_judged_apart_and_a_settled_space_never_is_due() -> None:
    fits = FirstFits(floor=10, settled={"old"})
    _see(fits, "old", range(50))
    _see(fits, "new", range(12))
    _see(fits, "small", range(3))
    _see(fits, "small", range(3))
    _see(fits, "small", range(3))
    _see(fits, "small", range(3))  # 12 derivations, 3 people
    assert fits.due() == ["new"]
    fits.settle(["new"])
    _see(fits, "new", range(12, 100))
    assert fits.due() == []


def test_past_the_last_early_fit_the_space_is_left_to_the_nightly_job() -> None:
    fits = FirstFits(floor=10, last=40)
    _see(fits, "acme", range(45))
    assert fits.due() == ["acme"]
    _see(fits, "acme", range(45, 200))
    assert fits.due() == []
    assert "acme" in fits.settled


def test_a_space_gone_quiet_after_growing_by_a_quarter_is_fitted_again() -> None:
    fits = FirstFits(floor=10, quiet_seconds=10.0, quiet_growth=1.25)
    for n in range(80):
        fits.saw("acme", f"p{n}", at=0.0)
    assert fits.due(now=0.0) == ["acme"]  # fitted at 80
    for n in range(80):  # a second session of everyone: 160, doubled
        fits.saw("acme", f"p{n}", at=100.0)
    assert fits.due(now=100.0) == ["acme"]
    for n in range(80):  # a third: 240, not doubled
        fits.saw("acme", f"p{n}", at=200.0)
    assert fits.due(now=205.0) == []  # still busy
    assert fits.due(now=210.0) == ["acme"]  # quiet for 10 s, 1.5 times the last fit
    assert fits.due(now=500.0) == []  # taken: nothing new since


def test_a_quiet_space_that_grew_little_waits_and_without_a_clock_only_doubling_counts() -> None:
    fits = FirstFits(floor=10, quiet_seconds=10.0, quiet_growth=1.25)
    for n in range(80):
        fits.saw("acme", f"p{n}", at=0.0)
    assert fits.due(now=0.0) == ["acme"]
    for n in range(19):  # 99: less than a quarter more
        fits.saw("acme", f"p{n}", at=50.0)
    assert fits.due(now=1000.0) == []
    fits.saw("acme", "p19", at=60.0)  # 100: a quarter more
    assert fits.due() == []  # replay's call: no clock, no quiet refit
    assert fits.due(now=65.0) == []
    assert fits.due(now=70.0) == ["acme"]


def _derivation(space_id: str, profile_id: str, erased: bool = False) -> Derivation:
    return Derivation(profile_id, space_id, [], [], ProfileState(), erased=erased)


def test_an_erased_person_is_forgotten_and_never_counts_towards_the_floor() -> None:
    fits = FirstFits(floor=10)
    fits.took([_derivation("acme", f"p{n}") for n in range(9)], at=0.0)
    # The erase of a tenth person fires as a derivation too (erased): no person derived.
    fits.took([_derivation("acme", "p_gone_never_seen", erased=True)], at=1.0)
    assert fits.due() == []
    # One of the nine erased: gone from the worker's memory, and one short of the floor.
    fits.took([_derivation("acme", "p3", erased=True)], at=2.0)
    assert "p3" not in repr(fits) and "p_gone_never_seen" not in repr(fits)
    fits.took([_derivation("acme", "p9")], at=3.0)
    assert fits.due() == []  # nine people left: p3's erase took them below ten
    fits.took([_derivation("acme", "p10")], at=4.0)
    assert fits.due() == ["acme"]
