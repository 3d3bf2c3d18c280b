"""A taste field's prior, learned from a space's people (empirical Bayes, issue 36).

:func:`~turnstream.core.derivation.taste.field_posterior` weighs "favours ``v``" against
"no taste" with a prior ``p`` (``taste_prior``) and a grid of lifts averaged alike, the
same for every field of every space. Across a space's people the field tells more: on a
field that carries no taste (a ``category`` no one cares about) nobody's counts favour a
value more than chance would, on a strong one nearly everyone's do, by a typical lift.

:func:`fit_field_prior` fits, for one field, the share of people with a favourite
(``pi``) and the weights of the lift grid by marginal likelihood over the people's own
counts: it maximizes ``sum_j log[(1 - pi) + pi / K_j * sum_v sum_L w_L BF_jv(L)]``, where
``BF_jv(L)`` are the Bayes factors :func:`field_posterior` itself uses
(:func:`~turnstream.core.derivation.taste.favour_log_bfs`). By EM, with a Beta(2, 2)
prior on ``pi`` and a Dirichlet(2, ...) on the weights (MAP: never exactly 0 or 1), from
fixed starting values, so the same counts give the same fit. Below ``floor`` people with
evidence on the field (:data:`MIN_ENGAGED` engaged objects each) there is no fit: the
defaults stand.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from turnstream.core.derivation.taste import FAVOUR_LIFTS, favour_log_bfs

__all__ = ["FIT_FLOOR", "MIN_ENGAGED", "FieldPrior", "fit_field_prior"]

#: No fit rests on fewer people with evidence on the field (the value priors' floor).
FIT_FLOOR = 10
#: A person's counts on a field enter the fit from this many engaged objects on it: fewer
#: say little about a share and, the common rate's prior being centred on the person's
#: own rate, lean to "no taste" (a history of 1 to 3 sessions a person fitted a strong
#: colour taste at 0.08 to 0.27 on bench/taste_calibrated.py); a space whose people have
#: less keeps the defaults.
MIN_ENGAGED = 8.0
_ITERATIONS = 500
_TOLERANCE = 1e-10

#: One person's counts on one field: value -> (engaged objects, scaled exposure).
Counts = Mapping[str, tuple[float, float]]


@dataclass(frozen=True)
class FieldPrior:
    """A field's fitted prior: the share of people with a favourite value, and the
    weights of the lift grid ``lifts`` (summing to 1), from ``people`` people."""

    taste_prior: float
    lifts: tuple[float, ...]
    weights: tuple[float, ...]
    people: int

    @property
    def lift(self) -> float:
        """The weighted mean lift (a summary for people; derivation uses the grid)."""
        return sum(w * lift for w, lift in zip(self.weights, self.lifts, strict=True))


def _person_terms(log_bfs: list[list[float]]) -> tuple[float, list[float]]:
    """One person's ``(top, [sum_v exp(B_vL - top) / K for L])``: the mean Bayes factor
    per lift over the values, scaled by ``exp(top)`` so it never overflows."""
    top = max(max(row) for row in log_bfs)
    k = len(log_bfs)
    per_lift = [sum(math.exp(row[j] - top) for row in log_bfs) / k for j in range(len(log_bfs[0]))]
    return top, per_lift


def fit_field_prior(
    people: Sequence[Counts],
    floor: int = FIT_FLOOR,
    lifts: Sequence[float] = FAVOUR_LIFTS,
    min_engaged: float = MIN_ENGAGED,
) -> FieldPrior | None:
    """The field's prior fitted on ``people`` (one person's counts each, as
    :func:`field_posterior` takes them). None below ``floor`` people with evidence on the
    field: ``min_engaged`` engaged objects or more, exposure on two values or more."""
    terms = [
        _person_terms(bfs)
        for counts in people
        if sum(n for n, _ in counts.values()) >= min_engaged
        and (bfs := favour_log_bfs(counts, lifts)) is not None
    ]
    n = len(terms)
    if n < max(floor, 1):
        return None
    size = len(lifts)
    pi = 0.5
    weights = [1.0 / size] * size
    for _ in range(_ITERATIONS):
        taste_mass = 0.0
        lift_mass = [0.0] * size
        for top, per_lift in terms:
            # (1 - pi) + pi * m * exp(top), both over exp(max(top, 0)): no overflow.
            none = (1 - pi) * math.exp(-max(top, 0.0))
            rest = math.exp(min(top, 0.0))
            favour = [pi * w * m * rest for w, m in zip(weights, per_lift, strict=True)]
            total = none + sum(favour)
            taste_mass += sum(favour) / total
            for j in range(size):
                lift_mass[j] += favour[j] / total
        new_pi = (taste_mass + 1.0) / (n + 2.0)
        new_weights = [(m + 1.0) / (taste_mass + size) for m in lift_mass]
        change = abs(new_pi - pi) + sum(
            abs(a - b) for a, b in zip(new_weights, weights, strict=True)
        )
        pi, weights = new_pi, new_weights
        if change < _TOLERANCE:
            break
    return FieldPrior(
        taste_prior=round(pi, 6),
        lifts=tuple(float(x) for x in lifts),
        weights=tuple(round(w, 6) for w in weights),
        people=n,
    )
