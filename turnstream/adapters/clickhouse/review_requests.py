"""Review requests of automated decisions: opened, then resolved once, by receipts.

``review_requests`` is a ReplacingMergeTree by id with a version, so resolving writes the
request again with its decision; reads take the current row (``FINAL``).
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from typing import Any

from turnstream.adapters.clickhouse.store import Store
from turnstream.errors import TurnstreamError
from turnstream.models.requests import ResolveRequest, ReviewRequestIn

__all__ = ["ReviewAlreadyResolved", "ReviewNotFound", "open_review", "resolve_review"]


class ReviewNotFound(TurnstreamError):
    """No such review request for the profile."""


class ReviewAlreadyResolved(TurnstreamError):
    """The request's decision is recorded already (it is recorded once)."""


def _current(store: Store, space_id: str, profile_id: str, rid: str) -> dict[str, Any] | None:
    """The request's current row, by column name (None: no such request)."""
    rows = store.query(
        "SELECT status, reason, receipts, created_at "
        "FROM review_requests FINAL WHERE space_id = {space_id:String} "
        "AND profile_id = {profile_id:String} AND id = {rid:String}",
        {"space_id": space_id, "profile_id": profile_id, "rid": rid},
    ).as_dicts()
    return rows[0] if rows else None


_REVIEW_COLUMNS = [
    "id", "space_id", "profile_id", "status", "reason", "receipts", "decision",
    "explanation", "created_at", "resolved_at", "version",
]  # fmt: skip


def open_review(store: Store, profile_id: str, body: ReviewRequestIn) -> dict[str, Any]:
    """Open a review request (blocking); its id, status and time."""
    rid = f"rr_{uuid.uuid4().hex[:20]}"
    now = datetime.now(UTC)
    store.insert(
        "review_requests",
        [[rid, body.space_id, profile_id, "open", body.reason, list(body.receipts), "", [],
          now, None, time.time_ns()]],
        _REVIEW_COLUMNS,
    )  # fmt: skip
    return {"id": rid, "status": "open", "created_at": now.isoformat()}


def resolve_review(store: Store, profile_id: str, rid: str, body: ResolveRequest) -> dict:
    """Record the request's decision, once (blocking)."""
    current = _current(store, body.space_id, profile_id, rid)
    if current is None:
        raise ReviewNotFound(f"no review request {rid!r} for this profile")
    if current["status"] == "resolved":
        raise ReviewAlreadyResolved("the decision is recorded once; it is already resolved")
    now = datetime.now(UTC)
    store.insert(
        "review_requests",
        [[rid, body.space_id, profile_id, "resolved", current["reason"],
          list(current["receipts"]), body.decision, list(body.explanation),
          current["created_at"], now, time.time_ns()]],
        _REVIEW_COLUMNS,
    )  # fmt: skip
    return {"id": rid, "status": "resolved", "decision": body.decision,
            "resolved_at": now.isoformat()}  # fmt: skip
