"""Empirical-Bayes shrinkage of a person's signal rate toward the space's prior.

A person's weighted signal on a value, over its effective exposure, is read as a Poisson
rate with a Gamma prior whose mean is the space's rate for the value (the nightly priors)
and whose weight is ``strength`` units of effective exposure. The posterior is
``Gamma(signal + strength * prior, exposure + strength)``: one click on one exposure
barely moves it, ten clicks over three sessions do. Lift is the posterior mean over the
prior; confidence, the posterior probability that the rate beats the prior.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from scipy.special import gammaincc

__all__ = ["Posterior", "field_means", "posterior", "reference_rate"]


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


def reference_rate(
    attr: str,
    value: str,
    priors: Mapping[tuple[str, str], float],
    means: Mapping[str, float],
    own: float | None,
) -> float | None:
    """The rate a value's signal is compared with: its prior; else the mean prior of the
    field's values in the space; else ``own``, the person's rate over all the field's
    values (the contrast between values is what says a taste); else ``None``."""
    prior = priors.get((attr, value))
    if prior is not None and prior > 0:
        return prior
    mean = means.get(attr)
    if mean is not None:
        return mean
    return own if own is not None and own > 0 else None
