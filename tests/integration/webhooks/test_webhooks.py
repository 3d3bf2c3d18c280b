"""Review-request webhooks against a real receiver: an aiohttp server in the test checks
each request's signature, fails the first attempts, and sees each event delivered once;
the worker is restarted between attempts and the outbox carries on."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web

from tests.fixtures.loop_thread import LoopThread
from turnstream.adapters.worker_client import read_query
from turnstream.core.webhooks import verify
from turnstream_dev.deployment import new_deployment

pytestmark = pytest.mark.integration

SECRET = "whsec-9f2c1e0b7a6d5c4b3a291807"


class Receiver:
    """A webhook receiver as the README tells one to write: verify the signature on the
    raw body, refuse an old timestamp, deduplicate by event id. It answers 503 to the
    first ``failures`` attempts of each event."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.seen: list[dict[str, Any]] = []  # every request, in order
        self.accepted: dict[str, dict[str, Any]] = {}  # event id -> body, first 2xx only
        self.duplicates = 0
        self.lock = threading.Lock()
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        header = request.headers.get("Turnstream-Signature", "")
        event_id = request.headers.get("Turnstream-Event-Id", "")
        # Checked by hand (not only by the module under test): t=<unix>,v1=<hex>.
        parts = dict(p.split("=", 1) for p in header.split(","))
        mine = hmac.new(SECRET.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256)
        good = hmac.compare_digest(mine.hexdigest(), parts.get("v1", ""))
        verify(SECRET.encode(), header, body, int(time.time()))  # raises if it does not hold
        data = json.loads(body)
        with self.lock:
            tries = sum(1 for s in self.seen if s["event_id"] == event_id)
            record = {"event_id": event_id, "attempt": int(request.headers["Turnstream-Attempt"]),
                      "good": good, "body_id": data["id"], "type": data["type"]}  # fmt: skip
            self.seen.append(record)
            if tries < self.failures:
                return web.Response(status=503, text="busy")
            if event_id in self.accepted:
                self.duplicates += 1
            else:
                self.accepted[event_id] = data
        return web.Response(status=204)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    thread = LoopThread()
    hook = Receiver(failures=2)
    app = web.Application()
    app.router.add_post("/hooks/turnstream", hook.handle)
    runner = web.AppRunner(app)

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        hook.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    thread.run(start())
    yield hook
    thread.run(runner.cleanup())
    thread.close()


def _post(deployment, path: str, body: Any) -> tuple[int, Any]:  # type: ignore[no-untyped-def]
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **deployment.headers()},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _wait(condition: Any, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_review_request_events_are_signed_retried_and_delivered_once(
    kafka_broker, tmp_path, receiver: Receiver
) -> None:  # type: ignore[no-untyped-def]
    extra = f"""
[[spaces.acme.webhooks]]
id = "desk"
url = "http://127.0.0.1:{receiver.port}/hooks/turnstream"
secret = "{SECRET}"
allow_internal = true
"""
    deployment = new_deployment(kafka_broker, tmp_path, extra=extra)
    deployment.worker.start()
    try:
        # A person the store knows (a review request of nobody is a 404).
        seen = {"type": "interaction", "space_id": "acme", "idempotency_key": "ivy-1",
                "profile_id": "p_ivy", "source": "web", "conversation_id": "c1",
                "occurred_at": datetime.now(UTC).isoformat(),
                "interaction": {"kind": "engaged", "ref": "item_variant:acme:1",
                                "action": "click"}}  # fmt: skip
        deployment.publish([json.dumps(seen).encode()])
        deployment.drain()
        body = {"space_id": "acme", "receipts": ["rcpt_1"], "reason": "por que esta oferta?"}
        status, opened = _post(deployment, "/v1/profiles/p_ivy/review-requests", body)
        assert status == 201, opened
        created = f"evt_{opened['id']}.created"
        # The first attempt fails; the worker is stopped and started again before the
        # next one: the outbox in the store carries the retry over.
        _wait(lambda: any(s["event_id"] == created for s in receiver.seen))
        deployment.worker.stop()
        deployment.worker.start()
        _wait(lambda: created in receiver.accepted)
        decision = {"space_id": "acme", "decision": "overturned", "explanation": ["rule_r2"]}
        path = f"/v1/profiles/p_ivy/review-requests/{opened['id']}/resolve"
        status, resolved = _post(deployment, path, decision)
        assert status == 200, resolved
        resolved_id = f"evt_{opened['id']}.resolved"
        _wait(lambda: resolved_id in receiver.accepted)
        time.sleep(2.5)  # a duplicate, if the sender made one, would come within this
        assert receiver.duplicates == 0
        assert all(s["good"] for s in receiver.seen)
        for event_id in (created, resolved_id):
            tries = [s["attempt"] for s in receiver.seen if s["event_id"] == event_id]
            assert tries == [1, 2, 3], (event_id, tries)
        data = receiver.accepted[resolved_id]
        assert data["type"] == "review_request.resolved"
        assert data["data"]["decision"] == "overturned"
        assert data["data"]["profile_id"] == "p_ivy" and "reason" not in data["data"]
        assert receiver.accepted[created]["type"] == "review_request.created"
        # Every attempt is recorded: endpoint, event, attempt, status, error.
        rows = read_query(
            deployment.settings,
            "SELECT event_id, attempt, status, http_status, error FROM webhook_attempts "
            "ORDER BY event_id, attempt",
        ).rows
        assert [tuple(r) for r in rows] == [
            (created, 1, "failed", 503, "HTTP 503"),
            (created, 2, "failed", 503, "HTTP 503"),
            (created, 3, "delivered", 204, ""),
            (resolved_id, 1, "failed", 503, "HTTP 503"),
            (resolved_id, 2, "failed", 503, "HTTP 503"),
            (resolved_id, 3, "delivered", 204, ""),
        ]
        states = read_query(
            deployment.settings,
            "SELECT endpoint, event_id, attempts, status FROM webhook_deliveries FINAL "
            "ORDER BY event_id",
        ).rows
        assert [tuple(r) for r in states] == [
            ("acme/desk", created, 3, "delivered"),
            ("acme/desk", resolved_id, 3, "delivered"),
        ]
    finally:
        deployment.worker.stop()
