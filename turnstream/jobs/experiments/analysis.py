"""Arms against control on unit-level data: one value per person, and a pre-period covariate.

* A **binary** metric (every value 0 or 1) keeps the figures of :mod:`.stats`: Newcombe's
  interval of the difference, the log-ratio interval of the relative difference, the
  pooled two-proportion z-test.
* A **continuous** metric (revenue per person, items per order, outcomes per person):
  Welch's t-test and interval of the difference of means (``scipy.stats.ttest_ind``), the
  relative difference by the delta method on the log of the ratio of means (the same
  formula as the binary lift, whose variance is ``p(1-p)/n``).
* **CUPED** (Deng, Xu, Kohavi and Walker 2013) as regression adjustment: ordinary least
  squares of the value on the arms and the centred covariate, one slope ``theta`` for all
  arms, heteroskedasticity-robust (HC1) errors (statsmodels ``OLS``). The arm's coefficient
  is the adjusted difference; its standard error shrinks by about ``sqrt(1 - rho^2)``
  with ``rho`` the value-covariate correlation. The relative difference divides by the
  control's adjusted mean (the intercept), delta method on the log ratio with the fitted
  covariance.
* **Many arms**: Holm's step-down correction across the arms against control
  (statsmodels ``multipletests``). Holm rather than Dunnett: Dunnett assumes equal
  variances and a fixed-horizon t statistic, while Holm holds for any valid p-values —
  the CUPED ones and the repeated p-values of the sequential test included.

Every function is pure: arrays in, figures out. Undefined figures are None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from turnstream.jobs.experiments.stats import (
    Z95,
    SampleRatio,
    lift_interval,
    newcombe_interval,
    sample_ratio_mismatch,
    two_proportion_z_test,
)

__all__ = [
    "CORRECTION",
    "Analysis",
    "ArmResult",
    "Effect",
    "analyze",
    "as_report",
    "cuped_effects",
    "cuped_fit",
    "holm",
    "is_binary",
    "mean_effect",
    "proportion_effect",
]

#: The multiple-comparison correction across arms against control.
CORRECTION = "holm"


@dataclass(frozen=True)
class Effect:
    """One arm against control: difference and relative difference (95%), p-value.

    ``se`` is the standard error of the difference and ``z`` the test statistic (what the
    sequential test reads).
    """

    diff: float | None
    diff_low: float | None
    diff_high: float | None
    rel: float | None
    rel_low: float | None
    rel_high: float | None
    p_value: float | None
    se: float | None = None
    z: float | None = None


@dataclass(frozen=True)
class ArmResult:
    """One arm: its people and mean; against control, raw and CUPED-adjusted effects."""

    name: str
    people: int
    mean: float | None
    raw: Effect | None = None
    cuped: Effect | None = None
    p_holm: float | None = None
    cuped_p_holm: float | None = None


@dataclass(frozen=True)
class Analysis:
    """Every arm against ``control``, with the sample-ratio check."""

    control: str
    kind: str
    arms: tuple[ArmResult, ...]
    srm: SampleRatio
    theta: float | None = None
    correction: str = CORRECTION

    def arm(self, name: str) -> ArmResult:
        """The result of one arm."""
        for result in self.arms:
            if result.name == name:
                return result
        raise KeyError(name)


def _f(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _log_ratio(m1: float, v1: float, m0: float, v0: float, cov: float = 0.0):
    """``m1 / m0 - 1`` with a 95% interval from the delta method on ``log(m1 / m0)``.

    ``v1``, ``v0`` are the variances of the two means and ``cov`` their covariance.
    """
    if m0 <= 0:
        return None, None, None
    rel = m1 / m0 - 1
    if m1 <= 0:
        return rel, None, None
    var = v1 / m1**2 + v0 / m0**2 - 2 * cov / (m1 * m0)
    if not var >= 0:
        return rel, None, None
    half = Z95 * math.sqrt(var)
    return rel, (m1 / m0) * math.exp(-half) - 1, (m1 / m0) * math.exp(half) - 1


def is_binary(values: np.ndarray) -> bool:
    """Whether every value is 0 or 1."""
    return bool(np.all((values == 0) | (values == 1)))


def proportion_effect(x1: int, n1: int, x0: int, n0: int) -> Effect | None:
    """A rate against the control's: Newcombe, log-ratio lift, pooled z-test."""
    diff = newcombe_interval(x1, n1, x0, n0)
    test = two_proportion_z_test(x1, n1, x0, n0)
    if diff is None or test is None:
        return None
    p1, p0 = x1 / n1, x0 / n0
    rel = lift_interval(x1, n1, x0, n0)
    return Effect(*diff, *rel, test[1], math.sqrt(p1 * (1 - p1) / n1 + p0 * (1 - p0) / n0), test[0])


