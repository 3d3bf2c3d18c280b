"""A value checked by a pattern ends where the text ends: Python's ``$`` also matches
before one final newline, so ``"...Z\n"`` passed as a time and ``"+55...\n"`` as a
phone number (hashed apart from the same number without it)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from turnstream.models.common import Handle, Timestamp

TIME = TypeAdapter(Timestamp)


@pytest.mark.parametrize("tail", ["\n", "\r\n", "\n\n", " "])
def test_a_time_with_a_trailing_line_break_is_refused(tail: str) -> None:
    assert TIME.validate_python("2026-12-05T10:00:00Z").year == 2026
    with pytest.raises(ValidationError, match="RFC 3339"):
        TIME.validate_python("2026-12-05T10:00:00Z" + tail)
    with pytest.raises(ValidationError, match="RFC 3339"):
        TIME.validate_python("2026-12-05T10:00:00+14:00" + tail)


@pytest.mark.parametrize(
    ("kind", "value"), [("phone_e164", "+5511999999999"), ("email", "ana@example.com")]
)
def test_a_handle_with_a_trailing_line_break_is_refused(kind: str, value: str) -> None:
    Handle.model_validate({"type": kind, "value": value})
    with pytest.raises(ValidationError, match="value: not"):
        Handle.model_validate({"type": kind, "value": value + "\n"})
