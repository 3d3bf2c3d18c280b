"""``turnstream sql-user``: the SQL that makes the read-only user of analysts' SQL on a
ClickHouse server, for an operator to run as an administrator (docs/analysts.md)."""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Annotated

import typer

from turnstream.adapters.clickhouse.analyst_user import analyst_user_sql
from turnstream.entrypoints.cli.common import ConfigOpt, err, guarded, settings_from
from turnstream.errors import ConfigError

__all__ = ["sql_user"]


def _password(path: Path) -> str:
    """The password in ``path``; a new random one written there (mode 0600) when the
    file does not exist."""
    if path.exists():
        password = path.read_text().strip()
        if len(password) < 16:
            raise ConfigError(f"--password-file {path}: a password of 16+ characters")
        return password
    password = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(password + "\n")
    err.print(f"wrote a new password to {path} (mode 0600)")
    return password


def sql_user(
    password_file: Annotated[
        Path,
        typer.Option(help="The user's password (16+ characters); made, mode 0600, if absent."),
    ],
    user: Annotated[str, typer.Option(help="The user's name.")] = "turnstream_analyst",
    config: ConfigOpt = None,
) -> None:
    """Print the SQL of the server's read-only user for analysts' SQL: readonly, the
    sql limits as caps, grants on the project's database alone. The password is not
    in it (its SHA-256 is); give the user's DSN as sql.dsn or TURNSTREAM_SQL_DSN."""

    def _run() -> list[str]:
        settings = settings_from(config)
        digest = hashlib.sha256(_password(password_file).encode()).hexdigest()
        return analyst_user_sql(settings.store.database, user, digest, settings.sql)

    for statement in guarded(_run):
        print(f"{statement};")
