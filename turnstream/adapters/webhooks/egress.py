"""Outgoing HTTP for webhooks that cannot be pointed at the worker's own network.

:class:`GuardedResolver` resolves a name and refuses it when any address it resolves to
is not a public one (:func:`turnstream.core.destinations.address_refusal`); the
connector then connects to those checked addresses only, so a name cannot resolve to a
public address for the check and to a private one for the connection. An address
written in the URL skips resolvers in aiohttp: :func:`destination_refusal` checks it
before the request. Redirects are never followed (:data:`POST_OPTIONS`)."""

from __future__ import annotations

import errno
import socket
from typing import Any

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from turnstream.core.destinations import address_refusal, host_refusal, literal_address, url_host

__all__ = ["POST_OPTIONS", "GuardedResolver", "destination_refusal", "guarded_session"]

#: Every webhook request: a 3xx answer is an answer (not delivered, retried), never a hop.
POST_OPTIONS: dict[str, Any] = {"allow_redirects": False}


class DestinationRefused(OSError):
    """A destination the rules refuse (the reason in ``strerror``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(errno.EACCES, f"refused: {reason}")


class GuardedResolver(AbstractResolver):
    """Resolves as the system does, then refuses a name with any non-public address."""

    def __init__(self, allow_internal: bool = False, inner: AbstractResolver | None = None) -> None:
        self.allow_internal = allow_internal
        self._inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        why = host_refusal(host, self.allow_internal)
        if why is not None:
            raise DestinationRefused(why)
        if self._inner is None:
            self._inner = ThreadedResolver()
        found = await self._inner.resolve(host, port, family)
        for result in found:
            address = literal_address(result["host"])
            why = (
                f"{result['host']} is not an address"
                if address is None
                else address_refusal(address, self.allow_internal)
            )
            if why is not None:
                raise DestinationRefused(f"{host} resolves to {why}")
        return found

    async def close(self) -> None:
        if self._inner is not None:
            await self._inner.close()


def destination_refusal(url: str, allow_internal: bool = False) -> str | None:
    """Why ``url``'s host is refused as written (an address in any spelling, a metadata
    name, localhost), and as aiohttp's own parser (yarl) reads it, which is the host it
    connects to; None when both pass, to be checked again once resolved."""
    try:
        connected = URL(url).host or ""
    except ValueError as exc:
        return f"the URL cannot be read: {exc}"
    for host in dict.fromkeys((url_host(url), connected)):
        why = host_refusal(host, allow_internal)
        if why is not None:
            return why
    return None


def guarded_session(
    allow_internal: bool, timeout: float, resolver: AbstractResolver | None = None
) -> aiohttp.ClientSession:
    """A session whose every connection goes to addresses the rules allow (names
    resolved by ``resolver``, the system's by default); no proxy from the environment
    (``trust_env`` off), no cookies kept between receivers."""
    connector = aiohttp.TCPConnector(resolver=GuardedResolver(allow_internal, resolver))
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=timeout),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
    )
