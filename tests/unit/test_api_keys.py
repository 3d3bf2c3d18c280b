"""The API keys file: created, listed, revoked; never the key in clear."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from turnstream.api_keys import KeyFile
from turnstream.core.access import ALL_SPACES, Role, authenticate
from turnstream.errors import ConfigError


def test_create_list_revoke(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    key, record = keys.create("acme", frozenset({Role.agent}), "support bot")
    operator, _ = keys.create(ALL_SPACES, frozenset(Role))
    text = (tmp_path / "keys.json").read_text()
    assert key not in text and operator not in text and record.sha256 in text
    assert stat.S_IMODE((tmp_path / "keys.json").stat().st_mode) == 0o600
    listed = keys.list()
    assert [k.id for k in listed] == [record.id, listed[1].id]
    assert listed[0].note == "support bot" and listed[0].roles == {Role.agent}
    revoked = keys.revoke(record.id)
    assert revoked.revoked_at is not None and not revoked.active
    assert keys.revoke(record.id).revoked_at == revoked.revoked_at  # once
    with pytest.raises(ConfigError, match="no key"):
        keys.revoke("000000000000")


def test_a_reader_sees_a_revocation_at_its_next_look(tmp_path: Path) -> None:
    writer, reader = KeyFile(tmp_path / "k.json"), KeyFile(tmp_path / "k.json")
    key, record = writer.create("acme", frozenset({Role.agent}))
    assert authenticate(f"Bearer {key}", reader.current()) == record
    writer.revoke(record.id)
    assert authenticate(f"Bearer {key}", reader.current()).status == 401  # type: ignore[union-attr]


def test_no_file_no_keys_and_a_damaged_one_is_named(tmp_path: Path) -> None:
    assert KeyFile(tmp_path / "absent.json").current() == {}
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="damaged"):
        KeyFile(bad).current()
