"""Which role each HTTP route needs, and the middleware that asks.

``ROUTES`` maps ``(method, path template)`` to the
:class:`~turnstream.core.access.RouteAccess` it needs, or to :data:`OPEN`, as the route
table (:mod:`turnstream.entrypoints.http.route_table`) says. A route that is served but not in the
table is refused to every key (403) and fails
``tests/integration/http/test_access_table.py``.

The middleware authenticates the ``Authorization: Bearer`` key against the keys file
(:class:`turnstream.adapters.api_key_file.KeyFile`, read again when it changes) and checks the
route's role with the pure rules of :mod:`turnstream.core.access`; the handlers check
the space of the request (:func:`refuse_space`) once they have read it, before they
look the space up.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Final

from aiohttp import web

from turnstream.adapters.api_key_file import KeyFile
from turnstream.core.access import (
    ApiKey,
    Refusal,
    RouteAccess,
    authenticate,
    authorize,
    authorize_space,
)
from turnstream.entrypoints.http.route_table import ROUTE_TABLE
from turnstream.errors import ConfigError

__all__ = ["OPEN", "ROUTES", "auth_middleware", "caller", "refusal_response", "refuse_space"]

log = logging.getLogger(__name__)

#: What :data:`ROUTES` holds for a route anyone may call (no role in the table).
OPEN: Final = None

#: Every route: ``(METHOD, path template as registered)`` -> what it needs, from
#: :data:`turnstream.entrypoints.http.route_table.ROUTE_TABLE`.
ROUTES: Mapping[tuple[str, str], RouteAccess | None] = {
    (route.method, route.path): route.access for route in ROUTE_TABLE
}

_DECLARED_PATHS = frozenset(path for _, path in ROUTES)


def refusal_response(refusal: Refusal) -> web.Response:
    """The JSON answer of a refusal (``WWW-Authenticate`` with a 401)."""
    headers = {"WWW-Authenticate": refusal.challenge} if refusal.challenge else None
    return web.Response(
        body=json.dumps({"error": refusal.reason}).encode(),
        status=refusal.status,
        content_type="application/json",
        headers=headers,
    )


def caller(request: web.Request) -> ApiKey | None:
    """The key the request was authenticated with (None on an open route without one)."""
    return request.get("turnstream_api_key")


def refuse_space(request: web.Request, space_id: str) -> Refusal | None:
    """The 403 when the request's key does not speak for ``space_id``, else None."""
    key = caller(request)
    if key is None:  # only open routes get here without a key, and none takes a space
        return Refusal(403, "this key is not for the space asked for")
    return authorize_space(key, space_id)


def _template(request: web.Request) -> str | None:
    info = request.match_info
    if info.http_exception is not None:  # no such path or method: aiohttp answers
        return None
    resource = info.route.resource
    return resource.canonical if resource is not None else None


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def auth_middleware(
    keys: KeyFile,
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """An aiohttp middleware: authenticate, then check the route's role."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = _template(request)
        method = "GET" if request.method == "HEAD" else request.method
        try:
            known = keys.current()
        except ConfigError as exc:  # a keys file edited by hand into nonsense: refuse all
            log.error("%s", exc)
            return web.json_response({"error": "the worker cannot read its keys"}, status=503)
        found = authenticate(request.headers.get("Authorization"), known)
        if path is not None and (method, path) in ROUTES and ROUTES[method, path] is OPEN:
            if isinstance(found, ApiKey):
                request["turnstream_api_key"] = found
            return await handler(request)
        if isinstance(found, Refusal):
            return refusal_response(found)
        request["turnstream_api_key"] = found
        unmatched = request.match_info.http_exception
        if unmatched is not None:  # no such path (404) or method (405): said in JSON
            return web.json_response(
                {"error": "no such route" if unmatched.status == 404 else "method not allowed"},
                status=unmatched.status,
                headers={k: v for k, v in unmatched.headers.items() if k == "Allow"},
            )
        if path is None or (method, path) not in ROUTES:
            if path is not None and path not in _DECLARED_PATHS:
                log.warning("refused %s %s: the route declares no role", method, path)
                return refusal_response(Refusal(403, "this route declares no role"))
            return await handler(request)  # a method the route does not serve: 405
        access = ROUTES[method, path]
        assert access is not None
        refusal = authorize(found, access)
        if refusal is not None:
            return refusal_response(refusal)
        try:
            return await handler(request)
        except web.HTTPClientError as exc:
            # aiohttp's own refusals (a body over client_max_size: 413) answer in text;
            # in JSON like every other, naming the body.
            message = exc.reason or "refused"
            return web.json_response(
                {"error": message, "errors": [{"field": "<body>", "message": message}]},
                status=exc.status,
            )

    return middleware
