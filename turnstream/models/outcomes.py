"""Lifecycle outcomes (purchase, delivery, return, kept): never interactions."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from turnstream.models.common import Envelope, Id, Scalar, Text

__all__ = ["EXPOSURE_TOKEN_PATTERN", "Outcome"]

#: ``nx1.<exposure_id>.<pos>.<verifier>``
EXPOSURE_TOKEN_PATTERN = (
    r"^nx1\.[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}\.[1-9][0-9]{0,5}"
    r"\.[A-Za-z0-9_-]{4,128}$"
)


class Outcome(Envelope):
    type: Literal["outcome"]
    outcome: Literal["purchase", "delivery", "return", "kept"]
    ref: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    order_id: Id
    exposure_token: Annotated[str, StringConstraints(pattern=EXPOSURE_TOKEN_PATTERN)] | None = None
    attrs: dict[Annotated[str, StringConstraints(max_length=128)], Scalar] = Field(
        default_factory=dict, max_length=64
    )
    reason: Text | None = None
