"""When a new space is fitted before the night (core/derivation/first_fit.py)."""

from __future__ import annotations

from turnstream.core.derivation.first_fit import FirstFits


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
