"""Bodies of the worker's HTTP API (the read side and the reviewable profile)."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from turnstream.models.common import SPACE_ID_PATTERN, ForWhom, Handle, Id, Scalar
from turnstream.models.interactions import Attribute, Preference

__all__ = [
    "ASKED_MAX",
    "ASKED_NAME_MAX",
    "CONTEXT_USE_DIMENSIONS",
    "CURRENT_MAX",
    "ArmsQuery",
    "ConstraintsRequest",
    "ContextUseQuery",
    "CorrectRequest",
    "ExperimentsQuery",
    "ResolveRequest",
    "ReviewRequestIn",
    "SdkProfileQuery",
    "SpaceRequest",
]

SpaceId = Annotated[str, StringConstraints(pattern=SPACE_ID_PATTERN), Field(examples=["acme"])]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


#: At most this many names in ``asked``, each of at most ``ASKED_NAME_MAX`` characters.
ASKED_MAX = 32
ASKED_NAME_MAX = 128
#: At most this many objects in ``current``: each costs the block ~45 µs of CPU to
#: compare and name (5.8 ms at 64, 14 ms at 256: docs/limits.md), so an agent sends the
#: objects it is about to speak of, not every one it ever showed.
CURRENT_MAX = 64


class ConstraintsRequest(_Body):
    """``POST /v1/constraints``: the block for one person (and one ``for``)."""

    space_id: SpaceId
    profile_id: Id | None = None
    handle: Handle | None = None
    for_: ForWhom = Field(default="self", alias="for")
    session_id: Id | None = None
    #: Attributes the person asked about ("my size"): inferred ones apply only then.
    asked: list[Annotated[str, StringConstraints(max_length=ASKED_NAME_MAX)]] = Field(
        default_factory=list, max_length=ASKED_MAX
    )
    #: The delivery goes to another address: the block asks for whom.
    delivery_elsewhere: bool = False
    #: Render the block for this tool, through the source's binding.
    tool: Id | None = None
    source: Id | None = None
    #: The state of objects the person was shown, as the agent read it now (ref ->
    #: field -> value; a field of many values as a list): ``already_presented`` says
    #: what changed since the person saw them.
    current: dict[
        Annotated[str, StringConstraints(min_length=1, max_length=512)],
        dict[Annotated[str, StringConstraints(max_length=128)], Scalar | list[Scalar] | None],
    ] = Field(default_factory=dict, max_length=CURRENT_MAX)


class SdkProfileQuery(_Body):
    """``GET /v1/sdk/profile``'s query string: the space and the calling source."""

    space_id: SpaceId
    source: Id


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


#: What ``GET /v1/context-use`` may be broken down by (``by``).
CONTEXT_USE_DIMENSIONS = ("space_id", "source", "agent")


class ContextUseQuery(_Body):
    """``GET /v1/context-use``'s query string: the caller's space (a key for one space
    gets its own by default), ``since`` a day, ``by`` a comma-separated breakdown."""

    space_id: SpaceId | None = None
    #: From this day on (``YYYY-MM-DD``).
    since: date | None = None
    #: Some of ``space_id``, ``source``, ``agent``, comma-separated.
    by: Annotated[str, StringConstraints(pattern=r"^[a-z_]+(,[a-z_]+)*$", max_length=64)] = (
        "source,agent"
    )

    @field_validator("by")
    @classmethod
    def _known_dimensions(cls, value: str) -> str:
        parts = value.split(",")
        unknown = [p for p in parts if p not in CONTEXT_USE_DIMENSIONS]
        if unknown:
            raise ValueError(f"takes some of {', '.join(CONTEXT_USE_DIMENSIONS)}")
        if len(set(parts)) != len(parts):
            raise ValueError("names a dimension twice")
        return value

    def dimensions(self) -> tuple[str, ...]:
        """The breakdown, in order."""
        return tuple(self.by.split(","))


class ExperimentsQuery(BaseModel):
    """``GET /v1/experiments``: the space (a key for one space gets its own)."""

    model_config = ConfigDict(extra="forbid")
    space_id: SpaceId | None = None


class ArmsQuery(BaseModel):
    """``GET /v1/experiments/{experiment_id}/arms``: the look's day (default today)."""

    model_config = ConfigDict(extra="forbid")
    as_of: date | None = None
