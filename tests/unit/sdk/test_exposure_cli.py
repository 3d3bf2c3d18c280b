"""``turnstream exposure token``: the token the SDK mints, from the configuration's keys."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from turnstream.core.exposure_tokens import check_token
from turnstream.entrypoints.cli.main import app
from turnstream.sdk import exposure_token

EXPOSURE = "019a22bc-6f90-7c28-81e1-6dad0003138d"
KEY = "cli-test-key-0123456789"


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "t.toml"
    config.write_text(f'[spaces.acme]\nexposure_keys = ["{KEY}", "older-key-0123456789"]\n')
    return config


def test_prints_the_token_the_sdk_mints(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["exposure", "token", "--space", "acme", "-c", str(_config(tmp_path)), EXPOSURE, "3"]
    )
    assert result.exit_code == 0, result.output
    token = result.stdout.strip()
    assert token == exposure_token(EXPOSURE, 3, space="acme", key=KEY)
    assert check_token(token, "acme", [KEY.encode()]).status == "valid"


def test_a_space_without_keys_or_a_bad_id_exits_2(tmp_path: Path) -> None:
    config = str(_config(tmp_path))
    runner = CliRunner()
    no_key = runner.invoke(
        app, ["exposure", "token", "--space", "lumen", "-c", config, EXPOSURE, "1"]
    )
    assert no_key.exit_code == 2
    assert "[spaces.lumen] exposure_keys" in no_key.output
    assert "TURNSTREAM_EXPOSURE_KEYS_LUMEN" in no_key.output
    uuid4 = "019a22bc-6f90-4c28-81e1-6dad0003138d"
    bad = runner.invoke(app, ["exposure", "token", "--space", "acme", "-c", config, uuid4, "1"])
    assert bad.exit_code == 2 and "UUIDv7" in bad.output
    zero = runner.invoke(app, ["exposure", "token", "--space", "acme", "-c", config, EXPOSURE, "0"])
    assert zero.exit_code == 2 and "pos" in zero.output
