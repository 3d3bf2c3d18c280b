"""Assignment: deterministic, proportional to allocation, no control for critical sources;
the experiment running in a space at a time, and the person's arm in it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from turnstream.core.experiments import arm_at, assign, pick_arm, served_inferences, unit_point
from turnstream.models.measurement import ELEMENTS, Experiment, MeasurementDocument

N = 20_000


def _experiment(**overrides: object) -> Experiment:
    return Experiment.model_validate(
        {
            "id": "exp-1",
            "space_id": "acme",
            "starts_at": "2026-10-01T00:00:00Z",
            "arms": [
                {"name": "control", "allocation": 10},
                {"name": "no_soft_signals", "allocation": 30, "drops": ["soft_signals"]},
                {"name": "full", "allocation": 60},
            ],
            "critical_sources": ["pharmacy"],
            **overrides,
        }
    )


def test_the_same_person_always_lands_in_the_same_arm() -> None:
    e = _experiment()
    first = [assign(e, f"p{i}", "web") for i in range(500)]
    again = [assign(_experiment(), f"p{i}", "web") for i in range(500)]
    assert first == again
    assert len(set(first)) == 3


def test_the_experiment_id_reshuffles_people() -> None:
    a, b = _experiment(), _experiment(id="exp-2")
    moved = sum(assign(a, f"p{i}", "web") != assign(b, f"p{i}", "web") for i in range(1000))
    assert moved > 300  # independent draws: ~ 1 - (.1² + .3² + .6²) = 54% move


def test_arms_fill_in_proportion_to_their_allocation() -> None:
    e = _experiment()
    counts = Counter(assign(e, f"person-{i}", "web") for i in range(N))
    # 4 standard deviations of a binomial share at N = 20k is under 1.4 points.
    assert counts["control"] / N == pytest.approx(0.10, abs=0.012)
    assert counts["no_soft_signals"] / N == pytest.approx(0.30, abs=0.014)
    assert counts["full"] / N == pytest.approx(0.60, abs=0.014)


def test_a_critical_source_never_lands_in_control() -> None:
    e = _experiment()
    arms = Counter(assign(e, f"person-{i}", "pharmacy") for i in range(N))
    assert "control" not in arms
    # control's share is redistributed by the other arms' weights (30:60).
    assert arms["no_soft_signals"] / N == pytest.approx(1 / 3, abs=0.015)
    assert arms["full"] / N == pytest.approx(2 / 3, abs=0.015)


def test_only_control_people_move_when_the_source_is_critical() -> None:
    e = _experiment()
    for i in range(2000):
        web, pharmacy = assign(e, f"p{i}", "web"), assign(e, f"p{i}", "pharmacy")
        if web != "control":
            assert pharmacy == web


def test_without_a_control_arm_a_critical_source_changes_nothing() -> None:
    e = _experiment(
        arms=[{"name": "a", "allocation": 1}, {"name": "b", "allocation": 1}],
    )
    assert all(assign(e, f"p{i}", "pharmacy") == assign(e, f"p{i}", "web") for i in range(500))


def test_pick_arm_walks_the_cumulative_allocation() -> None:
    arms = _experiment().arms
    assert pick_arm(arms, 0.0).name == "control"
    assert pick_arm(arms, 0.0999).name == "control"
    assert pick_arm(arms, 0.1001).name == "no_soft_signals"
    assert pick_arm(arms, 0.3999).name == "no_soft_signals"
    assert pick_arm(arms, 0.4001).name == "full"
    assert pick_arm(arms, 0.999999999).name == "full"


def test_unit_points_are_in_the_unit_interval_and_spread() -> None:
    points = [unit_point("exp", str(i)) for i in range(N)]
    assert all(0.0 <= p < 1.0 for p in points)
    assert sum(points) / N == pytest.approx(0.5, abs=0.01)


def test_arm_at_the_running_experiment_of_the_space() -> None:
    ended = _experiment(id="exp-0", ends_at="2026-10-15T00:00:00Z")
    doc = MeasurementDocument(experiments=(ended, _experiment(starts_at="2026-10-20T00:00:00Z")))
    before = datetime(2026, 9, 30, tzinfo=UTC)
    first = datetime(2026, 10, 2, tzinfo=UTC)
    gap = datetime(2026, 10, 16, tzinfo=UTC)
    later = datetime(2026, 10, 21, tzinfo=UTC)
    assert arm_at(doc, "acme", "p1", "web", before) is None
    assert arm_at(doc, "acme", "p1", "web", gap) is None  # exp-0 ended, exp-1 not started
    assert arm_at(doc, "lumen", "p1", "web", first) is None  # another space's experiments
    found = arm_at(doc, "acme", "p1", "web", first)
    assert found is not None and found[0].id == "exp-0"
    assert found[1].name == assign(ended, "p1", "web")
    running = arm_at(doc, "acme", "p1", "web", later)
    assert running is not None and running[0].id == "exp-1"
    # Everyone in a control arm of a critical source is moved out of it.
    people = [f"p{i}" for i in range(400)]
    arms = {arm_at(doc, "acme", p, "pharmacy", later)[1].name for p in people}  # type: ignore[index]
    assert "control" not in arms and arms == {"no_soft_signals", "full"}
    controls = [arm_at(doc, "acme", p, "web", later)[1] for p in people]  # type: ignore[index]
    assert any(a.control and a.dropped == frozenset(ELEMENTS) for a in controls)


def test_served_inferences_drop_what_the_arm_drops() -> None:
    @dataclass(frozen=True)
    class Inf:
        kind: str

    found = [Inf("affinity"), Inf("attribute"), Inf("interest"), Inf("implicit_negative")]
    assert served_inferences(frozenset(), found) == found
    assert served_inferences(frozenset({"soft_signals"}), found) == [Inf("attribute")]
    assert [i.kind for i in served_inferences(frozenset({"inferred_sizes"}), found)] == [
        "affinity", "interest", "implicit_negative"
    ]  # fmt: skip
    assert served_inferences(frozenset({"soft_signals", "inferred_sizes"}), found) == []
