"""Ratio metrics (delta method), capping, power and MDE, CUPED on several covariates, each
checked against statsmodels, scipy or an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats.mstats import winsorize
from statsmodels.regression.linear_model import WLS
from statsmodels.stats.power import NormalIndPower

from turnstream.jobs.experiments.analysis import cuped_effects, cuped_fit, mean_effect
from turnstream.jobs.experiments.metrics import (
    cap_upper,
    minimum_detectable_effect,
    plan,
    ratio_effect,
    ratio_variance,
    units_per_arm,
)

RNG = np.random.default_rng(39)


def _orders(k: int, lift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Per unit: revenue (numerator) and orders (denominator, at least 1)."""
    orders = RNG.poisson(2.0, k) + 1
    revenue = np.array([RNG.gamma(2.0, 20.0 + lift, n).sum() for n in orders])
    return revenue, orders.astype(float)


def test_the_delta_method_ratio_is_the_weighted_mean_with_hc1_errors() -> None:
    # sum(n) / sum(d) is the mean of n/d weighted by d; its delta-method variance (sample
    # variance of n - R d) is that regression's HC1 variance, exactly.
    for k in (2, 3, 50, 2_000):
        num, den = _orders(k)
        ratio, variance = ratio_variance(num, den)  # type: ignore[misc]
        fit = WLS(num / den, np.ones(k), weights=den).fit(cov_type="HC1")
        assert ratio == pytest.approx(float(fit.params[0]), rel=1e-12)
        assert variance == pytest.approx(float(fit.bse[0]) ** 2, rel=1e-9)


def test_ratio_effect_is_a_normal_test_on_the_two_variances() -> None:
    num, den = _orders(3_000, lift=2.0)
    num0, den0 = _orders(3_000)
    effect = ratio_effect(num, den, num0, den0)
    assert effect is not None and effect.p_value is not None
    (r1, v1), (r0, v0) = ratio_variance(num, den), ratio_variance(num0, den0)  # type: ignore[misc]
    se = math.sqrt(v1 + v0)
    assert effect.diff == pytest.approx(r1 - r0) and effect.se == pytest.approx(se)
    assert effect.diff_low == pytest.approx(r1 - r0 - 1.959963984540054 * se)
    assert effect.p_value == pytest.approx(math.erfc(abs((r1 - r0) / se) / math.sqrt(2)))
    assert effect.rel == pytest.approx(r1 / r0 - 1)
    # A denominator of 1 per unit: the ratio is a mean, and its se is Welch's.
    ones, ones0 = np.ones(3_000), np.ones(3_000)
    as_mean = ratio_effect(num, ones, num0, ones0)
    welch = mean_effect(num, num0)
    assert as_mean is not None and welch is not None
    assert as_mean.se == pytest.approx(welch.se, rel=1e-12)


def test_ratio_edges_refuse_or_give_none() -> None:
    assert ratio_variance([1.0], [1.0]) is None
    assert ratio_variance([1.0, 2.0], [0.0, 0.0]) is None
    with pytest.raises(ValueError, match="differ in length"):
        ratio_variance([1.0, 2.0], [1.0])
    assert ratio_effect([1.0], [1.0], [1.0, 2.0], [1.0, 1.0]) is None


@pytest.mark.parametrize("share", [0.0, 0.001, 0.01, 0.05, 0.2, 0.5])
def test_capping_is_scipys_winsorize_over_the_pooled_values(share: float) -> None:
    heavy = {"control": RNG.pareto(1.2, 700), "b": RNG.pareto(1.2, 300)}
    heavy["b"][:40] = heavy["b"][40]  # ties at the top and below it
    capped = cap_upper(heavy, share)
    pooled = np.concatenate([heavy["control"], heavy["b"]])
    expected = np.asarray(winsorize(pooled, limits=(0, share)))
    got = np.concatenate([capped.values["control"], capped.values["b"]])
    np.testing.assert_array_equal(got, expected)
    assert capped.changed == int(np.sum(pooled != expected))
    if capped.threshold is not None:
        assert got.max() == capped.threshold


def test_capping_refuses_a_share_out_of_range() -> None:
    for bad in (-0.1, 1.0, 2.0):
        with pytest.raises(ValueError, match="capped share"):
            cap_upper({"a": [1.0, 2.0]}, bad)
    assert cap_upper({"a": [1.0, 2.0]}, 0.4).threshold is None  # int(0.8) values: none


PLANS = [(1_000, 1_000, 0.05, 0.8), (500, 2_000, 0.01, 0.9), (7, 9, 0.1, 0.5)]


