"""Reading a request's JSON body, whatever a hostile client sends."""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

__all__ = ["BadBody", "json_body"]


class BadBody(Exception):
    """The body is not JSON (the message says why, without repeating it)."""


async def json_body(request: web.Request) -> Any:
    """The body as JSON; :class:`BadBody` when it is not, including nesting deeper than
    Python's parser recurses (``[`` x 100,000 raised RecursionError: a 500 before), and
    an empty body."""
    raw = await request.read()
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise BadBody("the body is not JSON") from None
