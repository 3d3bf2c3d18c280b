"""When a new space's priors are fitted before the nightly job (issue 36).

The field priors (:mod:`~turnstream.core.derivation.field_prior`) are what lets a strong
taste show after a few sessions; the nightly job fits them. A space that starts today
would wait until the night, its people's first sessions derived with the defaults.
:class:`FirstFits` says when to fit such a space at once: when :data:`FIT_FLOOR` of its
people have been derived, then each time the derivations of its people (one per session
fired) double, since the last fit, so the fit follows the evidence as it grows (a fit
after everyone's first session finds little: a field's prior wants people with 8 engaged
objects on it), up to :data:`LAST_EARLY_FIT` derivations; then the nightly job alone. A
space the priors job already ran for (``settled``) is the nightly job's. Pure: the
caller runs the fit (the priors job for those spaces) and says what it derived.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from turnstream.core.derivation.field_prior import FIT_FLOOR

__all__ = ["LAST_EARLY_FIT", "FirstFits"]

#: Derivations of a space's people from which its fits are left to the nightly job.
LAST_EARLY_FIT = 10_000


@dataclass
class FirstFits:
    """The spaces due a fit before the night: :meth:`saw` each derivation, :meth:`due`
    takes the spaces to fit now."""

    floor: int = FIT_FLOOR
    last: int = LAST_EARLY_FIT
    #: Spaces the priors job already ran for (read from the store at start).
    settled: set[str] = field(default_factory=set)
    #: Per space, its people derived, up to ``floor`` of them (all it needs to know).
    _people: dict[str, set[str]] = field(default_factory=dict)
    _derived: dict[str, int] = field(default_factory=dict)
    _fitted_at: dict[str, int] = field(default_factory=dict)

    def settle(self, spaces: Iterable[str]) -> None:
        """``spaces`` are the nightly job's: no fit before the night for them."""
        for space_id in spaces:
            self.settled.add(space_id)
            self._people.pop(space_id, None)
            self._derived.pop(space_id, None)

    def saw(self, space_id: str, profile_id: str) -> None:
        """A person of ``space_id`` was derived."""
        if space_id in self.settled:
            return
        people = self._people.setdefault(space_id, set())
        if len(people) < self.floor:
            people.add(profile_id)
        self._derived[space_id] = self._derived.get(space_id, 0) + 1

    def due(self) -> list[str]:
        """The spaces to fit now (each taken: due again once its derivations double)."""
        out = []
        for space_id, derived in sorted(self._derived.items()):
            before = self._fitted_at.get(space_id, 0)
            if len(self._people[space_id]) >= self.floor and derived >= 2 * before:
                self._fitted_at[space_id] = derived
                out.append(space_id)
        self.settle(s for s in out if self._fitted_at[s] >= self.last)
        return out
