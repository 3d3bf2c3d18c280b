"""Arm statistics against hand-computed and textbook numbers."""

from __future__ import annotations

import math

import pytest

from turnstream.jobs.experiments.stats import (
    Z95,
    ArmCount,
    compare_arms,
    lift_interval,
    newcombe_interval,
    sample_ratio_mismatch,
    two_proportion_z_test,
    wilson_interval,
)


def _wilson_by_bisection(x: int, n: int, upper: bool) -> float:
    """The Wilson bound as the root of |p̂ - p| = z·sqrt(p(1-p)/n): no closed form used."""
    p_hat = x / n

    def excess(p: float) -> float:
        return abs(p_hat - p) - Z95 * math.sqrt(p * (1 - p) / n)

    lo, hi = (p_hat, 1.0) if upper else (0.0, p_hat)
    for _ in range(200):
        mid = (lo + hi) / 2
        inside = excess(mid) < 0
        if upper:
            lo, hi = (mid, hi) if inside else (lo, mid)
        else:
            lo, hi = (lo, mid) if inside else (mid, hi)
    return (lo + hi) / 2


def test_pooled_z_test_on_200_of_1000_against_250_of_1000() -> None:
    # By hand: pooled p = 450/2000 = 0.225; se = sqrt(0.225 · 0.775 · (1/1000 + 1/1000))
    # = sqrt(0.00034875) = 0.0186748; z = 0.05 / 0.0186748 = 2.6774; p = 2·(1 - Φ(z)) = 0.00742.
    z, p = two_proportion_z_test(250, 1000, 200, 1000)
    assert z == pytest.approx(2.6774, abs=1e-4)
    assert p == pytest.approx(0.00742, abs=1e-5)
    z_back, p_back = two_proportion_z_test(200, 1000, 250, 1000)
    assert z_back == pytest.approx(-z) and p_back == pytest.approx(p)


def test_identical_all_or_nothing_arms_are_not_different() -> None:
    assert two_proportion_z_test(0, 50, 0, 80) == (0.0, 1.0)
    assert two_proportion_z_test(5, 0, 1, 10) is None


def test_wilson_interval_textbook_and_by_bisection() -> None:
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion": 81/263.
    low, high = wilson_interval(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)
    for x, n in [(81, 263), (1, 29), (200, 1000), (29, 30)]:
        low, high = wilson_interval(x, n)
        assert low == pytest.approx(_wilson_by_bisection(x, n, upper=False), abs=1e-9)
        assert high == pytest.approx(_wilson_by_bisection(x, n, upper=True), abs=1e-9)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0
    assert wilson_interval(0, 0) is None


def test_newcombe_difference_interval_textbook() -> None:
    # Newcombe (1998), "Interval estimation for the difference between independent
    # proportions", example (a): 56/70 - 48/80 = 0.2000, method 10: 0.0524 to 0.3339.
    diff, low, high = newcombe_interval(56, 70, 48, 80)
    assert diff == pytest.approx(0.2)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)


def test_difference_on_200_of_1000_against_250_of_1000() -> None:
    diff, low, high = newcombe_interval(250, 1000, 200, 1000)
    assert diff == pytest.approx(0.05)
    # The hybrid score interval from the two Wilson intervals, computed by bisection.
    l1, u1 = (_wilson_by_bisection(250, 1000, u) for u in (False, True))
    l0, u0 = (_wilson_by_bisection(200, 1000, u) for u in (False, True))
    assert low == pytest.approx(0.05 - math.hypot(0.25 - l1, u0 - 0.2), abs=1e-9)
    assert high == pytest.approx(0.05 + math.hypot(u1 - 0.25, 0.2 - l0), abs=1e-9)
    assert 0 < low < 0.05 < high  # significant, as the z-test says


