"""The API keys file: created, listed, revoked; never the key in clear."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from turnstream.adapters.api_key_file import OPERATOR_ROLES, KeyFile
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


def _operator_key(id_hex: str = "0123456789ab") -> str:
    return f"tsk_{id_hex}_{'A' * 21}-_{'z' * 20}"  # 43 base64url characters, as minted


def test_bootstrap_adds_the_operator_key_to_a_fresh_file_hashed(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "keys.json"
    key = _operator_key()
    done, record = KeyFile(path).bootstrap_operator(key)
    assert (done, record.id, record.space) == ("added", "0123456789ab", ALL_SPACES)
    assert record.roles == OPERATOR_ROLES and Role.operator in record.roles
    text = path.read_text()
    assert key not in text and key.split("_", 2)[2] not in text and record.sha256 in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The worker's reader authenticates it as any minted key.
    assert authenticate(f"Bearer {key}", KeyFile(path).current()) == record


def test_bootstrap_twice_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "keys.json"
    keys = KeyFile(path)
    key = _operator_key()
    keys.bootstrap_operator(key)
    before = path.stat()
    done, _ = keys.bootstrap_operator(key)
    after = path.stat()
    assert done == "present" and len(keys.list()) == 1
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_bootstrap_leaves_a_file_with_an_operator_key_alone(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    keys.create("acme", frozenset({Role.operator}), "one space: not an operator's key")
    _, theirs = keys.create(ALL_SPACES, frozenset({Role.operator}), "made by hand")
    done, record = keys.bootstrap_operator(_operator_key())
    assert (done, record) == ("other", theirs)
    assert [k.id for k in keys.list()] == [keys.list()[0].id, theirs.id]
    # Once that key is revoked, the next start adds the secret's key (a rotation).
    keys.revoke(theirs.id)
    assert keys.bootstrap_operator(_operator_key())[0] == "added"


def test_bootstrap_never_revives_a_revoked_key(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    key = _operator_key()
    _, record = keys.bootstrap_operator(key)
    keys.revoke(record.id)
    done, kept = keys.bootstrap_operator(key)
    assert done == "revoked" and not kept.active
    assert len(keys.list()) == 1
    assert authenticate(f"Bearer {key}", keys.current()).status == 401  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "the key is empty"),
        ("0123456789ab_" + "A" * 43, "starts with 'tsk_'"),
        ("tsk_0123456789ab_" + "A" * 42, "60 characters\\); this one has 59"),
        ("tsk_0123456789AB_" + "A" * 43, "another character in its id or secret"),
        ("tsk_0123456789ab_" + "A" * 42 + "=", "another character in its id or secret"),
        ("tsk_0123456789ab_" + "Ã" * 43, "another character in its id or secret"),
        ("tsk_0123456789ab_" + "A" * 43 + "\nsecond line", "this one has 72"),
    ],
)
def test_a_malformed_operator_key_is_named_and_never_shown(
    tmp_path: Path, key: str, problem: str
) -> None:
    path = tmp_path / "keys.json"
    with pytest.raises(ConfigError, match="operator key is malformed") as caught:
        KeyFile(path).bootstrap_operator(key)
    assert caught.match(problem)
    assert not key or key not in str(caught.value)
    assert not path.exists()


def test_bootstrap_refuses_a_key_whose_id_another_key_has(tmp_path: Path) -> None:
    keys = KeyFile(tmp_path / "keys.json")
    keys.bootstrap_operator(_operator_key())
    other = "tsk_0123456789ab_" + "B" * 43
    with pytest.raises(ConfigError, match="another key has the id 0123456789ab"):
        keys.bootstrap_operator(other)
    assert len(keys.list()) == 1
