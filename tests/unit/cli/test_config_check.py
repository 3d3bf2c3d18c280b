"""`turnstream config check`, and the worker and scheduler refusing to start on the same
findings."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.fixture(autouse=True)
def _no_turnstream_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CONFIG", "SECRET", "SECRET_FILE", "DSN", "BROKER"):
        monkeypatch.delenv(f"TURNSTREAM_{name}", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./turnstream.toml


def _run(*args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), env=env)


def test_the_summary_names_what_it_found_and_masks_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES.parent)  # its documents' paths are from the checkout
    secret = tmp_path / "secret"
    secret.write_text("a-long-enough-real-secret\n")
    result = _run(
        "config",
        "check",
        "--config",
        str(EXAMPLES / "turnstream.toml"),
        "--dsn",
        "http://admin:hunter2@ch:8123",
        env={"TURNSTREAM_SECRET_FILE": str(secret)},
    )
    assert result.exit_code == 0, result.output
    assert f"configuration file: {EXAMPLES / 'turnstream.toml'}" in result.output
    assert "broker.bootstrap: 127.0.0.1:9092" in result.output
    assert "store.dsn: http://admin:***@ch:8123 (ClickHouse server" in result.output
    assert "identity.secret: set" in result.output
    for space in ("acme", "lumen", "vida"):
        assert f"spaces.{space}: " in result.output
    assert "jobs: priors '15 3 * * *', retention '45 3 * * *' (UTC)" in result.output
    assert result.output.rstrip().endswith("the worker would start")
    assert "hunter2" not in result.output and "a-long-enough" not in result.output


def test_a_bad_value_exits_1_naming_its_dotted_setting(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[identity]\nsecret = "x-real"\n[spaces.acme]\nlanguage = "de"\n')
    result = _run("config", "check", "--config", str(config))
    assert result.exit_code == 1
    assert "spaces.acme.language" in result.output
    assert result.output.rstrip().endswith("the worker would not start")


def test_each_problem_is_listed_with_its_setting(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        '[spaces.acme]\ntool_bindings = "nope.json"\n[jobs]\nmeasurement = "nope.toml"\n'
    )
    result = _run("config", "check", "--config", str(config))
    assert result.exit_code == 1
    assert "error: identity.secret is not set" in result.output
    assert "error: spaces.acme.tool_bindings: tool bindings nope.json" in result.output
    assert "error: jobs.measurement: measurement document nope.toml does not exist" in (
        result.output
    )
    assert "the worker would not start: 3 errors" in result.output, result.output


def test_the_placeholder_passes_with_a_warning_and_strict_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(EXAMPLES.parent)  # its documents' paths are from the checkout
    config = str(EXAMPLES / "turnstream.toml")  # its secret is dev-only-not-a-secret
    relaxed = _run("config", "check", "--config", config)
    assert relaxed.exit_code == 0
    assert "warning: identity.secret: is a placeholder" in relaxed.output
    assert "dev-only-not-a-secret" not in relaxed.output
    strict = _run("config", "check", "--config", config, "--strict")
    assert strict.exit_code == 1
    assert "the worker would not start: 1 warning and --strict" in strict.output


def test_the_worker_refuses_to_start_on_the_same_errors(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    # No broker listens on this port: the worker must stop before it looks for one.
    config.write_text('[broker]\nbootstrap = "127.0.0.1:9"\n[spaces.acme]\n')
    result = _run("worker", "--config", str(config))
    assert result.exit_code == 2
    assert "error: identity.secret is not set" in result.output


def test_the_scheduler_refuses_a_measurement_document_it_cannot_read(tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[jobs]\nmeasurement = "nope.toml"\n')
    result = _run("scheduler", "--config", str(config))
    assert result.exit_code == 2
    assert "error: jobs.measurement: measurement document nope.toml does not exist" in (
        result.output
    )
    # The scheduler hashes no handle: it does not ask for the secret.
    assert "identity.secret" not in result.output
