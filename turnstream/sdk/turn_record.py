"""The turn record (docs/wire.md, ``turn``) built from what a frame collected. Pure: the claims
are checked by the caller, and every time is in the frame.

The record never holds the output's text: only the claims (category, class, nature, role,
span, normalised value, evidence, verdict, action), and a redacted internal-text claim has
no value at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from turnstream.sdk.claims import ClaimRecord

__all__ = ["Identity", "build_turn_record", "turn_key"]

#: ``{"handle": {...}}`` or ``{"profile_id": "..."}``: who the person is, as the envelope has it.
Identity = Mapping[str, Any]


def turn_key(space_id: str, conversation_id: str, turn_id: str) -> str:
    """The turn's idempotency key: the same turn always gets the same one, so a retried
    publish is a duplicate (ids are hashed to stay within the wire's 256 characters)."""
    digest = hashlib.blake2b(
        f"{space_id}\x1f{conversation_id}\x1f{turn_id}".encode(), digest_size=16
    ).hexdigest()
    return f"turn-{digest}"


def _ts(at: datetime) -> str:
    if at.tzinfo is None:
        raise ValueError("a turn's time needs a zone")
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def build_turn_record(
    *,
    space_id: str,
    identity: Identity,
    source: str,
    conversation_id: str,
    session_id: str | None,
    turn_id: str,
    agent: str,
    at: datetime,
    build: str | None,
    contract_version: str | None,
    claims: Sequence[ClaimRecord],
    guard_acted: bool,
    guard_budget_exceeded: bool,
    interactions: Sequence[Mapping[str, Any]],
    constraints: Sequence[Mapping[str, Any]],
    experiment: Mapping[str, str] | None,
    constraints_version: str | None = None,
    language: str | None = None,
) -> dict[str, Any]:
    """One turn record, as the producer publishes it."""
    record: dict[str, Any] = {
        "type": "turn",
        "space_id": space_id,
        "idempotency_key": turn_key(space_id, conversation_id, turn_id),
        **identity,
        "source": source,
        "conversation_id": conversation_id,
        "occurred_at": _ts(at),
        "turn_id": turn_id,
        "agent": agent,
        "claims": [c.as_wire() for c in claims],
        "constraints": [dict(c) for c in constraints],
        "interactions": [dict(i) for i in interactions],
        "guard_acted": guard_acted,
        "guard_budget_exceeded": guard_budget_exceeded,
    }
    if session_id is not None:
        record["session_id"] = session_id
    if build is not None:
        record["build"] = build
    if language is not None:
        record["language"] = language
    if contract_version is not None:
        record["contract_version"] = contract_version
    if constraints_version is not None:
        record["constraints_version"] = constraints_version
    if experiment is not None:
        record["experiment"] = {"id": experiment["id"], "arm": experiment["arm"]}
    return record
