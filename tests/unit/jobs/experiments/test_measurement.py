"""The measurement document: defaults, the control arm, and errors that name the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from turnstream.errors import ConfigError
from turnstream.models.measurement import (
    ELEMENTS,
    MeasurementDocument,
    load_measurement,
    measurement_errors,
)

EXAMPLE = Path(__file__).parents[4] / "examples" / "measurement.toml"


def _doc(**experiment: Any) -> dict[str, Any]:
    base = {
        "id": "exp-1",
        "space_id": "acme",
        "starts_at": "2026-10-01T00:00:00Z",
        "arms": [
            {"name": "control", "allocation": 1},
            {"name": "full", "allocation": 1},
        ],
    }
    return {"experiments": [{**base, **experiment}]}


def _paths(data: dict[str, Any]) -> dict[str, str]:
    with pytest.raises(ValidationError) as caught:
        MeasurementDocument.model_validate(data)
    return dict(measurement_errors(caught.value))


def test_defaults_and_the_implied_control_arm() -> None:
    e = MeasurementDocument.model_validate(_doc()).experiments[0]
    assert e.outcome == "purchase" and e.window_days == 14 and e.ends_at is None
    assert (e.cuped_days, e.horizon_days, e.alpha) == (28, 28, 0.05)
    assert e.control_arm is not None and e.control_arm.name == "control"
    assert e.control_arm.dropped == frozenset(ELEMENTS)
    assert e.arm("full") is not None and e.arm("full").dropped == frozenset()
    assert e.baseline.name == "control"


def test_without_control_the_first_arm_is_the_baseline() -> None:
    arms = [
        {"name": "a", "allocation": 1},
        {"name": "b", "allocation": 2, "drops": ["state_block"]},
    ]
    e = MeasurementDocument.model_validate(_doc(arms=arms)).experiments[0]
    assert e.control_arm is None and e.baseline.name == "a"
    assert e.arm("b").dropped == {"state_block"}


def test_a_zero_allocation_names_the_arm_field() -> None:
    arms = [{"name": "control", "allocation": 1}, {"name": "full", "allocation": 0}]
    errors = _paths(_doc(arms=arms))
    assert "experiments[0].arms[1].allocation" in errors
    assert "greater than 0" in errors["experiments[0].arms[1].allocation"]


def test_an_unknown_drop_names_the_drop() -> None:
    arms = [{"name": "a", "allocation": 1}, {"name": "b", "allocation": 1, "drops": ["price"]}]
    assert "experiments[0].arms[1].drops[0]" in _paths(_doc(arms=arms))


def test_repeated_arm_names_name_the_arms_field() -> None:
    arms = [{"name": "full", "allocation": 1}, {"name": "full", "allocation": 1}]
    errors = _paths(_doc(arms=arms))
    assert "unique" in errors["experiments[0].arms"] and "full" in errors["experiments[0].arms"]


def test_two_control_arms_are_refused() -> None:
    arms = [
        {"name": "control", "allocation": 1},
        {"name": "holdout", "allocation": 1, "control": True},
        {"name": "full", "allocation": 1},
    ]
    assert "at most one control arm" in _paths(_doc(arms=arms))["experiments[0].arms"]


def test_a_control_arm_with_partial_drops_names_drops() -> None:
    arms = [
        {"name": "control", "allocation": 1, "drops": ["soft_signals"]},
        {"name": "full", "allocation": 1},
    ]
    assert "experiments[0].arms[0].drops" in _paths(_doc(arms=arms))


def test_an_arm_named_control_cannot_say_it_is_not() -> None:
    arms = [{"name": "control", "allocation": 1, "control": False}, {"name": "b", "allocation": 1}]
    assert "experiments[0].arms[0].control" in _paths(_doc(arms=arms))


def test_times_must_carry_a_zone_and_end_after_the_start() -> None:
    assert "experiments[0].starts_at" in _paths(_doc(starts_at="2026-10-01T00:00:00"))
    errors = _paths(_doc(ends_at="2026-09-01T00:00:00Z"))
    assert errors["experiments[0].ends_at"] == "must be after starts_at"


def test_unknown_fields_outcomes_and_windows_are_refused() -> None:
    assert "experiments[0].colour" in _paths(_doc(colour="red"))
    assert "experiments[0].outcome" in _paths(_doc(outcome="delivery"))
    assert "experiments[0].window_days" in _paths(_doc(window_days=0))
    assert "experiments[0].arms" in _paths(_doc(arms=[{"name": "a", "allocation": 1}]))


def test_cuped_days_horizon_and_alpha_are_bounded() -> None:
    e = MeasurementDocument.model_validate(_doc(cuped_days=0, horizon_days=60, alpha=0.1))
    assert (e.experiments[0].cuped_days, e.experiments[0].horizon_days) == (0, 60)
    assert "experiments[0].cuped_days" in _paths(_doc(cuped_days=-1))
    assert "experiments[0].horizon_days" in _paths(_doc(horizon_days=0))
    assert "experiments[0].horizon_days" in _paths(_doc(horizon_days=91))
    assert "experiments[0].alpha" in _paths(_doc(alpha=0.5))
    assert "experiments[0].alpha" in _paths(_doc(alpha=0))


def test_documents_are_frozen() -> None:
    doc = MeasurementDocument.model_validate(_doc())
    with pytest.raises(ValidationError):
        doc.experiments[0].window_days = 3  # type: ignore[misc]


def test_load_the_example_toml() -> None:
    doc = load_measurement(EXAMPLE)
    e = doc.experiment("acme-block-elements-2026")
    assert e.space_id == "acme"
    assert [a.name for a in e.arms] == ["control", "no_soft_signals", "full"]
    assert e.arm("no_soft_signals").dropped == {"soft_signals"}
    assert e.starts_at.utcoffset() is not None
    with pytest.raises(ConfigError, match="no experiment 'nope'"):
        doc.experiment("nope")


def test_load_json_and_report_the_field_in_the_error(tmp_path: Path) -> None:
    good = tmp_path / "m.json"
    good.write_text(json.dumps(_doc(window_days=7)))
    assert load_measurement(good).experiments[0].window_days == 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_doc(space_id="Not A Space")))
    with pytest.raises(ConfigError, match=r"bad\.json: experiments\[0\]\.space_id: "):
        load_measurement(bad)


def test_load_refuses_missing_and_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_measurement(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[[experiments]\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_measurement(broken)