def test_lift_interval_by_delta_method_on_the_log_ratio() -> None:
    # By hand: ratio 1.25; se = sqrt(1/250 - 1/1000 + 1/200 - 1/1000) = sqrt(0.007) = 0.083666;
    # exp(ln 1.25 ± 1.959964 · 0.083666) - 1 = 0.06095 and 0.47274.
    lift, low, high = lift_interval(250, 1000, 200, 1000)
    assert lift == pytest.approx(0.25)
    assert low == pytest.approx(0.06095, abs=1e-5)
    assert high == pytest.approx(0.47274, abs=1e-5)
    assert lift_interval(5, 100, 0, 100) == (None, None, None)
    assert lift_interval(0, 100, 5, 100) == (-1.0, None, None)


def test_srm_p_value_against_chi_square_closed_forms_and_tables() -> None:
    # Two arms: df 1, P(X > x) = erfc(sqrt(x / 2)); three arms: df 2, exp(-x / 2).
    for observed in ([510, 490], [5000, 4500], [100, 160], [7, 3]):
        srm = sample_ratio_mismatch(observed, [1, 1])
        assert srm.p_value == pytest.approx(math.erfc(math.sqrt(srm.chi2 / 2)), rel=1e-9)
    for observed in ([300, 330, 360], [1000, 900, 1100]):
        srm = sample_ratio_mismatch(observed, [1, 1, 1])
        assert srm.df == 2
        assert srm.p_value == pytest.approx(math.exp(-srm.chi2 / 2), rel=1e-9)
    # Critical value from the chi-square table: 7.8147 for df 3 at 0.05. Four equal arms
    # with counts giving chi2 = 7.8147 exactly: deviations (+d, -d, +d, -d) over 1000 each.
    d = math.sqrt(7.8147 * 1000 / 4)
    srm = sample_ratio_mismatch([1000 + d, 1000 - d, 1000 + d, 1000 - d], [1, 1, 1, 1])
    assert srm.chi2 == pytest.approx(7.8147) and srm.p_value == pytest.approx(0.05, abs=1e-5)


def test_srm_flags_5000_against_4500_on_a_50_50_split() -> None:
    srm = sample_ratio_mismatch([5000, 4500], [50, 50])
    # By hand: expected 4750 each; chi2 = 2 · 250² / 4750 = 26.316; p = erfc(sqrt(chi2 / 2)).
    assert srm.chi2 == pytest.approx(26.3158, abs=1e-4)
    assert srm.df == 1
    assert srm.p_value == pytest.approx(math.erfc(math.sqrt(26.315789 / 2)), rel=1e-5)
    assert srm.p_value < 1e-6 and srm.flagged


def test_srm_does_not_flag_5000_against_4980() -> None:
    srm = sample_ratio_mismatch([5000, 4980], [1, 1])
    assert srm.chi2 == pytest.approx(2 * 10**2 / 4990)
    assert srm.p_value == pytest.approx(0.8413, abs=1e-4)
    assert not srm.flagged


def test_srm_uses_the_allocation_weights() -> None:
    assert not sample_ratio_mismatch([1000, 4500, 4500], [10, 45, 45]).flagged
    assert sample_ratio_mismatch([3333, 3333, 3334], [10, 45, 45]).flagged
    assert sample_ratio_mismatch([0, 0], [1, 1]).p_value == 1.0


def test_compare_arms_against_the_baseline() -> None:
    arms = compare_arms(
        [
            ArmCount("control", 1000, 200, 50),
            ArmCount("full", 1000, 250, 50),
            ArmCount("empty", 0, 0, 10),
        ],
        baseline="control",
    )
    control, full, empty = arms
    assert control.rate == pytest.approx(0.2) and control.diff is None and control.p_value is None
    assert full.rate == pytest.approx(0.25)
    assert full.diff == pytest.approx(0.05)
    assert full.p_value == pytest.approx(0.00742, abs=1e-5)
    assert full.lift == pytest.approx(0.25)
    assert full.rate_low == pytest.approx(wilson_interval(250, 1000)[0])
    assert empty.rate is None and empty.diff is None and empty.p_value is None
    with pytest.raises(ValueError, match="baseline"):
        compare_arms([ArmCount("a", 1, 1)], baseline="b")