def mean_effect(values: np.ndarray, control: np.ndarray) -> Effect | None:
    """A mean against the control's: Welch's t-test and interval; None under 2 people."""
    # scipy and statsmodels on use, here and below: the CLI starts without them (3.9 s).
    from scipy.stats import ttest_ind

    n1, n0 = len(values), len(control)
    if n1 < 2 or n0 < 2:
        return None
    m1, m0 = float(np.mean(values)), float(np.mean(control))
    v1, v0 = float(np.var(values, ddof=1)) / n1, float(np.var(control, ddof=1)) / n0
    se = math.sqrt(v1 + v0)
    rel = _log_ratio(m1, v1, m0, v0)
    if se == 0:  # both arms constant: no spread to test against
        return Effect(m1 - m0, m1 - m0, m1 - m0, *rel, None, 0.0, None)
    test = ttest_ind(values, control, equal_var=False)
    ci = test.confidence_interval(0.95)
    return Effect(
        m1 - m0, float(ci.low), float(ci.high), *rel, float(test.pvalue), se, (m1 - m0) / se
    )


def cuped_effects(
    values: Mapping[str, np.ndarray], covariates: Mapping[str, np.ndarray], control: str
) -> tuple[float | None, dict[str, Effect]]:
    """``(theta, effect per arm)`` adjusted for the covariate; ``(None, {})`` when it
    cannot adjust (no spread in the covariate, or an arm of fewer than 2 people)."""
    thetas, effects = cuped_fit(values, covariates, control)
    return (thetas[0] if thetas else None), effects


