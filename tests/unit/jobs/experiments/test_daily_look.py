"""The daily look: the pre-period covariate, CUPED, Holm and the sequential verdict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from scipy.stats import norm

from turnstream.jobs.experiments.analysis import cuped_effects, holm
from turnstream.jobs.experiments.compare import (
    Assignment,
    OutcomeEvent,
    arm_units,
    attribute,
    earlier_looks,
    per_person_outcomes,
    pre_period_counts,
)
from turnstream.jobs.experiments.looks import Earlier, assess, information, look_number
from turnstream.jobs.experiments.sequential import (
    boundaries,
    obf_spending,
    sequential_p_value,
)
from turnstream.jobs.experiments.stats import ArmCount, compare_arms
from turnstream.models.measurement import Experiment

START = datetime(2026, 10, 1, tzinfo=UTC)


def _experiment(**fields: Any) -> Experiment:
    return Experiment.model_validate(
        {
            "id": "exp-1",
            "space_id": "acme",
            "starts_at": START.isoformat(),
            "arms": [
                {"name": "control", "allocation": 1},
                {"name": "a", "allocation": 1},
                {"name": "b", "allocation": 1},
            ],
            **fields,
        }
    )


def _units(effects: dict[str, float], n: int, seed: int) -> dict[str, tuple[list, list]]:
    """Per arm, success (0/1) leaning on the pre-period purchases, and those purchases."""
    rng = np.random.default_rng(seed)
    out = {}
    for arm, effect in effects.items():
        x = rng.poisson(1.5, n)
        p = np.clip(0.1 + 0.12 * x + effect, 0, 1)
        out[arm] = ((rng.random(n) < p).astype(int).tolist(), x.tolist())
    return out


def _look(e: Experiment, units: dict[str, tuple[list, list]], look: int, previous=None):
    counts = [ArmCount(a, len(y), sum(y)) for a, (y, _) in units.items()]
    return assess(e, compare_arms(counts, "control"), units, look, previous)


def test_look_number_counts_days_from_the_start_day() -> None:
    assert look_number(START, START + timedelta(hours=23)) == 1
    assert look_number(START, START + timedelta(days=13, hours=1)) == 14
    assert look_number(START, START - timedelta(hours=1)) == 0


def test_pre_period_counts_only_the_days_before_each_assignment() -> None:
    at = START + timedelta(days=3)
    assignments = {
        "p": Assignment("p", "a", "web", at, "hashed"),
        "q": Assignment("q", "b", "web", START, "hashed"),
    }
    events = [
        OutcomeEvent("p", at - timedelta(days=7)),  # exactly 7 days before: counts
        OutcomeEvent("p", at - timedelta(days=7, seconds=1)),  # just outside
        OutcomeEvent("p", at - timedelta(seconds=1)),
        OutcomeEvent("p", at),  # at assignment: after, not before
        OutcomeEvent("q", START - timedelta(days=1)),
        OutcomeEvent("stranger", START - timedelta(days=1)),
    ]
    assert pre_period_counts(assignments, events, 7) == {"p": 2, "q": 1}
    units = arm_units(_experiment(), assignments.values(), {"q": 3}, {"p": 2, "q": 1})
    assert units == {"control": ([], [], []), "a": ([0], [2], [0]), "b": ([1], [1], [3])}


def test_no_effect_early_on_says_wait() -> None:
    e = _experiment()
    units = _units({"control": 0.0, "a": 0.0, "b": 0.0}, 3000, seed=1)
    first = _look(e, units, 1)
    assert first.boundary is None  # day 1 spends ~1e-25: nothing can be acted on
    assert not first.may_act and first.verdict.startswith("wait")
    assert first.basis == "cuped" and first.theta is not None
    later = _look(e, units, 10)
    # No earlier look was recorded: this one may spend all that 10/28 of the horizon allows.
    assert later.boundary == pytest.approx(norm.isf(obf_spending(10 / 28) / 2))
    assert not later.may_act and "look 10 of 28" in later.verdict


def test_a_clear_effect_crosses_and_may_be_acted_on() -> None:
    e = _experiment()
    units = _units({"control": 0.0, "a": 0.08, "b": 0.0}, 4000, seed=2)
    look = _look(e, units, 20)
    a, b = look.arm("a"), look.arm("b")
    assert look.may_act and look.verdict.startswith("act: a differ")
    assert a.seq_p_holm <= 0.05 < b.seq_p_holm
    # The test read the CUPED z; its repeated p-value is the one of that z at look 20.
    _, adjusted = cuped_effects(
        {k: np.array(y, float) for k, (y, _) in units.items()},
        {k: np.array(x, float) for k, (_, x) in units.items()},
        "control",
    )
    assert a.z == pytest.approx(adjusted["a"].z)
    assert a.seq_p_value == pytest.approx(sequential_p_value(a.z, [20 / 28]))
    assert a.seq_p_holm == pytest.approx(holm([a.seq_p_value, b.seq_p_value])[0])
    # The repeated interval is wider than the fixed-horizon CUPED interval it widens.
    assert a.seq_diff_low < a.cuped.diff_low < a.cuped.diff_high < a.seq_diff_high
    # Holm on the fixed-horizon p-values, raw and CUPED.
    raw = compare_arms([ArmCount(k, len(y), sum(y)) for k, (y, _) in units.items()], "control")
    assert [a.p_holm, b.p_holm] == pytest.approx(holm([raw[1].p_value, raw[2].p_value]))
    assert a.cuped_p_holm == pytest.approx(holm([a.cuped.p_value, b.cuped.p_value])[0])


def test_an_earlier_crossing_stands_on_a_quieter_day() -> None:
    e = _experiment()
    units = _units({"control": 0.0, "a": 0.0, "b": 0.0}, 3000, seed=3)
    quiet = _look(e, units, 12)
    assert not quiet.may_act
    crossed = _look(e, units, 12, previous={"a": Earlier(seq_p_value=0.001)})
    assert crossed.arm("a").seq_p_value == 0.001 and crossed.may_act
    assert crossed.arm("b").seq_p_value == quiet.arm("b").seq_p_value


def test_the_horizon_ends_the_test_and_cuped_off_reads_the_raw_z() -> None:
    e = _experiment(cuped_days=0, horizon_days=14)
    units = _units({"control": 0.0, "a": 0.0, "b": 0.0}, 2000, seed=4)
    look = _look(e, units, 16)
    assert look.basis == "raw" and look.theta is None and look.arm("a").cuped is None
    assert look.may_act and look.verdict.startswith("final: no arm differs")
    # Past the horizon the last look's boundary stands (the planned test is over).
    assert look.boundary == pytest.approx(norm.isf(0.025))
    raw = compare_arms([ArmCount(k, len(y), sum(y)) for k, (y, _) in units.items()], "control")
    assert look.arm("a").z == pytest.approx(raw[1].z)


def test_outcomes_per_person_count_every_outcome_in_the_window() -> None:
    e = _experiment(window_days=7)
    at = START + timedelta(days=1)
    assignments = {p: Assignment(p, "a", "web", at, "hashed") for p in ("p", "q", "r")}
    events = [
        OutcomeEvent("p", at + timedelta(days=1)),
        OutcomeEvent("p", at + timedelta(days=2)),
        OutcomeEvent("p", at + timedelta(days=8)),  # past the 7-day window
        OutcomeEvent("q", at + timedelta(days=3)),
        OutcomeEvent("r", at - timedelta(days=1)),  # before assignment
    ]
    attribution = attribute(e, assignments, events, {}, at + timedelta(days=30))
    assert attribution.successes == {"p", "q"} and attribution.outcomes == {"p": 2, "q": 1}


def test_per_person_outcomes_compare_means_with_and_without_cuped() -> None:
    rng = np.random.default_rng(8)
    units = {}
    for arm, extra in (("control", 0.0), ("a", 0.3), ("b", 0.0)):
        x = rng.poisson(1.5, 3000)
        count = rng.poisson(0.4 + 0.3 * x + extra)
        units[arm] = ((count > 0).astype(int).tolist(), x.tolist(), count.tolist())
    result = per_person_outcomes(_experiment(), units)
    a = result.arm("a")
    assert result.kind == "continuous" and result.control == "control"
    assert a.mean == pytest.approx(np.mean(units["a"][2]))
    assert a.raw.diff == pytest.approx(np.mean(units["a"][2]) - np.mean(units["control"][2]))
    assert a.cuped.diff_high - a.cuped.diff_low < a.raw.diff_high - a.raw.diff_low
    assert a.cuped.diff_low < 0.3 < a.cuped.diff_high
    assert per_person_outcomes(_experiment(cuped_days=0), units).arm("a").cuped is None
    units["b"] = ([1], [0], [1])
    assert per_person_outcomes(_experiment(), units) is None  # an arm of one person


def test_earlier_looks_set_the_boundary_by_their_information() -> None:
    e = _experiment()
    day = START.date()
    rows = [
        (day + timedelta(days=2), "control", 900, None),
        (day + timedelta(days=2), "a", 1000, 0.4),
        (day + timedelta(days=2), "b", 950, 0.6),
        (day + timedelta(days=6), "control", 2000, None),
        (day + timedelta(days=6), "a", 2100, 0.2),
        (day + timedelta(days=6), "b", 0, None),  # no one yet: no information
    ]
    earlier = earlier_looks(e, rows)
    assert earlier["a"] == Earlier(((3, information(1000, 900)), (7, information(2100, 2000))), 0.2)
    assert earlier["b"] == Earlier(((3, information(950, 900)),), 0.6)

    units = _units({"control": 0.0, "a": 0.0, "b": 0.0}, 3000, seed=5)
    look = _look(e, units, 12, previous=earlier)
    now = information(3000, 3000)
    expected = boundaries(
        [3 / 28, 7 / 28, 12 / 28], 0.05, [information(1000, 900), information(2100, 2000), now]
    )[-1]
    assert look.arm("a").boundary == pytest.approx(expected)
    assert look.arm("a").seq_p_value <= 0.2  # the earlier smallest stands
    # Information that did not grow adds nothing: a look with more people than now is left out.
    stale = {"a": Earlier(((3, information(5000, 5000)), (7, information(2100, 2000))))}
    alone = boundaries([7 / 28, 12 / 28], 0.05, [information(2100, 2000), now])[-1]
    assert _look(e, units, 12, previous=stale).arm("a").boundary == pytest.approx(alone)
