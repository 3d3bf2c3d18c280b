"""Webhooks cannot be turned on the worker's own network: at every attempt, on the
address the connection uses. A receiver listens on 127.0.0.1 (standing for anything
internal: a metadata service, an admin port); endpoints reach for it through hostile
URLs (hex, decimal, IPv6-mapped, localhost), through a name whose DNS answer is
loopback, and through a public receiver's redirect. Nothing reaches it unless the
endpoint is allowed the internal network, and then redirects are still not followed.
The real sender records each attempt in a real store (chDB)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from turnstream.adapters.clickhouse.review_requests import open_review
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.webhooks.egress import guarded_session
from turnstream.adapters.webhooks.sender import WebhookSender
from turnstream.core.webhooks import EVENT_TYPES, Endpoint
from turnstream.models.requests import ReviewRequestIn

pytestmark = pytest.mark.integration


class Internal:
    """The thing a hostile URL wants to reach: it counts every request by path."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.port = 0

    async def handle(self, request: web.Request) -> web.Response:
        await request.read()
        self.hits[request.path] = self.hits.get(request.path, 0) + 1
        if request.path == "/redirect":  # an allowed receiver that bounces elsewhere
            target = f"http://127.0.0.1:{self.port}/stolen"
            return web.Response(status=307, headers={"Location": target})
        return web.Response(status=204)


@asynccontextmanager
async def internal_server() -> AsyncIterator[Internal]:
    internal = Internal()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", internal.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    internal.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield internal
    finally:
        await runner.cleanup()


class Dns(AbstractResolver):
    """A DNS that answers what the test says (a name pointed at loopback, or rebinding:
    a public answer and a private one)."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        return [
            {"hostname": host, "host": address, "port": port, "family": socket.AF_INET,
             "proto": 0, "flags": socket.AI_NUMERICHOST}
            for address in self.answers[host]
        ]  # fmt: skip

    async def close(self) -> None:
        pass


async def _post(session: aiohttp.ClientSession, url: str) -> Any:
    try:
        async with session.post(url, data=b"{}", allow_redirects=False) as answer:
            return answer.status
    except aiohttp.ClientError as exc:
        return exc


@pytest.mark.parametrize(
    ("answers", "refused"),
    [
        (["127.0.0.1"], "hooks.example.com resolves to 127.0.0.1 is a loopback address"),
        (["93.184.216.34", "127.0.0.1"], "resolves to 127.0.0.1 is a loopback address"),
        (["169.254.169.254"], "is a cloud metadata address"),
    ],
)
def test_a_name_resolving_to_an_internal_address_is_refused_at_connection(
    answers: list[str], refused: str
) -> None:
    async def scenario() -> None:
        async with internal_server() as internal:
            dns = Dns({"hooks.example.com": answers})
            url = f"http://hooks.example.com:{internal.port}/hook"
            strict = guarded_session(False, 10, dns)
            allowed = guarded_session(True, 10, dns)
            try:
                error = await _post(strict, url)
                assert isinstance(error, aiohttp.ClientConnectorError), error
                assert refused in str(error)
                assert internal.hits == {}
                answer = await _post(allowed, url)
                if "metadata" in refused:  # never, even to an internal endpoint
                    assert isinstance(answer, aiohttp.ClientConnectorError), answer
                    assert internal.hits == {}
                elif answers == ["127.0.0.1"]:
                    # Allowed by name: it connects to the very address that was checked.
                    assert answer == 204 and internal.hits == {"/hook": 1}
                assert dns.asked  # the name went through the guarded resolver
            finally:
                await strict.close()
                await allowed.close()

    asyncio.run(scenario())


def _endpoint(id_: str, url: str, allow_internal: bool = False) -> Endpoint:
    return Endpoint("acme", id_, url, b"a-secret-of-16-chars", frozenset(EVENT_TYPES),
                    allow_internal)  # fmt: skip


def test_the_sender_refuses_hostile_urls_and_follows_no_redirect(store: Store) -> None:
    open_review(store, "p_eve", ReviewRequestIn(space_id="acme", receipts=["rcpt_1"]))

    async def scenario() -> dict[str, tuple[int, str]]:
        async with internal_server() as internal:
            port = internal.port
            endpoints = [
                _endpoint("hex", f"http://0x7f000001:{port}/hook"),
                _endpoint("decimal", f"http://2130706433:{port}/hook"),
                _endpoint("octal", f"http://0177.0.0.1:{port}/hook"),
                _endpoint("short", f"http://127.1:{port}/hook"),
                _endpoint("loopback", f"http://127.0.0.1:{port}/hook"),
                _endpoint("mapped", f"http://[::ffff:127.0.0.1]:{port}/hook"),
                _endpoint("six", f"http://[::1]:{port}/hook"),
                _endpoint("name", f"http://localhost:{port}/hook"),
                _endpoint("userinfo", f"http://hooks.example.com@127.0.0.1:{port}/hook"),
                # Unicode that aiohttp's URL parser maps to 127.0.0.1, then connects to
                # without a resolver (IDNA: enclosed digits, the ideographic full stop).
                _endpoint("enclosed", f"http://①②⑦.0.0.1:{port}/hook"),
                _endpoint("ideographic", f"http://127。0。0。1:{port}/hook"),
                _endpoint("metadata", f"http://169.254.169.254:{port}/latest/meta-data/", True),
                _endpoint("redirect", f"http://127.0.0.1:{port}/redirect", True),
            ]
            sender = WebhookSender(AsyncStore(store), endpoints)
            sessions = {allow: guarded_session(allow, 10) for allow in (False, True)}
            try:
                made = await sender.run_once(sessions)
            finally:
                for session in sessions.values():
                    await session.close()
            assert made == len(endpoints)
            # Only the allowed endpoint's own path was asked; the redirect's target never.
            assert internal.hits == {"/redirect": 1}
        rows = store.query(
            "SELECT endpoint, http_status, error, status FROM webhook_attempts ORDER BY endpoint"
        ).rows
        assert {r[3] for r in rows} == {"failed"}
        return {r[0].split("/")[1]: (r[1], r[2]) for r in rows}

    attempts = asyncio.run(scenario())
    assert attempts["redirect"] == (307, "HTTP 307 (a redirect: not followed)")
    for name, (status, error) in attempts.items():
        if name == "redirect":
            continue
        assert status == 0 and "refused: " in error, (name, error)
    assert "2130706433 spells 127.0.0.1 is a loopback address" in attempts["decimal"][1]
    assert "carrying 127.0.0.1" in attempts["mapped"][1]
    assert "localhost is a loopback name" in attempts["name"][1]
    assert "cloud metadata" in attempts["metadata"][1]
    # Each refused delivery waits for its retry, as any failed one does.
    pending = store.query(
        "SELECT count() FROM webhook_deliveries FINAL WHERE status = 'pending'"
    ).rows
    assert int(pending[0][0]) == len(attempts)
