"""Arm statistics for a binary outcome, on statsmodels and scipy.

Methods, all at 95% (the figures mean what they meant when this suite was hand-written;
``tests/unit/jobs/experiments/test_stats_library.py`` shows the two agree to 1e-9):

* rate of an arm: Wilson score interval (``proportion_confint(method="wilson")``);
* difference (arm - baseline): Newcombe's hybrid score interval (Newcombe 1998, method
  10; ``confint_proportions_2indep(method="newcomb")``); better coverage than Wald near
  0 and 1;
* relative lift (arm / baseline - 1): delta method on the log of the risk ratio,
  ``se = sqrt(1/x1 - 1/n1 + 1/x0 - 1/n0)`` (``confint_proportions_2indep(method="log",
  compare="ratio")``), exponentiated back;
* p-value: two-sided two-proportion z-test with the pooled proportion
  (``proportions_ztest``);
* sample-ratio mismatch: chi-square goodness of fit of people per arm against the
  allocation (``scipy.stats.chisquare``); flagged below 0.001.

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
    "compare_arms",
    "lift_interval",
    "newcombe_interval",
    "sample_ratio_mismatch",
    "two_proportion_z_test",
    "wilson_interval",
]

#: The standard normal quantile for a two-sided 95% interval (1.959963...).
Z95 = NormalDist().inv_cdf(0.975)
#: A sample-ratio mismatch is flagged when its p-value is below this.
SRM_THRESHOLD = 0.001
_ALPHA = 0.05


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


def wilson_interval(successes: int, n: int) -> tuple[float, float] | None:
    """Wilson score interval of a proportion; None when ``n`` is 0."""
    # statsmodels and scipy on use, here and below: the CLI starts without them (3.9 s).
    from statsmodels.stats.proportion import proportion_confint

    if n <= 0:
        return None
    low, high = proportion_confint(successes, n, alpha=_ALPHA, method="wilson")
    # The score bounds of 0/n and n/n are exactly 0 and 1; rounding leaves a hair off.
    return (0.0 if successes <= 0 else float(low)), (1.0 if successes >= n else float(high))


def newcombe_interval(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float, float] | None:
    """Difference p1 - p0 with Newcombe's hybrid score interval: ``(diff, low, high)``."""
    from statsmodels.stats.proportion import confint_proportions_2indep

    if n1 <= 0 or n0 <= 0:
        return None
    low, high = confint_proportions_2indep(
        x1, n1, x0, n0, method="newcomb", compare="diff", alpha=_ALPHA
    )
    return x1 / n1 - x0 / n0, float(low), float(high)


def lift_interval(
    x1: int, n1: int, x0: int, n0: int
) -> tuple[float | None, float | None, float | None]:
    """Relative lift p1 / p0 - 1 with a delta-method interval on log(p1 / p0).

    The lift is None when the baseline has no successes; the interval is None when
    either arm has none (the log ratio is unbounded).
    """
    from statsmodels.stats.proportion import confint_proportions_2indep

    if n1 <= 0 or n0 <= 0 or x0 <= 0:
        return None, None, None
    ratio = (x1 / n1) / (x0 / n0)
    if x1 <= 0:
        return ratio - 1, None, None
    low, high = confint_proportions_2indep(
        x1, n1, x0, n0, method="log", compare="ratio", alpha=_ALPHA
    )
    return ratio - 1, float(low) - 1, float(high) - 1


def two_proportion_z_test(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float] | None:
    """Pooled two-proportion z-test: ``(z, two-sided p)``; None when an arm is empty."""
    from statsmodels.stats.proportion import proportions_ztest

    if n1 <= 0 or n0 <= 0:
        return None
    if (x1 + x0) in (0, n1 + n0):  # both arms all-success or all-failure: identical rates
        return 0.0, 1.0
    z, p = proportions_ztest([x1, x0], [n1, n0])
    return float(z), float(p)


def sample_ratio_mismatch(
    observed: Sequence[int], weights: Sequence[float], threshold: float = SRM_THRESHOLD
) -> SampleRatio:
    """Chi-square goodness of fit of ``observed`` people per arm against ``weights``."""
    from scipy.stats import chisquare

    if len(observed) != len(weights) or len(observed) < 2:
        raise ValueError("sample_ratio_mismatch needs one weight per arm and two arms or more")
    total, weight = sum(observed), math.fsum(weights)
    df = len(observed) - 1
    if total == 0:
        return SampleRatio(0.0, df, 1.0, False)
    expected = [total * w / weight for w in weights]
    chi2, p_value = chisquare(observed, expected)
    return SampleRatio(float(chi2), df, float(p_value), bool(p_value < threshold))


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
