"""A DSN as it may be printed: never a password."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.store import describe_dsn


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("http://clickhouse:8123", "http://clickhouse:8123"),
        ("http://default:s3cr@t@ch:8123/db", "http://default:***@ch:8123/db"),
        ("https://reader@ch:8443", "https://reader@ch:8443"),
        (
            "http://ch:8123/?password=hunter2&compress=1&access_token=abc",
            "http://ch:8123/?password=***&compress=1&access_token=***",
        ),
    ],
)
def test_a_server_dsn_keeps_user_and_host_and_masks_credentials(dsn: str, shown: str) -> None:
    assert describe_dsn(dsn) == shown
    assert "hunter2" not in describe_dsn(dsn) and "s3cr" not in describe_dsn(dsn)


def test_an_embedded_dsn_is_its_absolute_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert describe_dsn("chdb:var/store") == f"chdb://{tmp_path / 'var' / 'store'}"
