"""The library-backed figures agree with the former hand-written suite to 1e-9.

The reference formulas below are the closed forms the hand-written suite computed (Wilson
score bounds, Newcombe's method 10 from them, the log-ratio delta method, the pooled z-test
and the chi-square survival function); the figures now come from statsmodels and scipy.
"""

from __future__ import annotations

import math
from itertools import product

import pytest

from turnstream.jobs.experiments.stats import (
    Z95,
    lift_interval,
    newcombe_interval,
    sample_ratio_mismatch,
    two_proportion_z_test,
    wilson_interval,
)

TOL = 1e-9
#: Counts from small to large, near 0 and near n, and the textbook examples.
COUNTS = [(0, 10), (1, 29), (29, 30), (10, 10), (48, 80), (56, 70), (81, 263), (200, 1000),
          (250, 1000), (4_999, 100_000), (5_210, 100_000)]  # fmt: skip


def _wilson(x: int, n: int) -> tuple[float, float]:
    p, z2 = x / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if x <= 0 else max(0.0, centre - half)
    return low, 1.0 if x >= n else min(1.0, centre + half)


def _newcombe(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float, float]:
    (l1, u1), (l0, u0) = _wilson(x1, n1), _wilson(x0, n0)
    p1, p0 = x1 / n1, x0 / n0
    d = p1 - p0
    return d, d - math.hypot(p1 - l1, u0 - p0), d + math.hypot(u1 - p1, p0 - l0)


def _lift(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float, float]:
    ratio = (x1 / n1) / (x0 / n0)
    se = math.sqrt(1 / x1 - 1 / n1 + 1 / x0 - 1 / n0)
    return ratio - 1, ratio * math.exp(-Z95 * se) - 1, ratio * math.exp(Z95 * se) - 1


def _z_test(x1: int, n1: int, x0: int, n0: int) -> tuple[float, float]:
    pooled = (x1 + x0) / (n1 + n0)
    z = (x1 / n1 - x0 / n0) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n0))
    return z, math.erfc(abs(z) / math.sqrt(2))


def _chi2_sf_even(x: float, df: int) -> float:
    """P(X > x) for an even ``df``: exp(-x/2) · Σ_{i < df/2} (x/2)^i / i!."""
    h = x / 2
    return math.exp(-h) * math.fsum(h**i / math.factorial(i) for i in range(df // 2))


@pytest.mark.parametrize(("x", "n"), COUNTS)
def test_wilson_agrees(x: int, n: int) -> None:
    assert wilson_interval(x, n) == pytest.approx(_wilson(x, n), abs=TOL)


def test_newcombe_lift_and_z_test_agree() -> None:
    pairs = [(a, b) for a, b in product(COUNTS, COUNTS) if a != b]
    checked = 0
    for (x1, n1), (x0, n0) in pairs:
        assert newcombe_interval(x1, n1, x0, n0) == pytest.approx(
            _newcombe(x1, n1, x0, n0), abs=TOL
        )
        if x1 > 0 and x0 > 0:
            assert lift_interval(x1, n1, x0, n0) == pytest.approx(_lift(x1, n1, x0, n0), abs=TOL)
            checked += 1
        if 0 < x1 + x0 < n1 + n0:
            z, p = two_proportion_z_test(x1, n1, x0, n0)
            z_ref, p_ref = _z_test(x1, n1, x0, n0)
            assert z == pytest.approx(z_ref, abs=TOL)
            assert p == pytest.approx(p_ref, abs=TOL)
    assert checked > 50  # the lift was compared on most pairs, not skipped


@pytest.mark.parametrize(
    "observed",
    [[510, 490], [5000, 4500], [300, 330, 360], [250, 240, 260, 310], [250, 240, 260, 310, 220]],
)
def test_sample_ratio_agrees(observed: list[int]) -> None:
    weights = [1.0] * len(observed)
    srm = sample_ratio_mismatch(observed, weights)
    expected = sum(observed) / len(observed)
    chi2 = math.fsum((o - expected) ** 2 / expected for o in observed)
    assert srm.chi2 == pytest.approx(chi2, abs=TOL)
    if srm.df == 1:
        reference = math.erfc(math.sqrt(chi2 / 2))
    elif srm.df % 2 == 0:
        reference = _chi2_sf_even(chi2, srm.df)
    else:  # df 3: erfc(sqrt(x/2)) + sqrt(2x/π) exp(-x/2)
        reference = math.erfc(math.sqrt(chi2 / 2)) + math.sqrt(2 * chi2 / math.pi) * math.exp(
            -chi2 / 2
        )
    assert srm.p_value == pytest.approx(reference, abs=TOL)
