"""Empirical-Bayes shrinkage of a person's signal rate toward the space's prior.

A person's weighted signal on a value, over its effective exposure, is read as a Poisson
rate with a Gamma prior whose mean is the space's rate for the value (the nightly priors)
(scaled by how much this person engages with the field at all) and whose weight is
``strength`` units of effective exposure. The posterior is
``Gamma(signal + strength * prior, exposure + strength)``: one click on one exposure
barely moves it, ten clicks over three sessions do. Lift is the posterior mean over the
prior; confidence, the posterior probability that the rate beats the prior.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Posterior", "field_means", "posterior", "reference_rates"]


@dataclass(frozen=True)
class Posterior:
    """The shrunk rate of one value against its reference rate."""

    reference: float
    rate: float
    lift: float
    #: P(rate > reference) under the posterior.
    confidence: float


def posterior(
    signal: float, exposure: float, reference: float, strength: float, events: int = 0
) -> Posterior:
    """The Gamma-Poisson posterior of ``signal`` over ``exposure`` around ``reference``.

    A negative signal (dislikes, returns) counts as none: it never makes a taste. Signal
    comes in weighted events (a cart is 2, a purchase 3), which are fewer independent
    observations than their sum says: with ``events``, the posterior's variance is
    inflated by the mean weight of an event (quasi-Poisson), so one purchase is not
    three clicks' worth of certainty. The mean, and so the lift, is unchanged.
    """
    if reference <= 0 or strength <= 0:
        raise ValueError("the reference rate and the prior strength must be positive")
    from scipy.special import gammaincc  # here: the SDK imports this package, not scipy

    signal = max(signal, 0.0)
    dispersion = max(1.0, signal / events) if events > 0 else 1.0
    shape = (signal + strength * reference) / dispersion
    rate_param = (max(exposure, 0.0) + strength) / dispersion
    mean = shape / rate_param
    # P(X > reference) for X ~ Gamma(shape, rate_param): the regularized upper gamma.
    confidence = float(gammaincc(shape, rate_param * reference))
    return Posterior(reference, mean, mean / reference, confidence)


def field_means(priors: Mapping[tuple[str, str], float]) -> dict[str, float]:
    """Per attribute, the mean prior over its values (each value once, positive only)."""
    sums: dict[str, list[float]] = {}
    for (attr, _value), prior in priors.items():
        if prior > 0 and math.isfinite(prior):
            sums.setdefault(attr, []).append(prior)
    return {attr: sum(values) / len(values) for attr, values in sums.items()}


def reference_rates(
    attr: str,
    by_value: Mapping[str, tuple[float, float]],
    priors: Mapping[tuple[str, str], float],
    means: Mapping[str, float],
) -> dict[str, float]:
    """The rate each value's signal is compared with: what the person would show on it
    with no taste, ``prior(value) * activity``.

    ``by_value`` maps each value of the field to the person's ``(signal, exposure)``.
    ``prior(value)``: its prior from the nightly job; else the mean prior of the field's
    values in the space; else 1 (no prior of the field: only the contrast between the
    person's values is left). ``activity``: the person's signal on the field over what
    the priors expect from their exposure to it, so someone who clicks everything likes
    nothing in particular. Empty when the person has no positive signal or no exposure.
    """
    default = means.get(attr, 1.0)
    base = {
        value: prior if (prior := priors.get((attr, value))) is not None and prior > 0 else default
        for value in by_value
    }
    signal = sum(max(s, 0.0) for s, _ in by_value.values())
    expected = sum(exposure * base[value] for value, (_, exposure) in by_value.items())
    if signal <= 0 or expected <= 0:
        return {}
    activity = signal / expected
    return {value: base[value] * activity for value in by_value}
