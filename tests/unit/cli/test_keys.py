"""``turnstream keys``: create, list and revoke in the configured keys file."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "turnstream.toml"
    config.write_text(
        f'[store]\ndsn = "chdb://{tmp_path}/store"\n[api]\nkeys_file = "{tmp_path}/k.json"\n'
        '[spaces.acme]\nlanguage = "pt"\n'
    )
    return config


def test_create_list_revoke(tmp_path: Path) -> None:
    runner, config = CliRunner(), str(_config(tmp_path))
    made = runner.invoke(app, ["keys", "create", "--space", "acme", "--role", "agent",
                               "--role", "security,analyst", "--config", config])  # fmt: skip
    assert made.exit_code == 0, made.output
    key = made.output.strip()
    key_id = key.split("_")[1]
    listed = runner.invoke(app, ["keys", "list", "--format", "csv", "--config", config])
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(listed.output))}
    assert rows[key_id]["space"] == "acme" and rows[key_id]["revoked_at"] == ""
    assert rows[key_id]["roles"] == "agent,analyst,security"
    assert key not in listed.output and key not in (tmp_path / "k.json").read_text()
    revoked = runner.invoke(app, ["keys", "revoke", key_id, "--config", config])
    assert revoked.exit_code == 0 and f"revoked {key_id}" in revoked.output
    listed = runner.invoke(app, ["keys", "list", "--format", "csv", "--config", config])
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(listed.output))}
    assert rows[key_id]["revoked_at"]


def test_bad_space_role_or_id_exit_2_naming_it(tmp_path: Path) -> None:
    runner, config = CliRunner(), str(_config(tmp_path))
    cases = [
        (["create", "--space", "nope", "--role", "agent"], "space 'nope'"),
        (["create", "--space", "acme", "--role", "admin"], "--role takes some of"),
        (["revoke", "000000000000"], "no key"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["keys", *args, "--config", config])
        assert result.exit_code == 2, result.output
        assert message in result.output
    assert not (tmp_path / "k.json").exists() or "acme" not in (tmp_path / "k.json").read_text()


def test_bootstrap_from_a_file_once_and_a_missing_file_named(tmp_path: Path) -> None:
    runner, config = CliRunner(), str(_config(tmp_path))
    secret = tmp_path / "operator_key"
    bootstrap = ["keys", "bootstrap", "--key-file", str(secret), "--config", config]
    missing = runner.invoke(app, bootstrap)
    assert missing.exit_code == 2
    assert f"the operator key file {secret} cannot be read" in " ".join(missing.output.split())
    secret.write_text("\n")
    empty = runner.invoke(app, bootstrap)
    assert empty.exit_code == 0 and "no operator key" in empty.output
    assert not (tmp_path / "k.json").exists()
    key = "tsk_c0ffee000001_" + "Zz09-_" * 7 + "x"
    secret.write_text(f"  {key}\r\n")  # written on Windows, or with stray spaces
    runs = [runner.invoke(app, bootstrap) for _ in range(2)]
    assert [r.exit_code for r in runs] == [0, 0]
    assert "added the operator key c0ffee000001" in runs[0].output
    assert "already in" in runs[1].output
    listed = runner.invoke(app, ["keys", "list", "--format", "csv", "--config", config])
    (row,) = csv.DictReader(io.StringIO(listed.output))
    assert (row["id"], row["space"], row["roles"]) == ("c0ffee000001", "*", "analyst,operator")
    assert all(key not in r.output for r in [*runs, listed])
