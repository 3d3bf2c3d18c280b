"""What the block's use case refuses, before anything of the person is read (fake reads,
no store)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from turnstream.config import Settings
from turnstream.models.requests import ConstraintsRequest
from turnstream.service.block import serve_block
from turnstream.service.errors import Invalid, NotFound, Refusal

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s"},
        "spaces": {"acme": {"features": ["signals"]}, "quiet": {"features": ["turns"]}},
    }
)


def _never(space_id: str, profile_id: str, for_: str | None) -> Any:
    raise AssertionError("a refused request reads nothing of the person")


def _refusal(body: dict[str, Any]) -> Refusal:
    with pytest.raises(Refusal) as caught:
        serve_block(_never, SETTINGS, ConstraintsRequest.model_validate(body))
    return caught.value


def test_a_space_not_configured_or_without_signals_is_not_found() -> None:
    missing = _refusal({"space_id": "ghost", "profile_id": "p1"})
    assert isinstance(missing, NotFound)
    message = "space 'ghost' is not configured"
    assert missing.body() == {
        "error": message,
        "errors": [{"field": "space_id", "message": message}],
    }
    off = _refusal({"space_id": "quiet", "profile_id": "p1"})
    assert isinstance(off, NotFound)
    assert off.body()["error"] == "the signals feature is off for space 'quiet'"


def test_a_body_naming_nobody_or_two_is_invalid() -> None:
    for body in (
        {"space_id": "acme"},
        {
            "space_id": "acme",
            "profile_id": "p1",
            "handle": {"type": "external_id", "value": "u1"},
        },
    ):
        refusal = _refusal(body)
        assert isinstance(refusal, Invalid)
        assert refusal.body() == {
            "error": "invalid body",
            "errors": [
                {"field": "handle", "message": "exactly one of handle and profile_id is required"}
            ],
        }


def test_a_price_in_current_that_is_no_price_is_refused_naming_its_path() -> None:
    """Read in the space's language before anything of the person is read: a price no
    number can be read from, or out of bounds, is a 422 naming ``current.<ref>.<field>``."""
    types = str(Path(__file__).resolve().parents[3] / "examples" / "types.toml")
    settings = Settings.model_validate(
        {
            "identity": {"secret": "s"},
            "spaces": {"acme": {"features": ["signals"], "types": types, "language": "pt"}},
        }
    )
    ref = "item_variant:acme:1"
    for junk in ("NaN", -5, [1.0], "cinco reais"):
        body = {"space_id": "acme", "profile_id": "p1", "current": {ref: {"price_sale": junk}}}
        with pytest.raises(Invalid) as caught:
            serve_block(_never, settings, ConstraintsRequest.model_validate(body))
        [error] = caught.value.body()["errors"]
        assert error["field"] == f"current.{ref}.price_sale"
