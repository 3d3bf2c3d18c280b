"""The API keys file: the records of :mod:`turnstream.core.access` (hashes, never keys),
written by ``turnstream keys`` and read by the worker on every request.

A file rather than a store table: the CLI changes it without the worker (an embedded
store belongs to the worker, and a table would need a key to change the keys), and the
worker sees a change at the next request: it compares the file's inode, size and
modification time (one ``stat``, ~2 us) and reads it again when they moved, so a
revocation is effective from the next request on. Writers take a lock file and replace
the file atomically (a new inode), so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import secrets
import tempfile
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turnstream.core.access import (
    ALL_SPACES,
    ApiKey,
    Role,
    bootstrap_outcome,
    key_record,
    mint_key,
)
from turnstream.errors import ConfigError

__all__ = ["OPERATOR_ROLES", "KeyFile"]

#: The roles of an operator's first key (``turnstream keys bootstrap``): the jobs and SQL
#: on every space; narrower keys, and ``security`` ones, are made with ``keys create``.
OPERATOR_ROLES = frozenset({Role.operator, Role.analyst})

_VERSION = 1


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _record(data: dict[str, Any]) -> ApiKey:
    return ApiKey(
        id=data["id"],
        space=data["space"],
        roles=frozenset(Role(r) for r in data["roles"]),
        sha256=data["sha256"],
        created_at=data["created_at"],
        revoked_at=data.get("revoked_at"),
        note=data.get("note", ""),
    )


def _as_dict(key: ApiKey) -> dict[str, Any]:
    return {
        "id": key.id,
        "space": key.space,
        "roles": sorted(r.value for r in key.roles),
        "sha256": key.sha256,
        "created_at": key.created_at,
        "revoked_at": key.revoked_at,
        "note": key.note,
    }


class KeyFile:
    """The keys at ``path``: created, listed and revoked by the CLI, read by the worker."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._seen: tuple[int, int, int] | None = None
        self._keys: dict[str, ApiKey] = {}

    def current(self) -> Mapping[str, ApiKey]:
        """The keys by id, read again when the file changed since the last call (an
        absent file: no keys, every request refused)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._seen, self._keys = None, {}
            return self._keys
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen != self._seen:
            self._keys = {k.id: k for k in self._read()}
            self._seen = seen
        return self._keys

    def list(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        return self._read()

    def create(self, space: str, roles: frozenset[Role], note: str = "") -> tuple[str, ApiKey]:
        """Mint a key for ``space`` (or :data:`ALL_SPACES`) with ``roles``; the key is
        returned once and only its hash is written."""
        if space != ALL_SPACES and not space:
            raise ConfigError("a key needs a space, or '*' for every space")
        with self._locked() as keys:
            while True:
                key, record = mint_key(
                    secrets.token_bytes(6), secrets.token_bytes(32), space, roles, _now(), note
                )
                if all(k.id != record.id for k in keys):
                    break
            keys.append(record)
        return key, record

    def bootstrap_operator(self, key: str, note: str = "bootstrap") -> tuple[str, ApiKey]:
        """Add ``key`` (minted by the operator, e.g. a compose secret) as a key for every
        space with :data:`OPERATOR_ROLES`, unless the file already has an active operator
        key or this key's id: idempotent, it never overwrites, duplicates or revives a
        revoked key. What happened (``added``, ``present``, ``revoked``, ``other``) and
        the record concerned; ConfigError names a malformed key (never showing it)."""
        try:
            record = key_record(key, ALL_SPACES, OPERATOR_ROLES, _now(), note)
        except ValueError as exc:
            raise ConfigError(f"the operator key is malformed: {exc}") from None
        with self._locked() as keys:
            try:
                done, concerned = bootstrap_outcome(keys, record)
            except ValueError as exc:
                raise ConfigError(f"the keys file {self.path}: {exc}: choose a new one") from None
            if done == "added":
                keys.append(record)
        return done, concerned

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke the key ``key_id`` (kept, marked revoked: the list shows when)."""
        with self._locked() as keys:
            for i, key in enumerate(keys):
                if key.id == key_id:
                    if key.active:
                        keys[i] = dataclasses.replace(key, revoked_at=_now())
                    return keys[i]
        raise ConfigError(f"no key {key_id!r} in {self.path}")

    def _read(self) -> list[ApiKey]:
        try:
            data = json.loads(self.path.read_text())
            return [_record(k) for k in data["keys"]]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"the keys file {self.path} is damaged: {exc}") from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[ApiKey]]:
        """The keys, under the writers' lock; written back (atomically) on success when
        they changed (an unchanged file keeps its inode: readers do not read it again)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        with lock.open("a") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            keys = self._read()
            before = list(keys)
            yield keys
            if keys == before and self.path.exists():
                return
            body = json.dumps({"version": _VERSION, "keys": [_as_dict(k) for k in keys]}, indent=2)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".keys-")
            try:
                with os.fdopen(fd, "w") as f:
                    f.write(body + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
                raise
