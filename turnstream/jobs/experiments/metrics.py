"""Metrics beyond a mean per person: ratio metrics, capping heavy tails, and planning a
test (power and minimum detectable effect). Pure: arrays in, figures out.

* **Ratio metrics** (revenue per order, clicks per page view: a numerator and a
  denominator per unit, the ratio of their sums per arm): the variance of each arm's
  ratio by the delta method (Deng, Knoblich and Lu 2018, "Applying the Delta Method in
  Metric Analytics"), ``Var(R) = Var(n - R d) / (k mean(d)^2)`` over the arm's ``k``
  units, sample variance. It equals the HC1 variance of a weighted least-squares mean
  of ``n / d`` with weights ``d`` (``tests/unit/jobs/experiments/test_metrics.py``
  checks it against statsmodels). The difference of two arms' ratios gets a normal
  interval and z-test; the relative difference, the log-ratio interval.
* **Capping** (winsorising) a heavy-tailed metric: the largest ``share`` of the values,
  pooled over the arms so that every arm is capped at one threshold, are set to the
  largest value below them, as ``scipy.stats.mstats.winsorize(limits=(0, share))``.
* **Power and MDE** of a planned two-arm test, normal approximation: the minimum
  detectable effect ``(z_{1-alpha/2} + z_{power}) sd sqrt(1/n1 + 1/n0)`` and the units per
  arm it needs (statsmodels ``NormalIndPower`` solves the same; the test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

from turnstream.jobs.experiments.analysis import Analysis, ArmResult, Effect, _log_ratio, holm
from turnstream.jobs.experiments.stats import Z95, sample_ratio_mismatch

__all__ = [
    "Capped",
    "Plan",
    "analyze_ratio",
    "cap_upper",
    "minimum_detectable_effect",
    "plan",
    "ratio_effect",
    "ratio_variance",
    "units_per_arm",
]


def ratio_variance(num: Sequence[float], den: Sequence[float]) -> tuple[float, float] | None:
    """``(ratio, variance of the ratio)`` of one arm, ``sum(num) / sum(den)``, by the delta
    method; None under 2 units or with a denominator that sums to 0 or less."""
    n = np.asarray(num, dtype=float)
    d = np.asarray(den, dtype=float)
    if len(n) != len(d):
        raise ValueError(f"numerator and denominator differ in length ({len(n)}, {len(d)})")
    k = len(n)
    if k < 2 or not d.sum() > 0:
        return None
    ratio = float(n.sum() / d.sum())
    residual = n - ratio * d
    return ratio, float(np.var(residual, ddof=1) / (k * d.mean() ** 2))


def ratio_effect(
    num: Sequence[float], den: Sequence[float], num0: Sequence[float], den0: Sequence[float]
) -> Effect | None:
    """An arm's ratio against the control's: the difference with its 95% normal interval
    and two-sided z-test, the relative difference by the log-ratio interval."""
    arm, control = ratio_variance(num, den), ratio_variance(num0, den0)
    if arm is None or control is None:
        return None
    (r1, v1), (r0, v0) = arm, control
    diff = r1 - r0
    se = math.sqrt(v1 + v0)
    rel = _log_ratio(r1, v1, r0, v0)
    if se == 0:
        return Effect(diff, diff, diff, *rel, None, 0.0, None)
    z = diff / se
    p = float(2 * ndtr(-abs(z)))
    return Effect(diff, diff - Z95 * se, diff + Z95 * se, *rel, p, se, z)


@dataclass(frozen=True)
class Capped:
    """Values per arm after capping, the threshold (None: nothing capped) and how many
    values it changed."""

    values: dict[str, np.ndarray]
    threshold: float | None
    changed: int


def cap_upper(values: Mapping[str, Sequence[float]], share: float) -> Capped:
    """Cap the largest ``share`` (0 <= share < 1) of the values, pooled over the arms, at
    the largest value below them (``int(share * n)`` values, as scipy counts them)."""
    if not 0 <= share < 1:
        raise ValueError(f"the capped share must be within [0, 1), not {share}")
    arrays = {a: np.asarray(v, dtype=float) for a, v in values.items()}
    pooled = np.sort(np.concatenate(list(arrays.values()))) if arrays else np.array([])
    n = len(pooled)
    top = int(n * share)
    if top == 0:
        return Capped(arrays, None, 0)
    threshold = float(pooled[n - top - 1])
    capped = {a: np.minimum(v, threshold) for a, v in arrays.items()}
    changed = sum(int(np.sum(v > threshold)) for v in arrays.values())
    return Capped(capped, threshold, changed)


def _z(alpha: float, power: float) -> float:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ValueError(f"alpha and power must be within (0, 1), not {alpha} and {power}")
    return float(ndtri(1 - alpha / 2) + ndtri(power))


def minimum_detectable_effect(
    n1: int, n0: int, sd: float, alpha: float = 0.05, power: float = 0.8
) -> float:
    """The smallest true difference a two-sided test at ``alpha`` detects with probability
    ``power``, with ``n1`` and ``n0`` units and a per-unit standard deviation ``sd``."""
    if n1 < 1 or n0 < 1 or not sd > 0:
        raise ValueError("units per arm must be at least 1 and sd positive")
    return _z(alpha, power) * sd * math.sqrt(1 / n1 + 1 / n0)


def units_per_arm(
    effect: float, sd: float, alpha: float = 0.05, power: float = 0.8, ratio: float = 1.0
) -> tuple[int, int]:
    """Units ``(treatment, control)`` to detect ``effect`` (an absolute difference) with
    ``power``; ``ratio`` is treatment units per control unit. Rounded up."""
    if not effect != 0 or not sd > 0 or not ratio > 0:
        raise ValueError("the effect must be non-zero, sd and ratio positive")
    n0 = (_z(alpha, power) * sd / abs(effect)) ** 2 * (1 + 1 / ratio)
    return math.ceil(n0 * ratio - 1e-9), math.ceil(n0 - 1e-9)


@dataclass(frozen=True)
class Plan:
    """A planned test: the per-unit spread it assumes and what it can detect."""

    sd: float
    n1: int
    n0: int
    mde: float
    relative_mde: float | None


def plan(control: Sequence[float], n1: int, n0: int, alpha: float = 0.05,
         power: float = 0.8) -> Plan:  # fmt: skip
    """The MDE of a test of ``n1`` against ``n0`` units, the spread taken from
    ``control`` (earlier data of the metric: a 0/1 metric's ``sqrt(p (1 - p))``)."""
    y = np.asarray(control, dtype=float)
    if len(y) < 2:
        raise ValueError("the spread needs at least 2 values")
    sd = float(np.std(y, ddof=1))
    mde = minimum_detectable_effect(n1, n0, sd, alpha, power)
    mean = float(y.mean())
    return Plan(sd, n1, n0, mde, mde / mean if mean else None)


def analyze_ratio(
    numerators: Mapping[str, Sequence[float]],
    denominators: Mapping[str, Sequence[float]],
    control: str,
    allocation: Mapping[str, float] | None = None,
) -> Analysis:
    """A ratio metric's analysis, arms against ``control``: each arm's ratio as its mean,
    :func:`ratio_effect` as its effect, Holm across the arms, the SRM check on units."""
    if control not in numerators:
        raise ValueError(f"control arm {control!r} is not among the arms")
    if len(numerators) < 2:
        raise ValueError("an analysis needs two arms or more")
    results = []
    for arm in numerators:
        found = ratio_variance(numerators[arm], denominators[arm])
        ratio = found[0] if found else None
        if arm == control:
            results.append(ArmResult(arm, len(numerators[arm]), ratio))
            continue
        effect = ratio_effect(
            numerators[arm], denominators[arm], numerators[control], denominators[control]
        )
        results.append(ArmResult(arm, len(numerators[arm]), ratio, effect))
    adjusted = holm([r.raw.p_value if r.raw else None for r in results])
    results = [
        ArmResult(r.name, r.people, r.mean, r.raw, None, q)
        for r, q in zip(results, adjusted, strict=True)
    ]
    weights = allocation or {}
    srm = sample_ratio_mismatch(
        [len(numerators[a]) for a in numerators], [weights.get(a, 1.0) for a in numerators]
    )
    return Analysis(control, "ratio", tuple(results), srm)
