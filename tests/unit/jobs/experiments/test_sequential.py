"""Spending boundaries against published values and scipy's multivariate normal."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from turnstream.jobs.experiments.sequential import (
    boundaries,
    look_fractions,
    obf_spending,
    repeated_interval,
    sequential_p_value,
    spending_boundaries,
)


def test_obf_spending_spends_nothing_early_and_alpha_at_the_horizon() -> None:
    assert obf_spending(0.0) == 0.0 and obf_spending(1.0) == 0.05 and obf_spending(2.0) == 0.05
    # By hand: t = 0.25 gives 2 - 2 Φ(1.959964 / 0.5) = 2 · Φ(-3.919928) = 8.8575e-5.
    assert obf_spending(0.25) == pytest.approx(2 * norm.sf(norm.isf(0.025) / 0.5), rel=1e-12)
    assert obf_spending(0.25) == pytest.approx(8.8575e-5, rel=1e-4)
    spent = [obf_spending(t) for t in look_fractions(28, 28)]
    assert spent == sorted(spent) and spent[0] < 1e-20


def test_five_looks_match_the_published_lan_demets_obf_boundaries() -> None:
    # gsDesign (sfLDOF, k = 5, alpha = 0.025 a side) and Reboussin et al.'s ldbounds print
    # 4.8769, 3.3569, 2.6803, 2.2898, 2.0310; two-sided symmetric spends twice a side. Here
    # 3.35701 for 3.3569 (their rounding or their one-sided look 2): within 2e-4; the exact
    # check is scipy's multivariate normal, below.
    fractions = [k / 5 for k in range(1, 6)]
    spent = [2 * obf_spending(t, 0.025) for t in fractions]
    assert spending_boundaries(fractions, spent) == pytest.approx(
        [4.8769, 3.3569, 2.6803, 2.2898, 2.0310], abs=2e-4
    )


def test_crossing_probabilities_equal_the_alpha_spent_by_scipy_mvn() -> None:
    # Unequal looks; the z statistics are Brownian motion sampled at the fractions.
    fractions = [0.1, 0.25, 0.5, 0.7, 1.0]
    bounds = boundaries(fractions)
    for k in range(1, len(fractions) + 1):
        t = np.array(fractions[:k])
        cov = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
        b = np.array(bounds[:k])
        law = multivariate_normal(np.zeros(k), cov, abseps=1e-9, releps=0, maxpts=10**6 * k, seed=1)
        crossed = 1 - law.cdf(b, lower_limit=-b)
        assert crossed == pytest.approx(obf_spending(fractions[k - 1]), abs=1e-6)


def test_daily_looks_over_28_days() -> None:
    bounds = boundaries(look_fractions(28, 28))
    assert bounds[0] == math.inf  # day 1 spends 1e-25: nothing can be acted on
    finite = bounds[1:]
    assert all(a > b for a, b in itertools.pairwise(finite))
    assert 1.96 < bounds[-1] < 2.3  # close to, above, the fixed-horizon 1.96
    assert look_fractions(40, 28) == look_fractions(28, 28)
    with pytest.raises(ValueError):
        boundaries([0.5, 0.5])
    with pytest.raises(ValueError):
        look_fractions(0, 28)


def test_one_look_at_the_horizon_is_the_fixed_horizon_test() -> None:
    assert boundaries([1.0]) == pytest.approx((norm.isf(0.025),), abs=1e-12)
    for z in (0.7, 1.5, 1.96, 2.8, -3.3):
        assert sequential_p_value(z, [1.0]) == pytest.approx(2 * norm.sf(abs(z)), rel=1e-6)
    # Levels are searched up to 0.5 only: z = 0.3 (fixed p 0.76) gets 1.
    assert sequential_p_value(0.3, [1.0]) == 1.0


def test_the_sequential_p_value_is_the_level_whose_boundary_z_meets() -> None:
    fractions = look_fractions(10, 28)
    c = boundaries(fractions)[-1]
    assert sequential_p_value(c, fractions) == pytest.approx(0.05, rel=1e-6)
    assert sequential_p_value(c + 0.2, fractions) < 0.05 < sequential_p_value(c - 0.2, fractions)
    # Earlier looks demand more: the same z is weaker evidence on day 10 than at the end.
    assert sequential_p_value(2.5, fractions) > sequential_p_value(2.5, [1.0])
    assert sequential_p_value(0.0, fractions) == 1.0
    # O'Brien-Fleming early: about 2 Φ(-|z| sqrt(t)), 3.4e-4 for z = 6 on day 10 of 28.
    assert sequential_p_value(40.0, fractions) < sequential_p_value(6.0, fractions) < 1e-3
    assert sequential_p_value(40.0, [1.0]) == 1e-12


def test_repeated_interval_is_wider_than_the_fixed_one_and_absent_on_day_one() -> None:
    fractions = look_fractions(7, 28)
    low, high = repeated_interval(0.02, 0.01, fractions)
    c = boundaries(fractions)[-1]
    assert (low, high) == pytest.approx((0.02 - c * 0.01, 0.02 + c * 0.01))
    assert high - low > 2 * 1.96 * 0.01
    assert repeated_interval(0.02, 0.01, look_fractions(1, 28)) is None
