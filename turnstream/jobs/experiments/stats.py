"""Arm statistics for a binary outcome (standard library only).

Methods, all at 95%:

* rate of an arm: Wilson score interval;
* difference (arm - baseline): Newcombe's hybrid score interval (Newcombe 1998, method
  10), built from the two Wilson intervals; better coverage than Wald near 0 and 1;
* relative lift (arm / baseline - 1): delta method on the log of the risk ratio,
  ``se = sqrt(1/x1 - 1/n1 + 1/x0 - 1/n0)``, exponentiated back;
* p-value: two-sided two-proportion z-test with the pooled proportion;
* sample-ratio mismatch: chi-square goodness of fit of people per arm against the
  allocation, p-value from the exact chi-square survival function (the regularized
  upper incomplete gamma, series and continued fraction as in Numerical Recipes);
  flagged below 0.001.

Undefined quantities (an empty arm, a baseline with no successes) are None.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = [
    "SRM_THRESHOLD",
    "Z95",
    "ArmCount",
    "ArmStats",
    "SampleRatio",
    "chi2_sf",
    "compare_arms",
    "lift_interval",
    "newcombe_interval",
    "regularized_gamma_q",
    "sample_ratio_mismatch",
    "two_proportion_z_test",
    "wilson_interval",
]

#: The standard normal quantile for a two-sided 95% interval (1.959963...).
Z95 = NormalDist().inv_cdf(0.975)
#: A sample-ratio mismatch is flagged when its p-value is below this.
SRM_THRESHOLD = 0.001
_EPS = 1e-15
_TINY = 1e-300


@dataclass(frozen=True)
class ArmCount:
    """What was observed in one arm: people assigned and people who succeeded."""

    name: str
    people: int
    successes: int
    allocation: float = 1.0


@dataclass(frozen=True)
class ArmStats:
    """One arm's rate and, except for the baseline, how it compares with the baseline."""

    name: str
    people: int
    successes: int
    rate: float | None
    rate_low: float | None
    rate_high: float | None
    diff: float | None = None
    diff_low: float | None = None
    diff_high: float | None = None
    lift: float | None = None
    lift_low: float | None = None
    lift_high: float | None = None
    z: float | None = None
    p_value: float | None = None


@dataclass(frozen=True)
class SampleRatio:
    """Chi-square goodness of fit of the people per arm against the allocation."""

    chi2: float
    df: int
    p_value: float
    flagged: bool


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion; None when ``n`` is 0."""
    if n <= 0:
        return None
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return low, high


def newcombe_interval(
    x1: int, n1: int, x0: int, n0: int, z: float = Z95
) -> tuple[float, float, float] | None:
    """Difference p1 - p0 with Newcombe's hybrid score interval: ``(diff, low, high)``."""
    w1, w0 = wilson_interval(x1, n1, z), wilson_interval(x0, n0, z)
    if w1 is None or w0 is None:
        return None
    p1, p0 = x1 / n1, x0 / n0
    (l1, u1), (l0, u0) = w1, w0
    diff = p1 - p0
    low = diff - math.sqrt((p1 - l1) ** 2 + (u0 - p0) ** 2)
    high = diff + math.sqrt((u1 - p1) ** 2 + (p0 - l0) ** 2)
    return diff, low, high


def lift_interval(
    x1: int, n1: int, x0: int, n0: int, z: float = Z95
) -> tuple[float | None, float | None, float | None]:
    """Relative lift p1 / p0 - 1 with a delta-method interval on log(p1 / p0).

    The lift is None when the baseline has no successes; the interval is None when
    either arm has none (the log ratio is unbounded).
    """
    if n1 <= 0 or n0 <= 0 or x0 <= 0:
        return None, None, None
    ratio = (x1 / n1) / (x0 / n0)
    if x1 <= 0:
        return ratio - 1, None, None
    se = math.sqrt(1 / x1 - 1 / n1 + 1 / x0 - 1 / n0)
    log_ratio = math.log(ratio)
    return ratio - 1, math.exp(log_ratio - z * se) - 1, math.exp(log_ratio + z * se) - 1


