"""Lifecycle outcomes (purchase, delivery, return, kept): never interactions."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from turnstream.models.common import Envelope, ForWhom, Id, Scalar, Text

__all__ = ["EXPOSURE_TOKEN_PATTERN", "MAX_TOKEN_CHARS", "Outcome"]

#: ``nx1.<exposure_id>.<pos>.<verifier>``: the shape of a signed token (the verifier is 22
#: base64url characters, ``core/exposure_tokens``).
#: Groups: the exposure id, the position, the verifier.
EXPOSURE_TOKEN_PATTERN = (
    r"^nx1\.([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})"
    r"\.([1-9][0-9]{0,5})\.([A-Za-z0-9_-]{22})$"
)
#: A token is an opaque string the app copied; past this length it is no token at all.
MAX_TOKEN_CHARS = 256


class Outcome(Envelope):
    type: Literal["outcome"]
    outcome: Literal["purchase", "delivery", "return", "kept"]
    ref: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    order_id: Id
    #: Any string up to 256 characters: a token that is malformed, forged or another
    #: space's keeps the outcome (``token_status``), it only never attributes it.
    exposure_token: Annotated[str, StringConstraints(max_length=MAX_TOKEN_CHARS)] | None = None
    attrs: dict[Annotated[str, StringConstraints(max_length=128)], Scalar] = Field(
        default_factory=dict, max_length=64
    )
    reason: Text | None = None
    #: Whose purchase it was (as on interactions): a dependent's purchase goes to their
    #: bucket, never to the buyer's size or taste. Absent: the bucket of the exposure the
    #: token names, else ``self``.
    for_: ForWhom | None = Field(default=None, alias="for")
