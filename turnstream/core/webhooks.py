"""Webhooks of review requests: the event a receiver gets, its signature, the retry
schedule and which deliveries are due. Pure: time and endpoints are passed in.

A receiver verifies ``Turnstream-Signature: t=<unix seconds>,v1=<hex>``, where ``v1`` is
HMAC-SHA256, keyed with the endpoint's secret, of ``"<t>." + body`` (the raw bytes), and
refuses a ``t`` more than :data:`TOLERANCE_SECONDS` from its own clock (a replay of an
old request); ``Turnstream-Event-Id`` (also ``id`` in the body) is the idempotency key: a
delivery may come more than once (at least once), never with another id.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = [
    "BASE_DELAY_SECONDS",
    "EVENT_TYPES",
    "HORIZON",
    "MAX_ATTEMPTS",
    "MAX_DELAY_SECONDS",
    "SIGNATURE_HEADER",
    "TOLERANCE_SECONDS",
    "Attempted",
    "Delivery",
    "Due",
    "Endpoint",
    "SignatureError",
    "after_attempt",
    "due_deliveries",
    "event_body",
    "event_type",
    "headers_for",
    "retry_delay",
    "sign",
    "verify",
]

#: The events a review request gives, by its status.
EVENT_TYPES = ("review_request.created", "review_request.resolved")
SIGNATURE_HEADER = "Turnstream-Signature"
#: How far a signature's time may be from the receiver's clock: 5 minutes, as Stripe and
#: Slack advise, wider than clock skew and the 10 s an attempt may take.
TOLERANCE_SECONDS = 300
#: Full-jitter exponential back-off (each delay drawn in [0, min(cap, base * 2^(n-1))]):
#: spreads the retries of many events to a receiver that was down, instead of waking
#: them all at once. 1 s doubling to a cap of 1 h; 15 attempts reach the cap after the
#: 13th and span about 4 hours at most, a receiver's usual maintenance window.
BASE_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 3600.0
MAX_ATTEMPTS = 15
#: Events older than this are not offered to an endpoint that has not taken them (an
#: endpoint configured later gets the last day, not the whole history).
HORIZON = timedelta(days=1)


class SignatureError(ValueError):
    """A signature header that does not verify (the reason says why, never the secret)."""


def event_type(status: str) -> str:
    """The event a review request's row announces: ``open`` created, else resolved."""
    return EVENT_TYPES[0] if status == "open" else EVENT_TYPES[1]


