"""``turnstream sql-user``: the read-only user's SQL for a ClickHouse server: readonly, the
[sql] limits as caps, grants on the project's database alone, the password never in it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turnstream.adapters.clickhouse.analyst_user import analyst_user_sql
from turnstream.config import SqlSettings
from turnstream.entrypoints.cli.main import app
from turnstream.errors import ConfigError


def test_the_printed_sql_grants_the_projects_database_alone(tmp_path: Path) -> None:
    config = tmp_path / "turnstream.toml"
    config.write_text(
        '[store]\ndsn = "http://admin:pw@ch:8123"\ndatabase = "shop"\n'
        "[sql]\ntimeout = 12.5\nmax_rows = 500\nmax_threads = 2\nniceness = 5\n"
    )
    secret = tmp_path / "analyst.password"
    done = CliRunner().invoke(
        app, ["sql-user", "--password-file", str(secret), "--config", str(config)]
    )
    assert done.exit_code == 0, done.output
    password = secret.read_text().strip()
    assert len(password) >= 32 and secret.stat().st_mode & 0o777 == 0o600
    assert password not in done.output
    sha = hashlib.sha256(password.encode()).hexdigest()
    statements = [s.strip() for s in done.stdout.split(";") if s.strip()]
    assert len(statements) == 5
    profile, user, revoke, grant, private = statements
    assert "readonly = 2" in profile and "result_overflow_mode = 'throw' CONST" in profile
    assert (
        "max_execution_time = 13 MAX 13" in profile and "max_result_rows = 500 MAX 500" in profile
    )
    assert "max_threads = 2 MAX 2" in profile and "os_thread_priority = 5 MIN 5" in profile
    assert f"sha256_hash BY '{sha}'" in user and "DEFAULT DATABASE `shop`" in user
    assert revoke == "REVOKE ALL ON *.* FROM `turnstream_analyst`"
    assert grant == "GRANT SELECT, SHOW TABLES, SHOW COLUMNS ON `shop`.* TO `turnstream_analyst`"
    # The words of sensitive stated values: never the analysts' (a partial revoke).
    assert private == "REVOKE SELECT ON `shop`.`stated_sensitive` FROM `turnstream_analyst`"
    # The same file again: the same password, the same SQL.
    again = CliRunner().invoke(
        app, ["sql-user", "--password-file", str(secret), "--config", str(config)]
    )
    assert again.exit_code == 0 and again.stdout == done.stdout


def test_a_short_password_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "short"
    secret.write_text("short\n")
    done = CliRunner().invoke(app, ["sql-user", "--password-file", str(secret)])
    assert done.exit_code != 0 and "16+ characters" in done.output


@pytest.mark.parametrize(
    ("database", "user", "sha"),
    [
        ("shop`; DROP", "u", "0" * 64),
        ("shop", "u` ON *.* --", "0" * 64),
        ("shop", "u", "'; DROP USER x; --"),
        ("shop", "u", "A" * 64),
    ],
)
def test_names_and_the_hash_are_checked(database: str, user: str, sha: str) -> None:
    with pytest.raises(ConfigError):
        analyst_user_sql(database, user, sha, SqlSettings())