def cuped_fit(
    values: Mapping[str, np.ndarray], covariates: Mapping[str, np.ndarray], control: str
) -> tuple[tuple[float, ...], dict[str, Effect]]:
    """CUPED on one covariate or several: ``covariates[arm]`` is one value per person, or
    a row per person of ``k`` values (pre-period revenue, visits, ...). One regression of
    the value on the arms and every centred covariate, HC1 errors; ``(thetas, effect per
    arm)``, one theta per covariate kept. A covariate without spread is dropped (it
    adjusts nothing); ``((), {})`` when none is left or an arm has fewer than 2 people."""
    from statsmodels.regression.linear_model import OLS

    names = list(values)
    y = np.concatenate([np.asarray(values[a], dtype=float) for a in names])
    x = np.concatenate(
        [np.asarray(covariates[a], dtype=float).reshape(len(values[a]), -1) for a in names]
    )
    others = [a for a in names if a != control]
    if any(len(values[a]) < 2 for a in names):
        return (), {}
    x = x[:, np.ptp(x, axis=0) > 0]
    if x.shape[1] == 0:
        return (), {}
    columns = [np.ones_like(y)]
    for arm in others:
        columns.append(np.concatenate([np.full(len(values[a]), a == arm, float) for a in names]))
    design = np.column_stack([*columns, x - x.mean(axis=0)])
    fit = OLS(y, design).fit(cov_type="HC1", use_t=True)
    params, cov, ci = fit.params, fit.cov_params(), fit.conf_int(0.05)
    b0 = float(params[0])
    out: dict[str, Effect] = {}
    for i, arm in enumerate(others, start=1):
        b, se = float(params[i]), float(math.sqrt(cov[i, i]))
        # Means b0 + b and b0: var(b0 + b) = V00 + Vii + 2 V0i, cov(b0 + b, b0) = V00 + V0i.
        rel = _log_ratio(
            b0 + b, cov[0, 0] + cov[i, i] + 2 * cov[0, i], b0, cov[0, 0], cov[0, 0] + cov[0, i]
        )
        out[arm] = Effect(
            b,
            float(ci[i, 0]),
            float(ci[i, 1]),
            *rel,
            _f(fit.pvalues[i]),
            se,
            b / se if se > 0 else None,
        )
    return tuple(float(t) for t in params[len(columns) :]), out


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values (None stays None and does not count as a hypothesis)."""
    from statsmodels.stats.multitest import multipletests

    present = [(i, p) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if present:
        adjusted = multipletests([p for _, p in present], method=CORRECTION)[1]
        for (i, _), q in zip(present, adjusted, strict=True):
            out[i] = float(q)
    return out


def analyze(
    values: Mapping[str, Sequence[float]],
    control: str,
    covariates: Mapping[str, Sequence[float]] | None = None,
    allocation: Mapping[str, float] | None = None,
    kind: str | None = None,
) -> Analysis:
    """Every arm in ``values`` (in its order) against ``control``.

    ``kind`` is ``binary`` or ``continuous`` (default: binary when every value is 0 or 1);
    ``allocation`` the arms' weights for the sample-ratio check (default: equal).
    """
    if control not in values:
        raise ValueError(f"control arm {control!r} is not among the arms")
    if len(values) < 2:
        raise ValueError("an analysis needs two arms or more")
    arrays = {a: np.asarray(v, dtype=float) for a, v in values.items()}
    every = np.concatenate(list(arrays.values()))
    kind = kind or ("binary" if is_binary(every) else "continuous")
    if kind == "binary" and not is_binary(every):
        raise ValueError("a binary metric takes only 0 and 1")
    theta, adjusted = None, {}
    if covariates is not None:
        xs = {a: np.asarray(covariates[a], dtype=float) for a in arrays}
        theta, adjusted = cuped_effects(arrays, xs, control)
    base = arrays[control]
    results = []
    for name, y in arrays.items():
        mean = float(y.mean()) if len(y) else None
        if name == control:
            results.append(ArmResult(name, len(y), mean))
            continue
        if kind == "binary":
            raw = proportion_effect(int(y.sum()), len(y), int(base.sum()), len(base))
        else:
            raw = mean_effect(y, base)
        results.append(ArmResult(name, len(y), mean, raw, adjusted.get(name)))
    raw_holm = holm([r.raw.p_value if r.raw else None for r in results])
    cuped_holm = holm([r.cuped.p_value if r.cuped else None for r in results])
    results = [
        ArmResult(r.name, r.people, r.mean, r.raw, r.cuped, p, q)
        for r, p, q in zip(results, raw_holm, cuped_holm, strict=True)
    ]
    weights = allocation or {}
    srm = sample_ratio_mismatch(
        [len(arrays[a]) for a in arrays], [weights.get(a, 1.0) for a in arrays]
    )
    return Analysis(control, kind, tuple(results), srm, theta)


def _effect_report(effect: Effect, p_holm: float | None) -> dict[str, object]:
    return {
        "diff": effect.diff,
        "diff_ci": [effect.diff_low, effect.diff_high],
        "rel": effect.rel,
        "rel_ci": [effect.rel_low, effect.rel_high],
        "p_value": effect.p_value,
        "p_value_holm": p_holm,
    }


def as_report(analysis: Analysis, metric: str, covariate: str | None = None) -> dict[str, object]:
    """The analysis as JSON-able values: per arm ``people``, ``mean`` and, against control,
    ``diff``, ``diff_ci``, ``rel``, ``rel_ci``, ``p_value`` (and ``cuped`` with the same
    keys when there is a covariate); ``srm_p_value`` for the whole."""
    arms: dict[str, object] = {}
    for arm in sorted(analysis.arms, key=lambda a: a.name != analysis.control):  # control first
        entry: dict[str, object] = {"people": arm.people, "mean": arm.mean}
        if arm.name != analysis.control:
            if arm.raw is not None:
                entry.update(_effect_report(arm.raw, arm.p_holm))
            if covariate is not None:
                entry["cuped"] = (
                    _effect_report(arm.cuped, arm.cuped_p_holm) if arm.cuped is not None else None
                )
        arms[arm.name] = entry
    return {
        "metric": metric,
        "kind": analysis.kind,
        "control": analysis.control,
        "covariate": covariate,
        "cuped_theta": analysis.theta,
        "correction": analysis.correction,
        "arms": arms,
        "srm_p_value": analysis.srm.p_value,
    }
