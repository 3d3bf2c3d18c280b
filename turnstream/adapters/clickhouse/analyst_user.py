"""The read-only user of analysts' SQL on a ClickHouse server: the SQL that makes it.

``turnstream sql-user`` prints it for an operator to run as an administrator (the worker
has no right to create users, and should not have one). What the server then enforces
on its own, whatever client uses the user's password:

* ``readonly = 2`` in its settings profile: no write, no DDL, no ``SET readonly``; a
  query may still carry the worker's limits as settings, each capped by a ``MAX`` (or
  ``MIN`` for the niceness) at ``[sql]``'s value, ``result_overflow_mode`` fixed;
* grants on the project's database alone (``SELECT``, ``SHOW TABLES``, ``SHOW COLUMNS``):
  no table function (they need ``CREATE TEMPORARY TABLE`` and a source grant such as
  ``FILE``, ``URL`` or ``REMOTE``), no other database.

The password is never in the SQL: the user is identified by the SHA-256 of it.
"""

from __future__ import annotations

import re

from turnstream.config import SqlSettings
from turnstream.core.sql_gate import PRIVATE_TABLES
from turnstream.errors import ConfigError

__all__ = ["analyst_user_sql"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_SHA256 = re.compile(r"^[0-9a-f]{64}\Z")


def analyst_user_sql(
    database: str, user: str, password_sha256: str, limits: SqlSettings
) -> list[str]:
    """The statements (in order) that make ``user`` the read-only user of ``database``,
    identified by ``password_sha256`` (hex), with ``limits`` as its caps."""
    for what, name in (("database", database), ("user", user)):
        if not _NAME.match(name):
            raise ConfigError(f"{what}: {name!r} is not a plain name ([A-Za-z_][A-Za-z0-9_]*)")
    if not _SHA256.match(password_sha256):
        raise ConfigError("the password's SHA-256 must be 64 lower-case hex digits")
    timeout = max(1, int(limits.timeout + 0.999))
    caps = ",\n    ".join(
        [
            "readonly = 2",
            f"max_execution_time = {timeout} MAX {timeout}",
            f"max_memory_usage = {limits.max_memory} MAX {limits.max_memory}",
            f"max_result_rows = {limits.max_rows} MAX {limits.max_rows}",
            f"max_result_bytes = {limits.max_bytes} MAX {limits.max_bytes}",
            "result_overflow_mode = 'throw' CONST",
            f"max_threads = {limits.max_threads} MAX {limits.max_threads}",
            f"os_thread_priority = {limits.niceness} MIN {limits.niceness}",
        ]
    )
    return [
        f"CREATE SETTINGS PROFILE OR REPLACE `{user}` SETTINGS\n    {caps}",
        f"CREATE USER OR REPLACE `{user}` IDENTIFIED WITH sha256_hash BY '{password_sha256}' "
        f"DEFAULT DATABASE `{database}` SETTINGS PROFILE `{user}`",
        f"REVOKE ALL ON *.* FROM `{user}`",
        f"GRANT SELECT, SHOW TABLES, SHOW COLUMNS ON `{database}`.* TO `{user}`",
        # A partial revoke: the tables no analyst reads (core/sql_gate.PRIVATE_TABLES).
        *(f"REVOKE SELECT ON `{database}`.`{t}` FROM `{user}`" for t in sorted(PRIVATE_TABLES)),
    ]
