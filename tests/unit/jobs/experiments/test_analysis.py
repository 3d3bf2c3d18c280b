"""Unit-level arm comparisons: binary and continuous, CUPED, Holm, on fixed data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from turnstream.jobs.experiments.analysis import (
    analyze,
    cuped_effects,
    holm,
    mean_effect,
    proportion_effect,
)
from turnstream.jobs.experiments.stats import (
    Z95,
    lift_interval,
    newcombe_interval,
    two_proportion_z_test,
)

TOL = 1e-9


def _repeat_buyers(n: int, effect: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Purchases before (x) and after (y) assignment; y leans on x (corr ~0.6)."""
    rng = np.random.default_rng(seed)
    x = rng.poisson(2.0, n).astype(float)
    return rng.poisson(0.5 + 0.4 * x).astype(float) + effect, x


def test_binary_effect_is_the_proportion_suite() -> None:
    effect = proportion_effect(250, 1000, 200, 1000)
    assert (effect.diff, effect.diff_low, effect.diff_high) == pytest.approx(
        newcombe_interval(250, 1000, 200, 1000), abs=TOL
    )
    assert (effect.rel, effect.rel_low, effect.rel_high) == pytest.approx(
        lift_interval(250, 1000, 200, 1000), abs=TOL
    )
    z, p = two_proportion_z_test(250, 1000, 200, 1000)
    assert (effect.z, effect.p_value) == pytest.approx((z, p), abs=TOL)
    assert effect.se == pytest.approx(math.sqrt(0.25 * 0.75 / 1000 + 0.2 * 0.8 / 1000))
    assert proportion_effect(1, 0, 5, 10) is None


def test_welch_by_hand_on_small_samples() -> None:
    a, b = np.array([3.0, 5.0, 9.0, 7.0]), np.array([2.0, 4.0, 3.0, 1.0, 5.0])
    # By hand: means 6 and 3; variances 6.6667 and 2.5; se = sqrt(6.6667/4 + 2.5/5) = 1.4720;
    # Welch-Satterthwaite df = 2.1667² / (1.6667²/3 + 0.5²/4) = 4.6944 / 0.98843 = 4.7494.
    effect = mean_effect(a, b)
    se = math.sqrt((20 / 3) / 4 + 2.5 / 5)
    df = se**4 / (((20 / 3) / 4) ** 2 / 3 + (2.5 / 5) ** 2 / 4)
    assert effect.diff == pytest.approx(3.0) and effect.se == pytest.approx(se, abs=TOL)
    assert df == pytest.approx(4.7494, abs=1e-4)
    from scipy.stats import t

    half = t.isf(0.025, df) * se
    assert (effect.diff_low, effect.diff_high) == pytest.approx((3 - half, 3 + half), abs=TOL)
    assert effect.p_value == pytest.approx(2 * t.sf(3 / se, df), abs=TOL)
    # Relative difference: 6/3 - 1 = 1, delta method on log(6/3).
    log_se = math.sqrt((20 / 3) / 4 / 36 + (2.5 / 5) / 9)
    assert effect.rel == pytest.approx(1.0)
    assert (effect.rel_low, effect.rel_high) == pytest.approx(
        (2 * math.exp(-Z95 * log_se) - 1, 2 * math.exp(Z95 * log_se) - 1), abs=TOL
    )
    assert mean_effect(np.array([1.0]), b) is None


def test_welch_agrees_with_statsmodels_compare_means() -> None:
    from statsmodels.stats.weightstats import CompareMeans

    y1, _ = _repeat_buyers(3000, 0.1, seed=1)
    y0, _ = _repeat_buyers(2500, 0.0, seed=2)
    effect = mean_effect(y1, y0)
    means = CompareMeans.from_data(y1, y0)
    assert (effect.diff_low, effect.diff_high) == pytest.approx(
        means.tconfint_diff(alpha=0.05, usevar="unequal"), abs=TOL
    )
    assert effect.p_value == pytest.approx(means.ttest_ind(usevar="unequal")[1], abs=TOL)