def two_proportion_z_test(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float] | None:
    """Pooled two-proportion z-test: ``(z, two-sided p)``; None when an arm is empty."""
    if n1 <= 0 or n0 <= 0:
        return None
    pooled = (x1 + x0) / (n1 + n0)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
    diff = x1 / n1 - x0 / n0
    if se == 0:  # both arms all-success or all-failure: identical rates
        return 0.0, 1.0
    z = diff / se
    return z, math.erfc(abs(z) / math.sqrt(2))


def _gamma_p_series(a: float, x: float) -> float:
    term = total = 1.0 / a
    ap = a
    for _ in range(10_000):
        ap += 1
        term *= x / ap
        total += term
        if abs(term) < abs(total) * _EPS:
            break
    return total * math.exp(-x + a * math.log(x) - math.lgamma(a))


def _gamma_q_fraction(a: float, x: float) -> float:
    # Modified Lentz evaluation of the continued fraction for Q(a, x).
    b = x + 1 - a
    c = 1 / _TINY
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = _TINY if abs(d) < _TINY else d
        c = b + an / c
        c = _TINY if abs(c) < _TINY else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return math.exp(-x + a * math.log(x) - math.lgamma(a)) * h


def regularized_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a), the regularized upper incomplete gamma function."""
    if a <= 0 or x < 0:
        raise ValueError("regularized_gamma_q needs a > 0 and x >= 0")
    if x == 0:
        return 1.0
    if x < a + 1:
        return max(0.0, 1.0 - _gamma_p_series(a, x))
    return min(1.0, _gamma_q_fraction(a, x))


def chi2_sf(x: float, df: int) -> float:
    """P(X > x) for X chi-square with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError("chi2_sf needs df >= 1")
    return regularized_gamma_q(df / 2, max(0.0, x) / 2)


def sample_ratio_mismatch(
    observed: Sequence[int], weights: Sequence[float], threshold: float = SRM_THRESHOLD
) -> SampleRatio:
    """Chi-square goodness of fit of ``observed`` people per arm against ``weights``."""
    if len(observed) != len(weights) or len(observed) < 2:
        raise ValueError("sample_ratio_mismatch needs one weight per arm and two arms or more")
    total, weight = sum(observed), math.fsum(weights)
    df = len(observed) - 1
    if total == 0:
        return SampleRatio(0.0, df, 1.0, False)
    chi2 = math.fsum(
        (o - total * w / weight) ** 2 / (total * w / weight)
        for o, w in zip(observed, weights, strict=True)
    )
    p_value = chi2_sf(chi2, df)
    return SampleRatio(chi2, df, p_value, p_value < threshold)


def _arm(count: ArmCount, baseline: ArmCount | None) -> ArmStats:
    n, x = count.people, count.successes
    interval = wilson_interval(x, n)
    own = {
        "name": count.name,
        "people": n,
        "successes": x,
        "rate": x / n if n else None,
        "rate_low": interval[0] if interval else None,
        "rate_high": interval[1] if interval else None,
    }
    if baseline is None:
        return ArmStats(**own)
    x0, n0 = baseline.successes, baseline.people
    diff = newcombe_interval(x, n, x0, n0)
    lift = lift_interval(x, n, x0, n0)
    test = two_proportion_z_test(x, n, x0, n0)
    return ArmStats(
        **own,
        diff=diff[0] if diff else None,
        diff_low=diff[1] if diff else None,
        diff_high=diff[2] if diff else None,
        lift=lift[0],
        lift_low=lift[1],
        lift_high=lift[2],
        z=test[0] if test else None,
        p_value=test[1] if test else None,
    )


def compare_arms(counts: Sequence[ArmCount], baseline: str) -> tuple[ArmStats, ...]:
    """Every arm's statistics, each other arm against ``baseline`` (in the given order)."""
    base = next((c for c in counts if c.name == baseline), None)
    if base is None:
        raise ValueError(f"baseline arm {baseline!r} is not among the arms")
    return tuple(_arm(c, None if c.name == baseline else base) for c in counts)
