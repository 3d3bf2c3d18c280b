"""One distribution per taste field: which value, if any, the person favours or avoids.

A person's engagement with the objects of a field is read as counts per value: ``n[v]``,
the objects shown with value ``v`` that the person engaged with (each object once per
session, however many clicks, carts and purchases), over ``e[v]``, the effective exposure
of that value (each exposed position weighted by how likely it was examined, items
examined and skipped included), scaled by how much the space engages with ``v`` anyway
(its prior over the field's mean prior: a popular colour is expected to be clicked more).

Two sets of exclusive hypotheses per field, each against the same "no taste":

* ``none``: one rate for every value (no taste on the field), prior ``1 - p``;
* ``favours v``: the rate on ``v`` is ``L`` times the rate on the others, ``L`` from
  :data:`FAVOUR_LIFTS` (averaged), prior ``p / K`` for each of the ``K`` values;
* and apart, ``avoids v``: the same with ``L`` from :data:`AVOID_LIFTS` (much lower than
  the rest) and its own prior mass.

The common rate has a Gamma prior with shape 3 and the person's own rate on the field as
its mean, and integrates out in closed form (Gamma-Poisson), so the posterior of each
hypothesis is exact and cheap: ``O(K * len(lifts))`` per field. It is a posterior over
the whole field, not a test per value, so a field where clicks scatter at random (a noise
field) leaves most mass on ``none`` whatever the number of its values, and a value the
person keeps skipping where others get engaged with gets mass on ``avoids v``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["AVOID_LIFTS", "FAVOUR_LIFTS", "FieldPosterior", "favour_log_bfs", "field_posterior"]

#: How much more a favoured value is engaged with than the others (a grid, averaged).
FAVOUR_LIFTS: tuple[float, ...] = (2.0, 3.0, 4.0, 6.0, 8.0)
#: The shape of the Gamma prior of the common rate (its mean: the person's own rate).
RATE_SHAPE = 3.0
#: How much less an avoided value is (a grid, averaged).
AVOID_LIFTS: tuple[float, ...] = (0.05, 0.15, 0.3)


@dataclass(frozen=True)
class FieldPosterior:
    """The posterior of one field: per value, P(favoured) and P(avoided); P(no taste)."""

    favour: dict[str, float]
    avoid: dict[str, float]
    none: float
    #: Per value, its rate over the rate of the field's other values (smoothed by 1/2).
    lift: dict[str, float]
    #: Per value, the posterior mean of its lift if it is the favourite.
    favour_lift: dict[str, float]

    def expected_rate(self, value: str) -> float:
        """The posterior mean of ``value``'s rate over the field's common rate:
        ``1 + P(favours v) * (E[L | favours v] - 1)``, 1 for a value not in the field."""
        p = self.favour.get(value, 0.0)
        return 1.0 + p * (self.favour_lift.get(value, 1.0) - 1.0)


def _log_mean_exp(terms: Sequence[float]) -> float:
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms) / len(terms))


def _weighted_log_mean_exp(terms: Sequence[float], weights: Sequence[float] | None) -> float:
    if weights is None:
        return _log_mean_exp(terms)
    top = max(terms)
    total = sum(weights)
    return top + math.log(
        sum(w * math.exp(t - top) for t, w in zip(terms, weights, strict=True)) / total
    )


def _rates(
    counts: Mapping[str, tuple[float, float]],
) -> tuple[list[str], list[float], list[float]] | None:
    values = sorted(counts)
    n = [max(counts[v][0], 0.0) for v in values]
    e = [max(counts[v][1], 0.0) for v in values]
    if sum(n) <= 0 or sum(e) <= 0 or len(values) < 2:
        return None
    return values, n, e


def _log_bf(n: list[float], e: list[float]) -> Callable[[int, float], float]:
    """``log_bf(i, L)``: log of P(data | rate on value i is L x the rest) / P(data | one
    rate), the common rate ~ Gamma(shape a, rate b) integrated out, its mean the person's
    own (smoothed) rate."""
    total_n, total_e = sum(n), sum(e)
    a = RATE_SHAPE
    b = a * (total_e + 1.0) / (total_n + 0.5)
    base = b + total_e

    def log_bf(i: int, lift: float) -> float:
        return n[i] * math.log(lift) - (a + total_n) * math.log((base + (lift - 1) * e[i]) / base)

    return log_bf


def favour_log_bfs(
    counts: Mapping[str, tuple[float, float]], lifts: Sequence[float] = FAVOUR_LIFTS
) -> list[list[float]] | None:
    """Per value (sorted), per lift of ``lifts``: the log Bayes factor of "favours the
    value with that lift" against "no taste", as :func:`field_posterior` weighs them (what
    :mod:`.field_prior` fits a field's prior on). None when :func:`field_posterior` is."""
    rates = _rates(counts)
    if rates is None:
        return None
    _, n, e = rates
    log_bf = _log_bf(n, e)
    return [[log_bf(i, lift) for lift in lifts] for i in range(len(n))]


