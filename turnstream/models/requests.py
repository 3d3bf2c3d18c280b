"""Bodies of the worker's HTTP API (the read side and the reviewable profile)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from turnstream.models.common import ForWhom, Handle, Id
from turnstream.models.interactions import Attribute, Preference

__all__ = [
    "ConstraintsRequest",
    "CorrectRequest",
    "ResolveRequest",
    "ReviewRequestIn",
    "SpaceRequest",
]

SpaceId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ConstraintsRequest(_Body):
    """``POST /v1/constraints``: the block for one person (and one ``for``)."""

    space_id: SpaceId
    profile_id: Id | None = None
    handle: Handle | None = None
    for_: ForWhom = Field(default="self", alias="for")
    session_id: Id | None = None
    #: Attributes the person asked about ("my size"): inferred ones apply only then.
    asked: list[Annotated[str, StringConstraints(max_length=128)]] = Field(
        default_factory=list, max_length=32
    )
    #: The delivery goes to another address: the block asks for whom.
    delivery_elsewhere: bool = False
    #: Render the block for this tool, through the source's binding.
    tool: Id | None = None
    source: Id | None = None


class SpaceRequest(_Body):
    """A profile command's body: which space the profile id belongs to."""

    space_id: SpaceId


class CorrectRequest(SpaceRequest):
    """``POST .../inferences/{id}/correct``: what the person says instead."""

    replacement: Annotated[Preference | Attribute, Field(discriminator="kind")]


class ReviewRequestIn(SpaceRequest):
    """``POST .../review-requests``: review of an automated decision, by receipts."""

    receipts: list[Id] = Field(min_length=1, max_length=100)
    reason: Annotated[str, StringConstraints(max_length=2000)] = ""


class ResolveRequest(SpaceRequest):
    """``POST .../review-requests/{id}/resolve``: the controller's decision, recorded once."""

    decision: Literal["upheld", "overturned", "amended"]
    #: The explanation, by reference to receipts, rules and versions: never personal content.
    explanation: list[Id] = Field(default_factory=list, max_length=100)
