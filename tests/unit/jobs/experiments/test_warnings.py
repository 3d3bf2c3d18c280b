"""Warnings an analyst must read the figures with, one population for every figure,
``compare`` writing nothing unless asked, and the sequential look of ``analyze``."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from scipy.stats import chisquare
from typer.testing import CliRunner

import turnstream.jobs.scheduler as scheduler
from turnstream.config import Settings
from turnstream.core.experiment_warnings import (
    ArmCounts,
    arm_warnings,
    excluded_warnings,
    horizon_warning,
    peeking_warning,
    sample_ratio_warning,
)
from turnstream.entrypoints.cli.main import app
from turnstream.errors import BadJobParameter
from turnstream.jobs.experiments.analysis import analyze
from turnstream.jobs.experiments.analysis_checks import parse_look, sequential_look
from turnstream.jobs.experiments.compare import (
    Assignment,
    Attribution,
    Cited,
    Sighting,
    enrol,
    summarize,
)
from turnstream.jobs.registry import JOBS, comparison_from_dict, comparison_to_dict
from turnstream.models.measurement import MeasurementDocument

NO_SETUP = {"TURNSTREAM_CONFIG": "/nonexistent/turnstream.toml", "TURNSTREAM_DSN": "bogus://"}
START = datetime(2026, 11, 1, tzinfo=UTC)
DOC = MeasurementDocument.model_validate(
    {
        "experiments": [
            {
                "id": "exp",
                "space_id": "acme",
                "starts_at": START.isoformat(),
                "critical_sources": ["pharmacy"],
                "horizon_days": 10,
                "arms": [
                    {"name": "control", "allocation": 1},
                    {"name": "b", "allocation": 1},
                ],
            }
        ]
    }
)
EXP = DOC.experiments[0]


def _codes(warnings: list) -> list[str]:
    return [w.code for w in warnings]


# --- the rules ---------------------------------------------------------------------------


def test_an_arm_at_the_minimum_is_not_small_one_below_is() -> None:
    assert arm_warnings([ArmCounts("control", 100, 5), ArmCounts("b", 100, 7)]) == []
    [small] = arm_warnings([ArmCounts("control", 99, 5), ArmCounts("b", 100, 7)])
    assert small.code == "small_arm" and small.arms == ("control",)
    assert "control (99)" in small.message and "minimum of 100" in small.message
    with pytest.raises(ValueError, match="min_units"):
        arm_warnings([], min_units=0)


def test_zero_events_only_for_counts_and_arms_with_units() -> None:
    warnings = arm_warnings(
        [ArmCounts("control", 1000, 0), ArmCounts("b", 1000, 5), ArmCounts("c", 0, 0)], 1
    )
    [zero] = [w for w in warnings if w.code == "zero_events"]
    assert zero.arms == ("control",) and "0 of 1000" in zero.message
    # A continuous metric has no events to count.
    assert arm_warnings([ArmCounts("control", 1000, None)], 1) == []


def test_srm_warning_names_the_configured_split() -> None:
    assert sample_ratio_warning({"control": 500, "b": 500}, {}, None) is None
    warning = sample_ratio_warning({"control": 600, "b": 400}, {"control": 1, "b": 1}, 1e-10)
    assert warning is not None and warning.code == "sample_ratio"
    assert "control 600 (60.0% against 50.0%)" in warning.message
    assert peeking_warning(True) is None and peeking_warning(False) is not None
    assert horizon_warning(28, 28) is None
    past = horizon_warning(338, 28)
    assert past is not None and "day 338" in past.message and "look 28" in past.message
    assert _codes(excluded_warnings(0, 0)) == []
    assert _codes(excluded_warnings(3, 2)) == ["multiple_arms", "critical_source"]


# --- one population ----------------------------------------------------------------------


def _at(day: int) -> datetime:
    return START + timedelta(days=day)


def test_people_in_two_arms_are_found_and_left_out() -> None:
    recorded = {"moved": Assignment("moved", "b", "web", _at(1), "hashed")}
    cited = [
        Cited("both", "control", "web", _at(1), arms_cited=2),
        Cited("moved", "control", "web", _at(2)),
        Cited("fine", "b", "web", _at(1)),
    ]
    assignments, notes, several = enrol(EXP, cited, recorded, [Sighting("h", "web", _at(1))])
    assert several == {"both", "moved"}
    assert notes["cited_conflicting_arms"] == 1
    assert set(assignments) == {"both", "moved", "fine", "h"}


def test_the_srm_check_and_the_estimates_read_the_same_people() -> None:
    people = {f"c{i}": Assignment(f"c{i}", "control", "web", _at(1), "hashed") for i in range(50)}
    people |= {f"b{i}": Assignment(f"b{i}", "b", "web", _at(1), "hashed") for i in range(50)}
    # Critical-source people sit in b only: kept, they would tilt both the split and b's rate.
    people |= {f"x{i}": Assignment(f"x{i}", "b", "pharmacy", _at(1), "hashed") for i in range(30)}
    people["two"] = Assignment("two", "control", "web", _at(1), "cited")
    won = frozenset({"c1", "b1", "b2", *(f"x{i}" for i in range(30)), "two"})
    c = summarize(EXP, people, Attribution(won), _at(5), several=frozenset({"two"}))
    assert [(a.name, a.people, a.successes) for a in c.arms] == [("control", 50, 1), ("b", 50, 2)]
    assert c.srm.p_value == pytest.approx(chisquare([50, 50]).pvalue)
    assert c.diagnostics["excluded_critical_source"] == 30
    assert c.diagnostics["excluded_multiple_arms"] == 1
    assert (c.diagnostics["people"], c.diagnostics["analysed"]) == (131, 100)
    assert {"multiple_arms", "critical_source", "small_arm"} <= set(_codes(list(c.warnings)))
    # The warnings survive the job's JSON (the worker's answer).
    assert comparison_from_dict(json.loads(json.dumps(comparison_to_dict(c)))) == c


def test_a_look_past_the_horizon_is_said() -> None:
    people = {f"p{i}": Assignment(f"p{i}", ("control", "b")[i % 2], "web", _at(1), "hashed")
              for i in range(400)}  # fmt: skip
    c = summarize(EXP, people, Attribution(frozenset()), _at(40))
    assert "past_horizon" in _codes(list(c.warnings))
    assert c.look is not None and "day 41, past the 10-day horizon" in c.look.verdict
    assert "of 10" not in c.look.verdict
    assert "zero_events" in _codes(list(c.warnings))
    assert "small_arm" not in _codes(list(c.warnings))


# --- compare: reads only, no future ------------------------------------------------------


def _measurement(tmp_path: Path) -> Path:
    path = tmp_path / "m.toml"
    path.write_text(
        f'[[experiments]]\nid = "exp"\nspace_id = "acme"\nstarts_at = {START.isoformat()}\n'
        '[[experiments.arms]]\nname = "control"\nallocation = 1\n'
        '[[experiments.arms]]\nname = "b"\nallocation = 1\n'
    )
    return path


def test_a_look_in_the_future_is_refused_before_the_store_is_read(tmp_path: Path) -> None:
    settings = Settings.model_validate({"jobs": {"timezone": "Pacific/Kiritimati"}})
    tomorrow_there = (datetime.now(UTC) + timedelta(hours=14) + timedelta(days=1)).date()
    params = {"measurement": str(_measurement(tmp_path)), "as_of": tomorrow_there.isoformat()}
    with pytest.raises(BadJobParameter, match=r"as_of: .*a look in the future"):
        JOBS["experiments"](None, settings, params)  # type: ignore[arg-type]


def test_only_the_scheduler_asks_the_experiments_job_to_write(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[tuple[str, dict]] = []
    monkeypatch.setattr(scheduler, "run_job", lambda s, name, p: calls.append((name, p)))
    zone = scheduler.ZoneInfo("UTC")
    for name in ("experiments", "priors"):
        scheduler._run(Settings(), name, zone)
    assert calls[0][1]["write"] == "1" and "write" not in calls[1][1]


# --- analyze: warnings, sequential, control first ----------------------------------------


def _csv(path: Path, rows: dict[str, tuple[int, int]], first: str = "b") -> Path:
    """``arm -> (units, ones)`` as a CSV of 0/1 values, ``first``'s rows first."""
    lines = ["arm,converted"]
    for arm in sorted(rows, key=lambda a: a != first):
        units, ones = rows[arm]
        lines += [f"{arm},{int(i < ones)}" for i in range(units)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _analyze(path: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        ["experiments", "analyze", str(path), "--arm-column", "arm", "--control", "control",
         "--metric", "converted", *extra],
        env=NO_SETUP,
    )  # fmt: skip
    return result.exit_code, result.output


def test_analyze_warns_of_a_control_of_one_and_zero_events(tmp_path: Path) -> None:
    tiny = _csv(tmp_path / "tiny.csv", {"control": (1, 0), "b": (200, 30)})
    code, output = _analyze(tiny, "--format", "json")
    assert code == 0, output
    report = json.loads(output)
    codes = {w["code"] for w in report["warnings"]}
    assert codes == {"small_arm", "zero_events", "peeking", "sample_ratio"}  # 1 against 200
    assert list(report["arms"]) == ["control", "b"]  # control first, whatever the file's order
    zero = _csv(tmp_path / "zero.csv", {"control": (1000, 0), "b": (1000, 5)})
    code, output = _analyze(zero)
    text = " ".join(output.split())
    assert code == 0 and "warning (zero_events)" in text and "control (0 of 1000)" in text
    assert text.index("control") < text.index(" b ")


def test_analyze_checks_the_split_it_is_given(tmp_path: Path) -> None:
    two_to_one = _csv(tmp_path / "split.csv", {"control": (1000, 100), "b": (500, 50)})
    _, equal = _analyze(two_to_one, "--format", "json")
    assert "sample_ratio" in {w["code"] for w in json.loads(equal)["warnings"]}
    _, planned = _analyze(two_to_one, "--format", "json", "--allocation", "control=2,b=1")
    assert "sample_ratio" not in {w["code"] for w in json.loads(planned)["warnings"]}


def test_analyze_sequential_look(tmp_path: Path) -> None:
    data = _csv(tmp_path / "seq.csv", {"control": (2000, 200), "b": (2000, 260)})
    code, output = _analyze(data, "--format", "json", "--sequential", "3/10")
    assert code == 0, output
    report = json.loads(output)
    assert "peeking" not in {w["code"] for w in report["warnings"]}
    seq = report["sequential"]
    assert (seq["look"], seq["looks"], seq["basis"]) == (3, 10, "raw")
    fixed = report["arms"]["b"]["p_value"]
    assert seq["arms"]["b"]["p_value"] > fixed  # an early look spends little alpha
    low, high = seq["arms"]["b"]["diff_ci"]
    assert high - low > report["arms"]["b"]["diff_ci"][1] - report["arms"]["b"]["diff_ci"][0]
    for bad in ("11/10", "0/10", "3-10", "3/"):
        code, output = _analyze(data, "--sequential", bad)
        assert code != 0 and "--sequential" in output


def test_one_planned_look_is_the_fixed_horizon_test() -> None:
    result = analyze({"control": [0] * 900 + [1] * 100, "b": [0] * 870 + [1] * 130}, "control")
    look = sequential_look(result, 1, 1)
    assert look.arms[0].p_value == pytest.approx(result.arm("b").raw.p_value, rel=1e-5)
    assert look.boundary == pytest.approx(1.959964, abs=1e-5)
    assert parse_look(" 2 / 5 ") == (2, 5)