def field_posterior(
    counts: Mapping[str, tuple[float, float]],
    taste_prior: float,
    avoid_prior: float = 0.3,
    favour_lifts: Sequence[float] = FAVOUR_LIFTS,
    avoid_lifts: Sequence[float] = AVOID_LIFTS,
    lift_weights: Sequence[float] | None = None,
) -> FieldPosterior | None:
    """The posterior of a field from ``counts``: value -> ``(n, e)`` (engaged objects,
    prior-scaled effective exposure). ``taste_prior`` is the prior mass of "the person
    favours one value of this field", ``avoid_prior`` of "avoids one" (each weighed
    against "no taste" on its own: a favourite and an avoided value can both hold).
    ``lift_weights`` weighs ``favour_lifts`` (a space's fitted field prior,
    :mod:`.field_prior`); None: all alike. None when the field has no engagement or no
    exposure: nothing to say."""
    if not (0 < taste_prior < 1 and 0 < avoid_prior < 1):
        raise ValueError("taste_prior and avoid_prior must be between 0 and 1")
    rates = _rates(counts)
    if rates is None:
        return None
    values, n, e = rates
    total_n, total_e = sum(n), sum(e)
    log_bf = _log_bf(n, e)
    k = len(values)

    def posterior(
        lifts: Sequence[float], prior: float, weights: Sequence[float] | None
    ) -> tuple[list[float], float]:
        logs = [math.log(1 - prior)]
        each = math.log(prior / k)
        logs += [
            each + _weighted_log_mean_exp([log_bf(i, lift) for lift in lifts], weights)
            for i in range(k)
        ]
        top = max(logs)
        z = sum(math.exp(x - top) for x in logs)
        post = [math.exp(x - top) / z for x in logs]
        return post[1:], post[0]

    favour, none = posterior(favour_lifts, taste_prior, lift_weights)
    favour_lift = {}
    for i, v in enumerate(values):
        logs = [log_bf(i, lift) for lift in favour_lifts]
        top = max(logs)
        w = [math.exp(x - top) for x in logs]
        if lift_weights is not None:
            w = [wi * pi for wi, pi in zip(w, lift_weights, strict=True)]
        favour_lift[v] = sum(wi * lift for wi, lift in zip(w, favour_lifts, strict=True)) / sum(w)
    avoid, _ = posterior(avoid_lifts, avoid_prior, None)
    lift = {
        v: ((n[i] + 0.5) / (e[i] + 1.0)) / ((total_n - n[i] + 0.5) / (total_e - e[i] + 1.0))
        for i, v in enumerate(values)
    }
    return FieldPosterior(
        favour=dict(zip(values, favour, strict=True)),
        avoid=dict(zip(values, avoid, strict=True)),
        none=none,
        lift=lift,
        favour_lift=favour_lift,
    )
