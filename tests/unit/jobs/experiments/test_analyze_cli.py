"""``turnstream experiments analyze FILE.csv``: no broker, store or configuration."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app
from turnstream.errors import DataError
from turnstream.jobs.experiments.analysis import analyze
from turnstream.jobs.experiments.stats import newcombe_interval, two_proportion_z_test
from turnstream.jobs.experiments.unit_table import parse_allocation, read_units

#: Would fail any command that loaded a configuration or opened a store.
NO_SETUP = {"TURNSTREAM_CONFIG": "/nonexistent/turnstream.toml", "TURNSTREAM_DSN": "bogus://"}


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["experiments", "analyze", *args], env=NO_SETUP)
    return result.exit_code, result.output


def _revenue_csv(path: Path, n: int = 400) -> Path:
    rng = np.random.default_rng(11)
    lines = ["person,arm,revenue,revenue_before"]
    for i in range(n):
        arm = ("control", "bigger_block", "no_soft_signals")[i % 3]
        before = rng.gamma(2.0, 10.0)
        after = 0.8 * before + rng.gamma(2.0, 5.0) + (4.0 if arm == "bigger_block" else 0.0)
        lines.append(f"p{i},{arm},{after:.2f},{before:.2f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_json_has_the_issue_keys_and_the_library_figures(tmp_path: Path) -> None:
    csv_file = _revenue_csv(tmp_path / "revenue.csv")
    code, output = _run(str(csv_file), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", "--covariate", "revenue_before",
                        "--format", "json")  # fmt: skip
    assert code == 0, output
    report = json.loads(output)
    assert report["kind"] == "continuous" and report["correction"] == "holm"
    assert list(report["arms"]) == ["control", "bigger_block", "no_soft_signals"]
    assert set(report["arms"]["control"]) == {"people", "mean"}
    arm = report["arms"]["bigger_block"]
    assert {"people", "mean", "diff", "diff_ci", "rel", "rel_ci", "p_value", "cuped"} <= set(arm)
    assert {"diff", "diff_ci", "rel", "rel_ci", "p_value"} <= set(arm["cuped"])
    assert 0 <= report["srm_p_value"] <= 1

    table = read_units(csv_file, "arm", "revenue", "revenue_before")
    expected = analyze(table.values, "control", table.covariates).arm("bigger_block")
    assert arm["people"] == expected.people == 133  # rows 1, 4, ..., 397 of 400
    assert arm["diff"] == pytest.approx(expected.raw.diff, abs=1e-12)
    assert arm["diff_ci"] == pytest.approx([expected.raw.diff_low, expected.raw.diff_high])
    assert arm["cuped"]["diff_ci"] == pytest.approx(
        [expected.cuped.diff_low, expected.cuped.diff_high]
    )
    # The pre-period explains most of the spread: the adjusted interval is much narrower.
    raw_width = arm["diff_ci"][1] - arm["diff_ci"][0]
    assert arm["cuped"]["diff_ci"][1] - arm["cuped"]["diff_ci"][0] < 0.7 * raw_width


def test_a_binary_metric_gets_the_proportion_figures(tmp_path: Path) -> None:
    rows = ["arm,bought"] + ["a,1"] * 30 + ["a,0"] * 70 + ["b,1"] * 45 + ["b,0"] * 55
    csv_file = tmp_path / "bought.csv"
    csv_file.write_text("\n".join(rows) + "\n")
    code, output = _run(str(csv_file), "--arm-column", "arm", "--control", "a",
                        "--metric", "bought", "--format", "json")  # fmt: skip
    assert code == 0, output
    report = json.loads(output)
    b = report["arms"]["b"]
    assert report["kind"] == "binary" and "cuped" not in b
    assert b["mean"] == pytest.approx(0.45)
    diff, low, high = newcombe_interval(45, 100, 30, 100)
    assert (b["diff"], *b["diff_ci"]) == pytest.approx((diff, low, high), abs=1e-12)
    assert b["p_value"] == pytest.approx(two_proportion_z_test(45, 100, 30, 100)[1], abs=1e-12)


def test_table_output_and_the_plot(tmp_path: Path) -> None:
    csv_file = _revenue_csv(tmp_path / "revenue.csv", n=90)
    png = tmp_path / "arms.png"
    code, output = _run(str(csv_file), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", "--covariate", "revenue_before",
                        "--plot", str(png))  # fmt: skip
    assert code == 0, output
    assert "bigger_block" in output and "CUPED on revenue_before" in output
    assert "sample ratio: chi2 0.000, df 2, p 1 (no mismatch)" in output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("text", "args", "message"),
    [
        ("arm,revenue\ncontrol,1\nb,x\n", [], "bad.csv line 3, column 'revenue': not a number"),
        ("arm,revenue\ncontrol,1\nb\n", [], "bad.csv line 3: 1 field, the header has 2"),
        ("arm,rev\ncontrol,1\n", [], "line 1: no column 'revenue' (columns: arm, rev)"),
        ("arm,revenue\ncontrol,1\n,2\n", [], "line 3, column 'arm': empty arm"),
        ("arm,revenue\ncontrol,1\ncontrol,2\n", [], "one arm only (control)"),
        ("", [], "no header line"),
        ("arm,revenue\n", [], "no rows after the header"),
        ("arm,revenue\ncontrol,inf\nb,1\n", [], "line 2, column 'revenue': not a finite"),
        ("arm,revenue\nctl,1\nb,1\n", [], "--control: no arm 'control' in"),
        ("arm,revenue\ncontrol,1\nb,2\n", ["--covariate", "pre"], "no column 'pre'"),
        ("arm,revenue\ncontrol,2\nb,1\n", ["--kind", "binary"], "binary metric takes only 0"),
        ("arm,revenue\ncontrol,1\nb,1\n", ["--allocation", "control=1"], "no weight for arm 'b'"),
    ],
)
def test_bad_input_names_the_line_and_column(
    tmp_path: Path, text: str, args: list[str], message: str
) -> None:
    csv_file = tmp_path / "bad.csv"
    csv_file.write_text(text)
    code, output = _run(str(csv_file), "--arm-column", "arm", "--control", "control",
                        "--metric", "revenue", *args)  # fmt: skip
    assert code == 2
    assert message in " ".join(output.split())


def test_read_units_skips_blank_lines_and_reads_quotes_and_a_bom(tmp_path: Path) -> None:
    csv_file = tmp_path / "u.csv"
    csv_file.write_text('\ufeffarm,"note",m,x\nb,"a, quoted\nnote",2.5,1\n\ncontrol,,1,0\n')
    table = read_units(csv_file, "arm", "m", "x")
    assert table.values == {"b": [2.5], "control": [1.0]}
    assert table.covariates == {"b": [1.0], "control": [0.0]} and table.rows == 2
    assert parse_allocation("b=1, control=3", ["b", "control"]) == {"b": 1.0, "control": 3.0}
    with pytest.raises(DataError, match="not NAME=WEIGHT"):
        parse_allocation("b=0,control=1", ["b", "control"])
    with pytest.raises(DataError, match="no arm 'z'"):
        parse_allocation("b=1,control=1,z=1", ["b", "control"])


def test_names_from_the_file_print_verbatim(tmp_path: Path) -> None:
    csv_file = tmp_path / "brackets.csv"
    csv_file.write_text("arm,rev[eur],pre[eur]\ncontrol,1,2\ncontrol,3,1\nb,2,2\nb,5,4\n")
    code, output = _run(str(csv_file), "--arm-column", "arm", "--control", "control",
                        "--metric", "rev[eur]", "--covariate", "pre[eur]")  # fmt: skip
    assert code == 0, output
    assert "rev[eur] (continuous" in output and "CUPED on pre[eur]:" in output
