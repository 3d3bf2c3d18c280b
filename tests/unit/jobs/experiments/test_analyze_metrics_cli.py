"""``experiments analyze`` with a ratio metric, capping and several covariates, and
``experiments plan``: the command gives the pure functions' figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app
from turnstream.jobs.experiments.analysis import cuped_fit
from turnstream.jobs.experiments.metrics import cap_upper, ratio_effect

NO_SETUP = {"TURNSTREAM_CONFIG": "/nonexistent/turnstream.toml", "TURNSTREAM_DSN": "bogus://"}


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["experiments", *args], env=NO_SETUP)
    return result.exit_code, result.output


def _csv(path: Path) -> tuple[Path, dict[str, dict[str, np.ndarray]]]:
    rng = np.random.default_rng(5)
    cols: dict[str, dict[str, np.ndarray]] = {}
    lines = ["arm,revenue,orders,before,visits"]
    for arm, lift in (("control", 0.0), ("b", 3.0)):
        orders = rng.poisson(2, 400) + 1.0
        before = rng.gamma(2, 10, 400)
        visits = rng.poisson(4, 400).astype(float)
        revenue = 0.5 * before + visits + rng.pareto(1.5, 400) * 10 + lift
        cols[arm] = {"revenue": revenue, "orders": orders, "before": before, "visits": visits}
        lines += [f"{arm},{float(r)!r},{float(o)!r},{float(b)!r},{float(v)!r}"
                  for r, o, b, v in zip(revenue, orders, before, visits, strict=True)]  # fmt: skip
    path.write_text("\n".join(lines) + "\n")
    return path, cols


def _analyze(path: Path, *extra: str) -> dict:
    code, output = _run("analyze", str(path), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", "--format", "json", *extra)  # fmt: skip
    assert code == 0, output
    return json.loads(output)


def test_a_ratio_metric_by_the_delta_method(tmp_path: Path) -> None:
    path, cols = _csv(tmp_path / "u.csv")
    report = _analyze(path, "--denominator", "orders")
    expected = ratio_effect(cols["b"]["revenue"], cols["b"]["orders"],
                            cols["control"]["revenue"], cols["control"]["orders"])  # fmt: skip
    assert expected is not None and report["kind"] == "ratio"
    assert report["arms"]["b"]["diff"] == pytest.approx(expected.diff)
    assert report["arms"]["b"]["p_value"] == pytest.approx(expected.p_value)
    assert report["arms"]["control"]["mean"] == pytest.approx(
        cols["control"]["revenue"].sum() / cols["control"]["orders"].sum()
    )
    code, output = _run("analyze", str(path), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", "--denominator", "orders",
                        "--covariate", "before")  # fmt: skip
    assert code != 0 and "--denominator with --covariate" in output


def test_capping_the_metric(tmp_path: Path) -> None:
    path, cols = _csv(tmp_path / "u.csv")
    report = _analyze(path, "--cap", "0.01")
    capped = cap_upper({a: c["revenue"] for a, c in cols.items()}, 0.01)
    assert report["capped"]["threshold"] == pytest.approx(capped.threshold)
    assert report["capped"]["values_changed"] == capped.changed == 8  # 1% of 800
    assert report["arms"]["b"]["mean"] == pytest.approx(float(capped.values["b"].mean()))
    code, output = _run("analyze", str(path), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", "--cap", "1.5")  # fmt: skip
    assert code != 0 and "--cap" in output


def test_several_covariates(tmp_path: Path) -> None:
    path, cols = _csv(tmp_path / "u.csv")
    report = _analyze(path, "--covariate", "before", "--covariate", "visits")
    xs = {a: np.column_stack([c["before"], c["visits"]]) for a, c in cols.items()}
    thetas, effects = cuped_fit({a: c["revenue"] for a, c in cols.items()}, xs, "control")
    assert report["cuped_thetas"] == pytest.approx(
        dict(zip(("before", "visits"), thetas, strict=True))
    )
    assert report["arms"]["b"]["cuped"]["diff"] == pytest.approx(effects["b"].diff)
    assert report["covariate"] == "before, visits"


def test_plan_prints_the_mde_and_the_units() -> None:
    code, output = _run("plan", "--rate", "0.1", "--effect", "0.01")
    assert code == 0 and "14128 treatment and 14128 control units" in output
    code, output = _run("plan", "--sd", "2", "--units", "1000", "--ratio", "2")
    assert code == 0 and "with 2000 treatment and 1000 control units" in output
    for bad in (["--rate", "0.1"], ["--rate", "1.5", "--units", "10"],
                ["--rate", "0.1", "--sd", "1", "--units", "10"]):  # fmt: skip
        code, output = _run("plan", *bad)
        assert code != 0 and "error" in output
