"""Webhooks' pure rules: the signature a receiver checks, the retry schedule, what is
due, and a delivery's state after an attempt."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import UTC, datetime, timedelta

import pytest

from turnstream.core.webhooks import (
    HORIZON,
    MAX_ATTEMPTS,
    MAX_DELAY_SECONDS,
    Attempted,
    Delivery,
    Due,
    Endpoint,
    SignatureError,
    after_attempt,
    due_deliveries,
    event_body,
    headers_for,
    retry_delay,
    sign,
    verify,
)

SECRET = b"whsec-0123456789abcdef"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
T = int(NOW.timestamp())
DESK = Endpoint("acme", "desk", "https://desk.example/h", SECRET,
                frozenset({"review_request.created", "review_request.resolved"}))  # fmt: skip
AUDIT = Endpoint("acme", "audit", "https://audit.example/h", b"another-secret-16+",
                 frozenset({"review_request.resolved"}))  # fmt: skip


def _event(event_id: str = "evt_rr_1.created", kind: str = "review_request.created",
           at: datetime = NOW, space: str = "acme") -> dict:  # fmt: skip
    return {"event_id": event_id, "type": kind, "space_id": space, "review_id": "rr_1",
            "profile_id": "p_1", "status": "open", "receipts": ["r1"], "decision": "",
            "explanation": [], "created_at": at, "resolved_at": None, "event_at": at}  # fmt: skip


def test_the_signature_is_hmac_sha256_of_the_timestamp_and_the_body() -> None:
    body = event_body("evt_rr_1.created", _event())
    expected = hmac.new(SECRET, f"{T}.".encode() + body, hashlib.sha256).hexdigest()
    assert sign(SECRET, T, body) == expected
    headers = headers_for(SECRET, "evt_rr_1.created", "review_request.created", 2, T, body)
    assert headers["Turnstream-Signature"] == f"t={T},v1={expected}"
    assert headers["Turnstream-Event-Id"] == "evt_rr_1.created"
    assert headers["Turnstream-Attempt"] == "2"
    assert verify(SECRET, headers["Turnstream-Signature"], body, T + 10) == T


def test_the_body_names_the_event_and_not_the_persons_reason() -> None:
    data = json.loads(event_body("evt_rr_1.created", {**_event(), "reason": "meu cpf é..."}))
    assert (data["id"], data["type"]) == ("evt_rr_1.created", "review_request.created")
    assert data["data"]["id"] == "rr_1" and data["data"]["profile_id"] == "p_1"
    assert "reason" not in data["data"] and "cpf" not in json.dumps(data)


@pytest.mark.parametrize(
    ("header", "body", "now", "why"),
    [
        (None, b'{"id":"x","tampered":1}', T, "no v1 signature matches"),
        ("t={t},v1=" + "0" * 64, b"{}", T, "no v1 signature matches"),
        (None, b"{}", T + 301, "a replay"),
        (None, b"{}", T - 301, "a replay"),
        ("v1=abc", b"{}", T, "no timestamp"),
        ("t=yesterday,v1=abc", b"{}", T, "no timestamp"),
    ],
)
def test_a_receiver_refuses_a_forged_tampered_or_replayed_request(
    header: str | None, body: bytes, now: int, why: str
) -> None:
    good = f"t={T},v1={sign(SECRET, T, b'{}')}"
    with pytest.raises(SignatureError, match=why):
        verify(SECRET, good if header is None else header.format(t=T), body, now)


def test_another_secret_does_not_verify_and_a_rotation_signs_with_both() -> None:
    with pytest.raises(SignatureError):
        verify(b"not-the-secret-at-all", f"t={T},v1={sign(SECRET, T, b'{}')}", b"{}", T)
    both = f"t={T},v1={sign(b'old-secret-0123456', T, b'{}')},v1={sign(SECRET, T, b'{}')}"
    assert verify(SECRET, both, b"{}", T) == T


def test_the_retry_delay_is_full_jitter_doubling_to_a_cap() -> None:
    for attempt in range(1, 25):
        ceiling = min(MAX_DELAY_SECONDS, 2 ** (attempt - 1))
        delays = [retry_delay(f"evt_{i}", "acme/desk", attempt) for i in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        # Spread over the whole range, not bunched (200 draws: the mean near half).
        assert 0.35 * ceiling < sum(delays) / len(delays) < 0.65 * ceiling
    # A function of its arguments: the same after a restart.
    assert retry_delay("evt_1", "acme/desk", 3) == retry_delay("evt_1", "acme/desk", 3)
    assert retry_delay("evt_1", "acme/desk", 3) != retry_delay("evt_1", "acme/audit", 3)


def test_a_new_event_is_due_to_each_endpoint_that_takes_its_type() -> None:
    created, resolved = _event(), _event("evt_rr_1.resolved", "review_request.resolved")
    due = due_deliveries([resolved, created], {}, [DESK, AUDIT], NOW)
    assert [(d.endpoint.id, d.event["event_id"], d.attempt) for d in due] == [
        ("desk", "evt_rr_1.created", 1),
        ("desk", "evt_rr_1.resolved", 1),
        ("audit", "evt_rr_1.resolved", 1),
    ]
    assert due_deliveries([_event(space="other")], {}, [DESK], NOW) == []


def test_a_pending_delivery_waits_for_its_time_and_a_settled_one_is_done() -> None:
    event = _event()

    def state(status: str, at: datetime) -> dict:
        return {("acme/desk", event["event_id"]): Delivery("acme/desk", event["event_id"], 2,
                                                          status, at)}  # fmt: skip

    later = NOW + timedelta(seconds=3)
    assert due_deliveries([event], state("pending", later), [DESK], NOW) == []
    [due] = due_deliveries([event], state("pending", NOW), [DESK], NOW)
    assert due.attempt == 3
    for done in ("delivered", "gave_up"):
        assert due_deliveries([event], state(done, NOW), [DESK], later) == []


def test_events_past_the_horizon_are_not_offered() -> None:
    old = _event(at=NOW - HORIZON - timedelta(seconds=1))
    assert due_deliveries([old], {}, [DESK], NOW) == []


def test_after_an_attempt_delivered_retried_or_given_up() -> None:
    due = Due(DESK, _event(), 1)
    done = after_attempt(due, Attempted(204, ""), NOW)
    assert (done.status, done.attempts, done.endpoint) == ("delivered", 1, "acme/desk")
    retry = after_attempt(Due(DESK, _event(), 4), Attempted(503, "HTTP 503"), NOW)
    assert retry.status == "pending" and retry.attempts == 4
    wait = (retry.next_attempt_at - NOW).total_seconds()
    assert wait == pytest.approx(retry_delay("evt_rr_1.created", "acme/desk", 4), abs=1e-3)
    assert 0 <= wait <= 8
    last = after_attempt(Due(DESK, _event(), MAX_ATTEMPTS), Attempted(0, "refused"), NOW)
    assert last.status == "gave_up"
    assert "secret" not in repr(DESK) and SECRET.decode() not in repr(DESK)
