"""The settings of analysts' queries: the [sql] limits, ``readonly`` last, and left to
the profile of a server's read-only user."""

from __future__ import annotations

from pydantic import SecretStr

from turnstream.adapters.clickhouse.analyst_sql import AnalystSql, limit_settings
from turnstream.config import SqlSettings
from turnstream.errors import StoreError


def test_readonly_rides_on_each_query_unless_a_servers_read_only_user_is_named() -> None:
    user = SqlSettings(dsn=SecretStr("http://turnstream_analyst:pw@ch:8123"))
    embedded = AnalystSql("chdb:///tmp/never-opened", "turnstream", user)
    assert embedded.settings["readonly"] == 1  # chDB has no users: the DSN is ignored
    server = AnalystSql("http://admin:pw@ch:8123", "turnstream", user)
    assert "readonly" not in server.settings  # the profile holds it
    plain = AnalystSql("http://admin:pw@ch:8123", "turnstream", SqlSettings())
    assert plain.settings["readonly"] == 1
    assert list(plain.settings)[-1] == "readonly"  # last: nothing may follow it
    for made in (embedded, server, plain):
        made.close()


def test_the_limits_come_from_the_config() -> None:
    limits = SqlSettings(timeout=5, max_memory=32 << 20, max_rows=7, max_bytes=2 << 20,
                         max_threads=3, niceness=4)  # fmt: skip
    assert limit_settings(limits) == {
        "max_execution_time": 5,
        "max_memory_usage": 32 << 20,
        "max_result_rows": 7,
        "max_result_bytes": 2 << 20,
        "result_overflow_mode": "throw",
        "max_threads": 3,
        "os_thread_priority": 4,
        "readonly": 1,
    }


def test_a_server_that_cannot_be_reached_is_named_without_its_password() -> None:
    user = SqlSettings(dsn=SecretStr("http://turnstream_analyst:s3cr3t-pw@127.0.0.1:1"))
    gate = AnalystSql("http://admin:adm1n-pw@127.0.0.1:1", "turnstream", user)
    try:
        try:
            gate.run("SELECT 1")
        except StoreError as exc:
            message = str(exc)
        else:
            raise AssertionError("a server on port 1 answered")
    finally:
        gate.close()
    assert "analysts' SQL" in message and "127.0.0.1:1" in message
    assert "s3cr3t-pw" not in message and "adm1n-pw" not in message
