"""A/A simulations for the daily experiments job: peeking, the sequential test, CUPED.

    .venv/bin/python bench/experiments_aa.py [EXPERIMENTS]

1. Peeking. EXPERIMENTS (default 4,000) simulated experiments with no effect, a binary
   outcome (10% of people convert), 200 people a day per arm, looked at every day for
   the planned horizon of 28 days. A fixed-horizon test acted on at the first daily
   p < 0.05 against the group-sequential test the job uses (Lan-DeMets O'Brien-Fleming
   spending, boundaries from turnstream.jobs.experiments.sequential, their correlation
   from each look's people as the job does); also with uneven accrual (half the people in
   the first week, in the last week, a ramp from 50 to 350 a day), where calendar time
   and information part ways, and with three arms (two against control, Holm).
2. The price of validity. The same with a true lift of 10% (10% -> 11%): the share
   detected by day 28, and the mean day of the first detection.
3. CUPED. A simulated repeat-purchase outcome: each person buys at their own rate
   (gamma-distributed, mean 0.3 purchases a week); the covariate is their purchases in
   the 14, 28 or 56 days before assignment, the outcome those in the 14 days after (as a
   count, and as "bought at all", the job's binary outcome). Interval width of the
   difference with and without CUPED (turnstream.jobs.experiments.analysis), 200
   experiments of 2 x 5,000 people each.
4. Cost: boundaries and one arm's sequential p-value at look 20 of 28 and at look 90
   of 90 (the longest horizon the measurement document accepts).

Prints figures; asserts nothing.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import scipy
import statsmodels

from turnstream.jobs.experiments.analysis import cuped_effects, mean_effect, proportion_effect
from turnstream.jobs.experiments.sequential import (
    boundaries,
    look_fractions,
    sequential_p_value,
)

HORIZON = 28
PER_DAY = 200
RATE = 0.10
ALPHA = 0.05


def _machine() -> str:
    one, five, _ = os.getloadavg()
    return (
        f"{os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, statsmodels {statsmodels.__version__}; "
        f"load average {one:.2f} (1 min), {five:.2f} (5 min)"
    )


def _daily_z(rng: np.random.Generator, experiments: int, per_day: np.ndarray, lift: float):
    """Pooled two-proportion z of arm B against A after each day: shape (experiments, days)."""
    n = np.cumsum(per_day)
    xa = np.cumsum(rng.binomial(per_day, RATE, (experiments, len(per_day))), axis=1)
    xb = np.cumsum(rng.binomial(per_day, RATE * (1 + lift), (experiments, len(per_day))), axis=1)
    pooled = (xa + xb) / (2 * n)
    se = np.sqrt(pooled * (1 - pooled) * 2 / n)
    with np.errstate(invalid="ignore", divide="ignore"):  # no one converted yet: no z
        return (xb / n - xa / n) / se


def _first_look(crossed: np.ndarray) -> np.ndarray:
    """Per experiment, the first look (1-based) that crossed; 0 for none."""
    return np.where(crossed.any(axis=1), crossed.argmax(axis=1) + 1, 0)


def peeking(experiments: int, rng: np.random.Generator) -> None:
    bounds = np.array(boundaries(look_fractions(HORIZON, HORIZON), ALPHA))
    fixed = 1.959963984540054
    even = np.full(HORIZON, PER_DAY)
    # Half the people in the first week (400 a day), the other half over 21 days (133).
    front = np.concatenate([np.full(7, PER_DAY * HORIZON // 14), np.full(21, 133)])
    print(f"1. A/A, no effect: {experiments:,} experiments, {PER_DAY} people a day per arm, "
          f"{RATE:.0%} convert, daily looks over {HORIZON} days")  # fmt: skip
    print(f"   boundaries |z| >= c_k: day 1 inf, day 7 {bounds[6]:.2f}, day 14 {bounds[13]:.2f}, "
          f"day 21 {bounds[20]:.2f}, day 28 {bounds[27]:.3f}")  # fmt: skip
    back = front[::-1]
    ramp = np.linspace(50, 350, HORIZON).astype(int)
    fractions = look_fractions(HORIZON, HORIZON)
    for label, per_day in (
        ("even accrual", even),
        ("half in week 1", front),
        ("half in week 4", back),
        ("ramp 50 to 350/day", ramp),
    ):
        # The job's boundaries: spending on calendar time, correlation on the information
        # 1 / (1/n + 1/n) of each look (people per arm n); beside them, calendar time alone.
        n = np.cumsum(per_day)
        by_information = np.array(boundaries(fractions, ALPHA, n / 2))
        z = np.abs(_daily_z(rng, experiments, per_day, 0.0))
        daily_fixed = (z >= fixed).any(axis=1).mean()
        last_fixed = (z[:, -1] >= fixed).mean()
        calendar = (z >= bounds).any(axis=1).mean()
        sequential = (z >= by_information).any(axis=1).mean()
        print(f"   {label:>18}: false positives, fixed-horizon acted on at the first daily "
              f"p < 0.05: {daily_fixed:.1%}; read once on day 28: {last_fixed:.1%}; "
              f"sequential (the job, information): {sequential:.1%}; sequential on calendar "
              f"time alone: {calendar:.1%}")  # fmt: skip
    # Three arms: B and C against control A, family-wise, Holm on the repeated p-values.
    za = rng.binomial(even, RATE, (experiments, HORIZON)).cumsum(axis=1)
    zb = rng.binomial(even, RATE, (experiments, HORIZON)).cumsum(axis=1)
    zc = rng.binomial(even, RATE, (experiments, HORIZON)).cumsum(axis=1)
    n = np.cumsum(even)

    def z_of(x1: np.ndarray, x0: np.ndarray) -> np.ndarray:
        pooled = (x1 + x0) / (2 * n)
        return np.abs((x1 - x0) / n / np.sqrt(pooled * (1 - pooled) * 2 / n))

    z_b, z_c = z_of(zb, za), z_of(zc, za)
    any_unadjusted = ((z_b >= bounds) | (z_c >= bounds)).any(axis=1).mean()
    # Holm at level alpha over two arms: the smaller repeated p-value must pass alpha/2,
    # i.e. cross the boundaries of level alpha/2 (the larger then alpha: nested).
    half = np.array(boundaries(look_fractions(HORIZON, HORIZON), ALPHA / 2))
    any_holm = ((z_b >= half) | (z_c >= half)).any(axis=1).mean()
    fixed_any = ((z_b >= fixed) | (z_c >= fixed)).any(axis=1).mean()
    print(f"   three arms (2 against control), any arm flagged: fixed-horizon daily "
          f"{fixed_any:.1%}; sequential, no correction {any_unadjusted:.1%}; "
          f"sequential + Holm {any_holm:.1%}")  # fmt: skip


def price(experiments: int, rng: np.random.Generator) -> None:
    bounds = np.array(boundaries(look_fractions(HORIZON, HORIZON), ALPHA))
    z = _daily_z(rng, experiments, np.full(HORIZON, PER_DAY), 0.10)
    at_end = (np.abs(z[:, -1]) >= 1.959963984540054).mean()
    first = _first_look(np.abs(z) >= bounds)
    detected = (first > 0).mean()
    mean_day = first[first > 0].mean()
    print(f"2. A true lift of 10% ({RATE:.0%} -> {RATE * 1.1:.0%}), {experiments:,} experiments: "
          f"detected by the fixed-horizon test read once on day 28: {at_end:.1%}; by the "
          f"sequential test at any daily look: {detected:.1%}, on day {mean_day:.1f} on "
          f"average")  # fmt: skip


def cuped(
    rng: np.random.Generator, pre_days: int, experiments: int = 200, people: int = 5000
) -> None:
    raw_w, adj_w, raw_b, adj_b, rhos, rhos_b = [], [], [], [], [], []
    for _ in range(experiments):
        values, binary, covs = {}, {}, {}
        for arm in ("control", "b"):
            weekly = rng.gamma(0.6, 0.5, people)  # mean 0.3 purchases a week, skewed
            before = rng.poisson(weekly * pre_days / 7).astype(float)
            after = rng.poisson(weekly * 2).astype(float)
            values[arm], binary[arm], covs[arm] = after, (after > 0).astype(float), before
        raw = mean_effect(values["b"], values["control"])
        _, adjusted = cuped_effects(values, covs, "control")
        x1, x0 = int(binary["b"].sum()), int(binary["control"].sum())
        raw_bin = proportion_effect(x1, people, x0, people)
        _, adjusted_bin = cuped_effects(binary, covs, "control")
        raw_w.append(raw.diff_high - raw.diff_low)
        adj_w.append(adjusted["b"].diff_high - adjusted["b"].diff_low)
        raw_b.append(raw_bin.diff_high - raw_bin.diff_low)
        adj_b.append(adjusted_bin["b"].diff_high - adjusted_bin["b"].diff_low)
        every_x = np.concatenate(list(covs.values()))
        rhos.append(np.corrcoef(np.concatenate(list(values.values())), every_x)[0, 1])
        rhos_b.append(np.corrcoef(np.concatenate(list(binary.values())), every_x)[0, 1])
    for label, r, a, rho in (
        ("purchases in 14 days (count)", raw_w, adj_w, rhos),
        ("bought in 14 days (binary, the job's outcome)", raw_b, adj_b, rhos_b),
    ):
        ratio = np.mean(a) / np.mean(r)
        print(f"   {pre_days} days before, {label}: mean 95% interval width raw "
              f"{np.mean(r):.4f}, CUPED {np.mean(a):.4f} (x{ratio:.2f}; corr "
              f"{np.mean(rho):.2f}, sqrt(1 - rho^2) = {np.sqrt(1 - np.mean(rho) ** 2):.2f}); "
              f"the same precision without CUPED takes {1 / ratio**2:.2f}x the people")  # fmt: skip


def cost() -> None:
    for look, horizon in ((20, HORIZON), (90, 90)):
        fractions = look_fractions(look, horizon)
        started = time.perf_counter()
        boundaries(fractions, ALPHA)
        one_set = time.perf_counter() - started
        timings = []
        for z in (1.2, 2.1, 2.9):
            started = time.perf_counter()
            sequential_p_value(z, fractions)
            timings.append(time.perf_counter() - started)
        print(f"4. Look {look} of {horizon}: one set of boundaries {one_set:.2f} s; one arm's "
              f"sequential p-value {', '.join(f'{t:.2f} s' for t in timings)} "
              f"(z = 1.2, 2.1, 2.9)")  # fmt: skip


def main() -> None:
    experiments = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    rng = np.random.default_rng(2026)
    print(_machine())
    started = time.perf_counter()
    peeking(experiments, rng)
    price(experiments, rng)
    print("3. CUPED on a simulated repeat-purchase outcome, 200 experiments of 2 x 5,000 people")
    for pre_days in (14, 28, 56):
        cuped(rng, pre_days)
    cost()
    print(f"({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
