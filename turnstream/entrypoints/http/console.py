"""The console: one page (``GET /console``) the worker serves, in pt, en or es.

The page is a shell: HTML, styles and a script, no data. Whoever opens it enters a key,
which the script keeps in the tab's ``sessionStorage`` (never in a URL, never in a cookie)
and sends as ``Authorization: Bearer`` to the JSON routes it calls; those routes decide,
as for any client, by the key's roles and space. So the shell is open (like
``/v1/status``) and shows nothing until a key is entered.
"""

from __future__ import annotations

import json
import secrets
from functools import cache
from importlib.resources import files

from faust.web import Request, Response, View

from turnstream.core.console_labels import console_labels
from turnstream.entrypoints.http.views import Views

__all__ = ["console_page", "register_console"]


@cache
def _template() -> str:
    return files("turnstream.entrypoints.http").joinpath("console.html").read_text(encoding="utf-8")


def console_page(language: str | None, nonce: str) -> tuple[str, str]:
    """The page in ``language`` (``?lang=``; else English) and its language: the labels go
    in as JSON with ``<`` escaped, so no label closes the script element."""
    lang, labels = console_labels(language)
    data = json.dumps(labels, ensure_ascii=False).replace("<", "\\u003c")
    page = _template().replace("__LABELS__", data).replace("__LANG__", lang)
    return page.replace("__NONCE__", nonce), lang


def _headers(nonce: str) -> dict[str, str]:
    """Nothing from another host, no framing, no referrer; only this page's script runs."""
    policy = (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; style-src 'unsafe-inline'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
    }


def register_console(views: Views) -> None:
    """Serve ``GET /console`` on the worker's app."""

    @views("console")
    class ConsoleView(View):
        async def get(self, request: Request) -> Response:
            nonce = secrets.token_urlsafe(16)
            page, _ = console_page(request.query.get("lang"), nonce)
            return self.html(page, headers=_headers(nonce))
