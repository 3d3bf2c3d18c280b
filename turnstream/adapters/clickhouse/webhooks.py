"""The webhook outbox: review-request events (written by a materialized view in the same
insert as the request, so no event is lost between the two), where each stands with
each endpoint, and every attempt. Blocking; plain values out."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from turnstream.adapters.clickhouse.store import Store, store_time
from turnstream.core.webhooks import HORIZON, Attempted, Delivery, Due

__all__ = ["pending_work", "record_attempt"]

_EVENT_COLUMNS = (
    "event_id, type, space_id, review_id, profile_id, status, receipts, decision, "
    "explanation, created_at, resolved_at, event_at"
)


def pending_work(
    store: Store, spaces: Iterable[str], now: datetime
) -> tuple[list[dict[str, Any]], dict[tuple[str, str], Delivery]]:
    """The events of the last :data:`~turnstream.core.webhooks.HORIZON` of ``spaces``, and
    the deliveries of those events, by ``(endpoint, event_id)``."""
    spaces = sorted(spaces)
    if not spaces:
        return [], {}
    events = store.query(
        f"SELECT {_EVENT_COLUMNS} FROM webhook_events FINAL "
        "WHERE space_id IN {spaces:Array(String)} AND event_at >= {since:DateTime64(3, 'UTC')}",
        {"spaces": spaces, "since": now - HORIZON},
    ).as_dicts()
    for event in events:
        for name in ("created_at", "resolved_at", "event_at"):
            event[name] = store_time(event[name])
    if not events:
        return [], {}
    rows = store.query(
        "SELECT endpoint, event_id, attempts, status, next_attempt_at "
        "FROM webhook_deliveries FINAL WHERE event_id IN {ids:Array(String)}",
        {"ids": [e["event_id"] for e in events]},
    ).rows
    deliveries = {
        (endpoint, event_id): Delivery(endpoint, event_id, attempts, status, store_time(at))  # type: ignore[arg-type]
        for endpoint, event_id, attempts, status, at in rows
    }
    return events, deliveries


def record_attempt(
    store: Store,
    due: Due,
    result: Attempted,
    delivery: Delivery,
    attempted_at: datetime,
    duration_ms: int,
) -> None:
    """Record one attempt and the delivery's new state (the attempt first: a crash
    between the two makes the next run try again, which the event id makes harmless)."""
    store.insert(
        "webhook_attempts",
        [[delivery.endpoint, delivery.event_id, due.attempt,
          "delivered" if result.delivered else "failed", result.http_status,
          result.error[:1024], attempted_at, duration_ms]],
        ["endpoint", "event_id", "attempt", "status", "http_status", "error", "attempted_at",
         "duration_ms"],
    )  # fmt: skip
    store.insert(
        "webhook_deliveries",
        [[delivery.endpoint, delivery.event_id, delivery.attempts, delivery.status,
          delivery.next_attempt_at, time.time_ns()]],
        ["endpoint", "event_id", "attempts", "status", "next_attempt_at", "version"],
    )  # fmt: skip
