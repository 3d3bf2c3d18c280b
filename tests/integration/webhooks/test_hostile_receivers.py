"""Webhooks against hostile receivers and hostile URLs, on a real worker (broker, chDB):

- a host spelled in Unicode that the HTTP client maps to an address (``①②⑦.0.0.1``,
  ``127。0。0。1``): the worker refuses to start naming the endpoint's URL, as it does for
  ``127.0.0.1`` (it used to start, then connect to loopback without asking a resolver);
- a receiver that answers 200 and then sends a body that never ends: delivered on its
  status, the body unread (it used to be read until the attempt's timeout, in memory);
- a tarpit that never answers: the attempt times out and is retried, and ingestion goes
  on meanwhile; another space's receiver is not kept waiting one timeout per event due to
  the tarpit (it used to be: the sender makes its attempts one after the other).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.fixtures.loop_thread import LoopThread
from turnstream.adapters.worker_client import read_query
from turnstream_dev.deployment import new_deployment
from turnstream_dev.kafka import InfraError

pytestmark = pytest.mark.integration

SECRET = "whsec-hostile-receivers-0123456789"
#: What the flooding receiver sends after its 200 before it stops writing (and holds the
#: connection open): a client that reads the body waits for the rest until its timeout.
FLOOD_BYTES = 8 << 20


class Receivers:
    """Hostile receivers on loopback: ``/flood`` answers 200 with a body that never ends;
    ``/tarpit`` reads the request and never answers. ``/fast`` is a good receiver: it
    notes how many requests the tarpit had had when each of its events came."""

    def __init__(self) -> None:
        self.port = 0
        self.requests: dict[str, int] = {}
        self.sent = 0
        self.tarpit_before_fast: list[int] = []

    async def fast(self, request: web.Request) -> web.Response:
        await request.read()
        self.tarpit_before_fast.append(self.requests.get("tarpit", 0))
        return web.Response(status=204)

    async def flood(self, request: web.Request) -> web.StreamResponse:
        await request.read()
        self.requests["flood"] = self.requests.get("flood", 0) + 1
        answer = web.StreamResponse(status=200)
        answer.content_length = 1 << 40
        await answer.prepare(request)
        chunk = b"x" * (1 << 16)
        try:
            while self.sent < FLOOD_BYTES * self.requests["flood"]:
                await answer.write(chunk)
                self.sent += len(chunk)
            await asyncio.sleep(3600)  # then nothing more: a tarpit for the body
        except (ConnectionError, asyncio.CancelledError):
            pass
        return answer

    async def tarpit(self, request: web.Request) -> web.Response:
        await request.read()
        self.requests["tarpit"] = self.requests.get("tarpit", 0) + 1
        await asyncio.sleep(3600)
        return web.Response(status=204)


@pytest.fixture
def receivers() -> Iterator[Receivers]:
    thread = LoopThread()
    hooks = Receivers()
    app = web.Application()
    app.router.add_post("/flood", hooks.flood)
    app.router.add_post("/tarpit", hooks.tarpit)
    app.router.add_post("/fast", hooks.fast)
    runner = web.AppRunner(app, shutdown_timeout=0.1)

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        hooks.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    thread.run(start())
    yield hooks
    thread.run(runner.cleanup())
    thread.close()


def _hook(id_: str, url: str, allow_internal: bool = True, space: str = "acme") -> str:
    return f"""