@pytest.mark.parametrize(("n1", "n0", "alpha", "power"), PLANS)
def test_mde_agrees_with_statsmodels(n1: int, n0: int, alpha: float, power: float) -> None:
    sd = 3.5
    mde = minimum_detectable_effect(n1, n0, sd, alpha, power)
    # One-sided at alpha/2 is exactly the formula; two-sided adds the far tail (< 1e-4).
    exact = NormalIndPower().solve_power(
        nobs1=n1, ratio=n0 / n1, alpha=alpha / 2, power=power, alternative="larger"
    )
    assert mde / sd == pytest.approx(exact, rel=1e-5)  # statsmodels solves numerically
    both = NormalIndPower().solve_power(nobs1=n1, ratio=n0 / n1, alpha=alpha, power=power)
    assert mde / sd == pytest.approx(both, rel=1e-3)


def test_units_per_arm_agree_with_statsmodels_and_detect_the_effect() -> None:
    # A conversion rate of 10%, to detect +1 point: sd sqrt(0.09) = 0.3.
    n1, n0 = units_per_arm(0.01, 0.3, 0.05, 0.8)
    exact = NormalIndPower().solve_power(
        effect_size=0.01 / 0.3, alpha=0.025, power=0.8, ratio=1.0, alternative="larger"
    )
    assert n1 == n0 == math.ceil(exact)
    assert n1 == 14_128  # (1.95996 + 0.84162)^2 * 0.09 * 2 / 0.0001, rounded up
    assert minimum_detectable_effect(n1, n0, 0.3) <= 0.01
    t1, t0 = units_per_arm(0.01, 0.3, ratio=2.0)
    assert t1 == pytest.approx(2 * t0, abs=1)
    with pytest.raises(ValueError):
        units_per_arm(0.0, 0.3)
    with pytest.raises(ValueError):
        minimum_detectable_effect(0, 10, 1.0)


def test_plan_reads_the_spread_of_earlier_data() -> None:
    earlier = [1] * 100 + [0] * 900
    p = plan(earlier, 5_000, 5_000)
    assert p.sd == pytest.approx(math.sqrt(0.1 * 0.9 * 1000 / 999))
    assert p.relative_mde == pytest.approx(p.mde / 0.1)


def _hc1(design: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and HC1 standard errors, computed from their definitions."""
    beta, *_ = np.linalg.lstsq(design, y, rcond=None)
    bread = np.linalg.inv(design.T @ design)
    e = y - design @ beta
    meat = (design * e[:, None] ** 2).T @ design
    n, k = design.shape
    cov = bread @ meat @ bread * n / (n - k)
    return beta, np.sqrt(np.diag(cov))


def test_cuped_on_several_covariates_matches_the_regression_by_hand() -> None:
    n = 1_500
    arms = ("control", "b", "c")
    values, covs = {}, {}
    for i, arm in enumerate(arms):
        visits = RNG.poisson(5, n).astype(float)
        spend = RNG.gamma(2.0, 10.0, n)
        values[arm] = 0.5 * spend + 2.0 * visits + RNG.normal(0, 5, n) + i * 1.5
        covs[arm] = np.column_stack([spend, visits, np.full(n, 7.0)])  # a constant: dropped
    thetas, effects = cuped_fit(values, covs, "control")
    y = np.concatenate([values[a] for a in arms])
    x = np.concatenate([covs[a][:, :2] for a in arms])
    dummies = [np.repeat([a == arm for a in arms], n).astype(float) for arm in ("b", "c")]
    design = np.column_stack([np.ones(len(y)), *dummies, x - x.mean(axis=0)])
    beta, se = _hc1(design, y)
    assert thetas == pytest.approx(tuple(beta[3:]), rel=1e-9)
    for i, arm in enumerate(("b", "c"), start=1):
        assert effects[arm].diff == pytest.approx(beta[i], rel=1e-9)
        assert effects[arm].se == pytest.approx(se[i], rel=1e-9)
        raw = mean_effect(values[arm], values["control"])
        assert raw is not None and effects[arm].se < 0.6 * raw.se  # the variance it removes


def test_one_covariate_is_the_single_covariate_cuped() -> None:
    values = {"control": RNG.normal(10, 2, 300), "b": RNG.normal(10.5, 2, 300)}
    covs = {a: v + RNG.normal(0, 1, 300) for a, v in values.items()}
    theta, effects = cuped_effects(values, covs, "control")
    thetas, several = cuped_fit(values, {a: c[:, None] for a, c in covs.items()}, "control")
    assert thetas == (theta,) and several["b"] == effects["b"]
    flat = {a: np.zeros(300) for a in values}
    assert cuped_fit(values, flat, "control") == ((), {})