def event_body(event_id: str, row: Mapping[str, Any]) -> bytes:
    """The JSON body of an event: its id and type, and the review request (no free text:
    the person's reason stays behind the API)."""
    data = {
        "id": row["review_id"],
        "space_id": row["space_id"],
        "profile_id": row["profile_id"],
        "status": row["status"],
        "receipts": list(row["receipts"]),
        "decision": row["decision"] or None,
        "explanation": list(row["explanation"]),
        "created_at": _iso(row["created_at"]),
        "resolved_at": _iso(row["resolved_at"]),
    }
    body = {"id": event_id, "type": row["type"], "created_at": _iso(row["event_at"]),
            "data": data}  # fmt: skip
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def sign(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``v1`` signature: HMAC-SHA256 of ``"<timestamp>." + body``, hex."""
    return hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def headers_for(
    secret: bytes, event_id: str, kind: str, attempt: int, timestamp: int, body: bytes
) -> dict[str, str]:
    """The headers of one attempt."""
    return {
        "Content-Type": "application/json",
        "User-Agent": "turnstream-webhooks/1",
        "Turnstream-Event-Id": event_id,
        "Turnstream-Event": kind,
        "Turnstream-Attempt": str(attempt),
        SIGNATURE_HEADER: f"t={timestamp},v1={sign(secret, timestamp, body)}",
    }


def verify(
    secret: bytes, header: str, body: bytes, now: int, tolerance: int = TOLERANCE_SECONDS
) -> int:
    """Check a ``Turnstream-Signature`` header against the raw body, at ``now`` (unix
    seconds); the signed timestamp, or :class:`SignatureError`. What a receiver runs."""
    parts: dict[str, list[str]] = {}
    for piece in header.split(","):
        name, _, value = piece.strip().partition("=")
        parts.setdefault(name, []).append(value)
    try:
        timestamp = int(parts["t"][0])
    except (KeyError, ValueError):
        raise SignatureError("no timestamp t=") from None
    if abs(now - timestamp) > tolerance:
        raise SignatureError(f"timestamp {now - timestamp} s away: a replay, or a clock off")
    expected = sign(secret, timestamp, body)
    # Any v1 may match: a sender rotating its secret signs with both.
    if not any(hmac.compare_digest(expected, given) for given in parts.get("v1", [])):
        raise SignatureError("no v1 signature matches")
    return timestamp


def retry_delay(event_id: str, endpoint: str, attempt: int) -> float:
    """Seconds to wait after failed attempt ``attempt`` (1-based): full jitter, drawn
    from a hash of the event, the endpoint and the attempt, so that the schedule is a
    function (the same after a restart, in a test) and still spreads events apart."""
    ceiling = min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2 ** (attempt - 1))
    digest = hashlib.sha256(f"{event_id}\x1f{endpoint}\x1f{attempt}".encode()).digest()
    return ceiling * int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Endpoint:
    """One receiver of a space's events."""

    space_id: str
    id: str
    url: str
    secret: bytes
    events: frozenset[str]
    #: May resolve to the operator's own network (loopback, private, link-local), as the
    #: configuration allows by name (``allow_internal``); never a metadata service.
    allow_internal: bool = False

    @property
    def key(self) -> str:
        """``<space>/<id>``: the endpoint as the delivery tables name it."""
        return f"{self.space_id}/{self.id}"

    def __repr__(self) -> str:  # never the secret
        return f"Endpoint({self.space_id!r}, {self.id!r}, {self.url!r})"


@dataclass(frozen=True)
class Delivery:
    """Where one event stands with one endpoint: attempts made, and the next one's time
    (``status``: ``pending``, ``delivered`` or ``gave_up``)."""

    endpoint: str
    event_id: str
    attempts: int
    status: str
    next_attempt_at: datetime


@dataclass(frozen=True)
class Due:
    """An attempt to make now."""

    endpoint: Endpoint
    event: Mapping[str, Any]
    attempt: int


def due_deliveries(
    events: Iterable[Mapping[str, Any]],
    deliveries: Mapping[tuple[str, str], Delivery],
    endpoints: Iterable[Endpoint],
    now: datetime,
) -> list[Due]:
    """The attempts due at ``now``: each event of the last :data:`HORIZON` to each
    endpoint of its space that takes its type, unless delivered, given up, or waiting
    for its next attempt. Oldest events first."""
    by_space: dict[str, list[Endpoint]] = {}
    for endpoint in endpoints:
        by_space.setdefault(endpoint.space_id, []).append(endpoint)
    out: list[Due] = []
    for event in sorted(events, key=lambda e: (e["event_at"], e["event_id"])):
        if now - event["event_at"] > HORIZON:
            continue
        for endpoint in by_space.get(event["space_id"], ()):
            if event["type"] not in endpoint.events:
                continue
            state = deliveries.get((endpoint.key, event["event_id"]))
            if state is None:
                out.append(Due(endpoint, event, 1))
            elif state.status == "pending" and state.next_attempt_at <= now:
                out.append(Due(endpoint, event, state.attempts + 1))
    return out


@dataclass(frozen=True)
class Attempted:
    """One attempt's result: the receiver's status (0: no answer) and the error."""

    http_status: int
    error: str

    @property
    def delivered(self) -> bool:
        """A 2xx answer delivers; anything else is retried."""
        return 200 <= self.http_status < 300


def after_attempt(due: Due, result: Attempted, now: datetime) -> Delivery:
    """The delivery's state after an attempt made at ``now``."""
    event_id = due.event["event_id"]
    if result.delivered:
        status = "delivered"
    elif due.attempt >= MAX_ATTEMPTS:
        status = "gave_up"
    else:
        status = "pending"
    key = due.endpoint.key
    wait = retry_delay(event_id, key, due.attempt) if status == "pending" else 0.0
    return Delivery(key, event_id, due.attempt, status, now + timedelta(seconds=wait))