[[spaces.{space}.webhooks]]
id = "{id_}"
url = "{url}"
secret = "{SECRET}"
allow_internal = {"true" if allow_internal else "false"}
"""


@pytest.mark.parametrize("host", ["①②⑦.0.0.1", "127。0。0。1"])
def test_a_unicode_spelling_of_loopback_stops_the_worker_naming_the_url(
    kafka_broker: str, tmp_path: Path, receivers: Receivers, host: str
) -> None:
    extra = _hook("desk", f"http://{host}:{receivers.port}/flood", allow_internal=False)
    deployment = new_deployment(kafka_broker, tmp_path, extra=extra)
    try:
        with pytest.raises(InfraError, match="exited at start-up"):
            deployment.worker.start()
    finally:
        deployment.worker.stop()
    log = deployment.worker.log_path.read_text(errors="replace")
    assert "spaces.acme.webhooks.0.url" in log and "loopback" in log, log[-2000:]
    assert receivers.requests == {}


def _item(key: str, profile: str, space: str = "acme") -> bytes:
    item = {"type": "interaction", "space_id": space, "idempotency_key": key,
            "profile_id": profile, "source": "web", "conversation_id": "c1",
            "occurred_at": datetime.now(UTC).isoformat(),
            "interaction": {"kind": "engaged", "ref": f"item_variant:{space}:1",
                            "action": "click"}}  # fmt: skip
    return json.dumps(item).encode()


def _review(deployment: Any, space: str, profile: str) -> None:
    """Files a review request: one event to each endpoint of ``space``."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}/v1/profiles/{profile}/review-requests",
        data=json.dumps({"space_id": space, "receipts": ["rcpt_1"]}).encode(),
        headers={"Content-Type": "application/json", **deployment.headers()},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 201


def _attempts(deployment: Any) -> list[tuple[Any, ...]]:
    sql = ("SELECT endpoint, attempt, status, http_status, error FROM webhook_attempts "
           "ORDER BY endpoint, attempt")  # fmt: skip
    return [tuple(r) for r in read_query(deployment.settings, sql).rows]


def test_an_endless_body_is_not_read_and_a_tarpit_does_not_stop_ingestion(
    kafka_broker: str, tmp_path: Path, receivers: Receivers
) -> None:
    base = f"http://127.0.0.1:{receivers.port}"
    extra = _hook("flood", f"{base}/flood") + _hook("tarpit", f"{base}/tarpit")
    deployment = new_deployment(kafka_broker, tmp_path, extra=extra)
    deployment.worker.start()
    try:
        deployment.publish([_item("ivy-1", "p_ivy")])
        deployment.drain()
        _review(deployment, "acme", "p_ivy")
        # The sender is now held by the tarpit (10 s an attempt, then again): items
        # published meanwhile are ingested all the same.
        deadline = time.monotonic() + 90
        while "tarpit" not in receivers.requests:
            assert time.monotonic() < deadline, receivers.requests
            time.sleep(0.2)
        deployment.publish([_item(f"ivy-{n}", f"p_{n}") for n in range(2, 52)])
        deployment.drain()
        assert deployment.counts()["interactions"] == 51
        while not any(row[0] == "acme/tarpit" for row in _attempts(deployment)):
            assert time.monotonic() < deadline, _attempts(deployment)
            time.sleep(0.5)
        rows = _attempts(deployment)
    finally:
        deployment.worker.stop()
    flood = [r for r in rows if r[0] == "acme/flood"]
    # Delivered on its status, once: the body that never ends was not waited for.
    assert flood == [("acme/flood", 1, "delivered", 200, "")], rows
    tarpit = [r for r in rows if r[0] == "acme/tarpit"]
    assert tarpit[0][2:4] == ("failed", 0) and "TimeoutError" in tarpit[0][4], rows


def test_a_tarpit_costs_another_spaces_receiver_one_timeout_a_pass_not_one_per_event(
    kafka_broker: str, tmp_path: Path, receivers: Receivers
) -> None:
    base = f"http://127.0.0.1:{receivers.port}"
    extra = _hook("tarpit", f"{base}/tarpit") + _hook("fast", f"{base}/fast", space="lumen")
    deployment = new_deployment(kafka_broker, tmp_path, extra=extra)
    deployment.worker.start()
    try:
        deployment.publish([_item("a-1", "p_a"), _item("l-1", "p_l", space="lumen")])
        deployment.drain()
        # Three events for acme's tarpit, then one for lumen's good receiver (older
        # events go first in a pass).
        for _ in range(3):
            _review(deployment, "acme", "p_a")
        _review(deployment, "lumen", "p_l")
        deadline = time.monotonic() + 120
        while not receivers.tarpit_before_fast:
            assert time.monotonic() < deadline, receivers.requests
            time.sleep(0.2)
    finally:
        deployment.worker.stop()
    # One pass may have taken the first event before the others were filed, and the
    # next one that event's retry: at most two tarpit requests before lumen's event,
    # where attempting every event due to the tarpit made it wait for all three.
    assert receivers.tarpit_before_fast[0] <= 2, receivers.tarpit_before_fast
