"""Who may call which route: API keys, their roles and spaces, and the decision on one
request. Pure: the key records come in as data, randomness as bytes, time as a value.

A key is ``tsk_<id>_<secret>``: the id (12 hex characters) names the record and is not
secret (``turnstream keys list`` shows it); the secret is 32 random bytes. Only the
SHA-256 of the whole key is kept: a key is 256 bits of randomness, so no dictionary or
brute force reaches it and a fast hash is enough (a slow KDF such as scrypt guards
low-entropy passwords, and would cost every request milliseconds for nothing). The hash
is compared in constant time.

Refusals leak nothing beyond what the caller already holds: an absent, malformed,
unknown, revoked or wrong key is one and the same 401; a 403 names only the role or scope
the route needs (both public in the OpenAPI document), never whether a space exists.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "ALL_SPACES",
    "ApiKey",
    "Refusal",
    "Role",
    "RouteAccess",
    "authenticate",
    "authorize",
    "authorize_space",
    "bootstrap_outcome",
    "hash_key",
    "key_record",
    "mint_key",
]

#: The space of an operator's key: every space.
ALL_SPACES = "*"

_KEY = re.compile(r"^tsk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})\Z")


class Role(StrEnum):
    """What a key may do; a route needs exactly one of them."""

    #: The reviewable profile, corrections, deletions, opt-out, review requests, erase.
    security = "security"
    #: The SDK's profile and tool bindings.
    integration = "integration"
    #: The constraints block.
    agent = "agent"
    #: ``/v1/sql`` (keys for every space only) and ``/v1/context-use``.
    analyst = "analyst"
    #: Running the jobs in the worker (``/v1/jobs/NAME/``; keys for every space only).
    operator = "operator"


@dataclass(frozen=True)
class ApiKey:
    """One key's record, as kept: never the key itself."""

    id: str
    #: A space id, or :data:`ALL_SPACES`.
    space: str
    roles: frozenset[Role]
    #: Hex SHA-256 of the whole key.
    sha256: str
    created_at: str
    revoked_at: str | None = None
    note: str = ""

    @property
    def active(self) -> bool:
        """Not revoked."""
        return self.revoked_at is None

    def covers(self, space_id: str) -> bool:
        """Whether the key speaks for ``space_id``."""
        return self.space == ALL_SPACES or self.space == space_id


@dataclass(frozen=True)
class RouteAccess:
    """What one route needs: a role, and for some a key for every space (``/v1/sql``
    reads every space's tables, so a key of one space cannot be given it)."""

    role: Role
    all_spaces: bool = False


@dataclass(frozen=True)
class Refusal:
    """An HTTP refusal: 401 (who are you?) or 403 (not with this key), and why."""

    status: int
    reason: str
    #: Sent as ``WWW-Authenticate`` with a 401.
    challenge: str | None = field(default=None, compare=False)


_UNAUTHENTICATED = Refusal(
    401, "a valid API key is required: Authorization: Bearer <key>", 'Bearer realm="turnstream"'
)


def hash_key(key: str) -> str:
    """The hex SHA-256 of a key: what is kept of it."""
    return hashlib.sha256(key.encode()).hexdigest()


def mint_key(
    id_bytes: bytes,
    secret_bytes: bytes,
    space: str,
    roles: frozenset[Role],
    created_at: str,
    note: str = "",
) -> tuple[str, ApiKey]:
    """A new key from 6 random bytes (its id) and 32 (its secret): the key, shown once,
    and the record that is kept."""
    if len(id_bytes) != 6 or len(secret_bytes) != 32:
        raise ValueError("a key takes 6 random bytes for its id and 32 for its secret")
    key_id = id_bytes.hex()
    secret = base64.urlsafe_b64encode(secret_bytes).decode().rstrip("=")
    key = f"tsk_{key_id}_{secret}"
    return key, key_record(key, space, roles, created_at, note)


def key_record(
    key: str, space: str, roles: frozenset[Role], created_at: str, note: str = ""
) -> ApiKey:
    """The record of a key minted elsewhere (an operator's first key, from a secret): the
    same record :func:`mint_key` keeps. ValueError names what is wrong, never the key."""
    if not key:
        raise ValueError("the key is empty")
    if not key.startswith("tsk_"):
        raise ValueError("a key starts with 'tsk_'")
    match = _KEY.match(key)
    if match is None:
        shape = "a key is tsk_<12 lowercase hex characters>_<43 base64url characters>"
        if len(key) != 60:
            raise ValueError(f"{shape} (60 characters); this one has {len(key)}")
        raise ValueError(f"{shape}; this one has another character in its id or secret")
    if not roles:
        raise ValueError("a key needs at least one role")
    return ApiKey(match[1], space, frozenset(roles), hash_key(key), created_at, None, note)


def bootstrap_outcome(keys: Sequence[ApiKey], record: ApiKey) -> tuple[str, ApiKey]:
    """Whether an operator's first key (``record``) joins ``keys``: ``added`` (no active
    key for every space with the operator role, and not this key), else ``present`` or
    ``revoked`` (this key, as kept: a revoked key is never revived) or ``other`` (the
    active operator key found), with the record concerned. ValueError when another key
    has its id (its hash differs)."""
    for existing in keys:
        if existing.id == record.id:
            if existing.sha256 != record.sha256:
                raise ValueError(f"another key has the id {record.id}")
            return ("present" if existing.active else "revoked"), existing
    for existing in keys:
        if existing.active and existing.space == ALL_SPACES and Role.operator in existing.roles:
            return "other", existing  # the operator made keys already: theirs to manage
    return "added", record


def authenticate(header: str | None, keys: Mapping[str, ApiKey]) -> ApiKey | Refusal:
    """The active key an ``Authorization`` header presents, or the one 401.

    ``keys`` maps key ids to records. Every failure (no header, another scheme, a
    malformed key, an unknown id, a wrong secret, a revoked key) gives the same refusal.
    """
    if not header:
        return _UNAUTHENTICATED
    scheme, _, token = header.strip().partition(" ")
    match = _KEY.match(token.strip()) if scheme.lower() == "bearer" else None
    if match is None:
        return _UNAUTHENTICATED
    record = keys.get(match.group(1))
    # Hash and compare even for an unknown id, so timing tells nothing about ids.
    expected = record.sha256 if record is not None else "0" * 64
    same = hmac.compare_digest(hash_key(token.strip()), expected)
    if record is None or not same or not record.active:
        return _UNAUTHENTICATED
    return record


def authorize(key: ApiKey, access: RouteAccess) -> Refusal | None:
    """None when ``key`` may call a route needing ``access``; else the 403."""
    if access.role not in key.roles:
        return Refusal(403, f"this key lacks the role {access.role.value!r} this route needs")
    if access.all_spaces and key.space != ALL_SPACES:
        return Refusal(
            403,
            "this route needs a key for every space (an operator's key); this key is for "
            f"space {key.space!r} only: it reads its own reports through GET /v1/context-use "
            f"(turnstream report context-use --space {key.space})",
        )
    return None


def authorize_space(key: ApiKey, space_id: str) -> Refusal | None:
    """None when ``key`` speaks for ``space_id``; else the 403. Asked before the space
    is looked up, so the answer is the same whether the space exists or not."""
    if key.covers(space_id):
        return None
    return Refusal(403, "this key is not for the space asked for")
