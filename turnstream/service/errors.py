"""What a use case refuses, by kind; the adapters say it in their terms (the HTTP routes:
404 and 422, with the body :meth:`Refusal.body` gives)."""

from __future__ import annotations

from typing import Any

__all__ = ["Invalid", "NotFound", "Refusal"]


class Refusal(Exception):
    """A request a use case refuses: ``error`` says why, ``errors`` which fields."""

    def __init__(self, error: str, errors: list[dict[str, str]] | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.errors = errors

    def body(self) -> dict[str, Any]:
        """``{"error": ..., "errors": [{"field": ..., "message": ...}]}`` (errors when known)."""
        if self.errors is None:
            return {"error": self.error}
        return {"error": self.error, "errors": self.errors}


class NotFound(Refusal):
    """What the request names does not exist (or is off)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message, [{"field": field, "message": message}])


class Invalid(Refusal):
    """The request cannot be served as it is."""
