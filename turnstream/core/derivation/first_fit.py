"""When a new space's priors are fitted before the nightly job (issue 36).

The field priors (:mod:`~turnstream.core.derivation.field_prior`) are what lets a strong
taste show after a few sessions; the nightly job fits them. A space that starts today
would wait until the night, its people's first sessions derived with the defaults.
:class:`FirstFits` says when to fit such a space at once: when :data:`FIT_FLOOR` of its
people have been derived, then each time the derivations of its people (one per session
fired) double, since the last fit, so the fit follows the evidence as it grows (a fit
after everyone's first session finds little: a field's prior wants people with 8 engaged
objects on it), up to :data:`LAST_EARLY_FIT` derivations; then the nightly job alone.
Doubling alone leaves the end of a burst out: after three sessions of 80 people (240
derivations) the last fit was at 160, and the third session's evidence waited for the
night (docs/signals.md, "The first fit, live and in replay"). So a space is also
due once none of its people has been derived for :data:`QUIET_SECONDS` and its
derivations grew by :data:`QUIET_GROWTH` since the last fit (a quarter: a space busy in
bursts is fitted at most a few dozen times more, not at each lull). A space a nightly run of
the priors job wrote priors for (``settled``) is the nightly job's; one only fitted
here is not (a first fit writes tomorrow's version, :func:`fit_params`), so a worker
restarted during the day fits it again from its :data:`FIT_FLOOR`-th person derived
since, as its derivations since double. An erase (a derivation marked ``erased``)
takes its person out of the people counted: the worker keeps no profile id of an erased
person, and no fit is made on their account. Pure: the caller runs the fit (the priors
job for those spaces), says what it derived and when (any monotonic clock).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import TYPE_CHECKING

from turnstream.core.derivation.field_prior import FIT_FLOOR

if TYPE_CHECKING:
    from turnstream.core.derivation.engine import Derivation

__all__ = ["LAST_EARLY_FIT", "QUIET_GROWTH", "QUIET_SECONDS", "FirstFits", "fit_day", "fit_params"]

#: Derivations of a space's people from which its fits are left to the nightly job.
LAST_EARLY_FIT = 10_000
#: Seconds without a derivation of a space's people after which it is fitted again...
QUIET_SECONDS = 10.0
#: ...if its derivations grew by this factor since its last fit.
QUIET_GROWTH = 1.25


@dataclass
class FirstFits:
    """The spaces due a fit before the night: :meth:`saw` each derivation, :meth:`due`
    takes the spaces to fit now."""

    floor: int = FIT_FLOOR
    last: int = LAST_EARLY_FIT
    quiet_seconds: float = QUIET_SECONDS
    quiet_growth: float = QUIET_GROWTH
    #: Spaces a nightly run of the priors job ran for (read from the store at start).
    settled: set[str] = field(default_factory=set)
    #: Per space, its people derived, up to ``floor`` of them (all it needs to know).
    _people: dict[str, set[str]] = field(default_factory=dict)
    _derived: dict[str, int] = field(default_factory=dict)
    _fitted_at: dict[str, int] = field(default_factory=dict)
    #: Per space, when one of its people was last derived (the caller's clock).
    _last_seen: dict[str, float] = field(default_factory=dict)

    def settle(self, spaces: Iterable[str]) -> None:
        """``spaces`` are the nightly job's: no fit before the night for them."""
        for space_id in spaces:
            self.settled.add(space_id)
            self._people.pop(space_id, None)
            self._derived.pop(space_id, None)
            self._last_seen.pop(space_id, None)

    def saw(self, space_id: str, profile_id: str, at: float | None = None) -> None:
        """A person of ``space_id`` was derived (``at``: when, for the quiet refit)."""
        if space_id in self.settled:
            return
        people = self._people.setdefault(space_id, set())
        if len(people) < self.floor:
            people.add(profile_id)
        self._derived[space_id] = self._derived.get(space_id, 0) + 1
        if at is not None:
            self._last_seen[space_id] = at

    def forget(self, space_id: str, profile_id: str) -> None:
        """A person of ``space_id`` was erased: no longer among its people derived."""
        people = self._people.get(space_id)
        if people is not None:
            people.discard(profile_id)

    def took(self, derivations: Iterable[Derivation], at: float | None = None) -> None:
        """What a firing derived: each person derived is :meth:`saw`, each erased one
        forgotten (an erase is a derivation, not a person derived)."""
        for d in derivations:
            if d.erased:
                self.forget(d.space_id, d.profile_id)
            else:
                self.saw(d.space_id, d.profile_id, at)

    def due(self, now: float | None = None) -> list[str]:
        """The spaces to fit now (each taken: due again once its derivations double, or,
        ``now`` given, once it has been quiet long enough after growing enough)."""
        out = []
        for space_id, derived in sorted(self._derived.items()):
            before = self._fitted_at.get(space_id, 0)
            seen = self._last_seen.get(space_id)
            quiet = (
                now is not None
                and seen is not None
                and now - seen >= self.quiet_seconds
                and derived >= self.quiet_growth * before
            )
            if len(self._people[space_id]) >= self.floor and (derived >= 2 * before or quiet):
                self._fitted_at[space_id] = derived
                out.append(space_id)
        self.settle(s for s in out if self._fitted_at[s] >= self.last)
        return out


def fit_day(today: date) -> date:
    """The as-of day of a first fit made ``today``: tomorrow, so that it counts through
    today (tomorrow's nightly run writes that version again); the latest day the priors
    job takes."""
    return today + timedelta(days=1)


def fit_params(spaces: Sequence[str], today: date) -> dict[str, str]:
    """The priors job's parameters for the first fit of ``spaces`` (:func:`fit_day`)."""
    return {"as_of": fit_day(today).isoformat(), "spaces": ",".join(spaces)}