def test_cuped_is_the_ancova_coefficient_and_narrows_the_interval() -> None:
    arms = {name: _repeat_buyers(20_000, e, seed=i) for i, (name, e) in
            enumerate([("control", 0.0), ("b", 0.05), ("c", 0.0)])}  # fmt: skip
    values = {a: y for a, (y, _) in arms.items()}
    covariates = {a: x for a, (_, x) in arms.items()}
    theta, effects = cuped_effects(values, covariates, "control")
    # By hand: least squares of y on the arm indicators and the covariate.
    y = np.concatenate(list(values.values()))
    x = np.concatenate(list(covariates.values()))
    sizes = [len(v) for v in values.values()]
    design = np.column_stack([np.repeat(np.eye(3)[:, k], sizes) for k in range(3)] + [x - x.mean()])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    assert theta == pytest.approx(coef[3], abs=TOL)
    assert effects["b"].diff == pytest.approx(coef[1] - coef[0], abs=TOL)
    assert effects["c"].diff == pytest.approx(coef[2] - coef[0], abs=TOL)
    # The slope is the within-arm one: Σ(x - x̄ₐ)(y - ȳₐ) / Σ(x - x̄ₐ)².
    sxy = sum(np.sum((xs - xs.mean()) * (ys - ys.mean())) for ys, xs in arms.values())
    sxx = sum(np.sum((xs - xs.mean()) ** 2) for _, xs in arms.values())
    assert theta == pytest.approx(sxy / sxx, abs=TOL)
    # The interval narrows by about sqrt(1 - rho²).
    raw = mean_effect(values["b"], values["control"])
    rho = np.corrcoef(y, x)[0, 1]
    assert effects["b"].se / raw.se == pytest.approx(math.sqrt(1 - rho**2), rel=0.02)
    width = effects["b"].diff_high - effects["b"].diff_low
    assert width < 0.9 * (raw.diff_high - raw.diff_low)
    assert effects["b"].diff_low < effects["b"].diff < effects["b"].diff_high
    assert effects["b"].p_value < raw.p_value  # the same effect, seen more sharply


def test_cuped_relative_difference_divides_by_the_adjusted_control_mean() -> None:
    rng = np.random.default_rng(5)
    x = {a: rng.normal(10, 2, 4000) for a in ("control", "b")}
    y = {"control": 5 + 0.5 * x["control"] + rng.normal(0, 1, 4000)}
    y["b"] = 5.5 + 0.5 * x["b"] + rng.normal(0, 1, 4000)
    theta, effects = cuped_effects(y, x, "control")
    pooled = np.concatenate(list(x.values())).mean()
    control_adjusted = np.mean(y["control"] - theta * (x["control"] - pooled))
    b = effects["b"]
    assert b.rel == pytest.approx(b.diff / control_adjusted, abs=1e-9)
    assert b.rel_low < b.rel < b.rel_high
    assert b.rel == pytest.approx(0.5 / 10, abs=0.01)  # 0.5 over a mean of 5 + 0.5·10


def test_cuped_without_spread_in_the_covariate_adjusts_nothing() -> None:
    values = {"control": np.array([1.0, 0.0, 1.0]), "b": np.array([0.0, 1.0, 1.0])}
    flat = {"control": np.zeros(3), "b": np.zeros(3)}
    assert cuped_effects(values, flat, "control") == (None, {})


def test_holm_by_hand() -> None:
    # Sorted 0.01, 0.03, 0.04: 3·0.01 = 0.03, max(0.03, 2·0.03) = 0.06, max(0.06, 0.04).
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([None, 0.02, None, 0.5]) == [None, pytest.approx(0.04), None, pytest.approx(0.5)]
    assert holm([None]) == [None]


def test_analyze_binary_and_continuous_with_many_arms() -> None:
    values = {
        "control": [1, 0, 0, 1, 0, 0, 0, 1, 0, 0] * 30,
        "a": [1, 1, 0, 1, 0, 0, 1, 1, 0, 0] * 30,
        "b": [0, 0, 0, 1, 0, 0, 0, 1, 0, 0] * 31,
    }
    result = analyze(values, "control")
    assert result.kind == "binary" and result.correction == "holm"
    control, a, b = result.arms
    assert (control.people, control.mean, control.raw) == (300, pytest.approx(0.3), None)
    assert a.raw.diff == pytest.approx(0.2)
    assert a.raw.p_value == pytest.approx(two_proportion_z_test(150, 300, 90, 300)[1])
    assert a.p_holm == pytest.approx(min(1.0, 2 * a.raw.p_value))  # the smaller of two
    assert b.p_holm == pytest.approx(max(a.p_holm, b.raw.p_value))
    assert a.cuped is None and result.theta is None
    assert result.srm.df == 2 and not result.srm.flagged

    spend = {"control": [0.0, 12.5, 3.0, 0.0, 40.0] * 20, "a": [0.0, 15.0, 5.0, 2.5, 41.0] * 20}
    continuous = analyze(spend, "control", allocation={"control": 1, "a": 3})
    assert continuous.kind == "continuous"
    assert continuous.arm("a").mean == pytest.approx(12.7)
    assert continuous.arm("a").raw.diff == pytest.approx(1.6)
    assert continuous.srm.flagged  # 100 and 100 against a 1:3 allocation
    with pytest.raises(ValueError, match="control arm 'nope'"):
        analyze(spend, "nope")
    with pytest.raises(ValueError, match="only 0 and 1"):
        analyze(spend, "control", kind="binary")
