"""``turnstream analysts-sql``: the script for the configured spaces and database, one
statement a line, each ending in ``;`` (ready for ``clickhouse-client --multiquery``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app


def test_the_script_covers_every_configured_space(tmp_path: Path) -> None:
    config = tmp_path / "turnstream.toml"
    config.write_text(
        f'[store]\ndsn = "chdb://{tmp_path}/store"\ndatabase = "analytics"\n'
        '[spaces.acme]\nlanguage = "pt"\n[spaces.lumen]\nlanguage = "en"\n'
    )
    result = CliRunner().invoke(app, ["analysts-sql", "--config", str(config)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert all(line.endswith(";") for line in lines)
    assert lines[0] == "CREATE ROLE IF NOT EXISTS `turnstream_analyst_acme`;"
    assert "CREATE ROLE IF NOT EXISTS `turnstream_analyst_lumen`;" in lines
    assert (
        "GRANT SELECT ON `analytics`.`inferences_current` TO `turnstream_analyst_lumen`;" in lines
    )
