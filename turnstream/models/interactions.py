"""The eight interaction kinds (what a person was shown or did)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from turnstream.models.common import (
    UINT16_MAX,
    UINT32_MAX,
    AttrRef,
    ExposureId,
    ForWhom,
    Id,
    JsonObject,
    Scalar,
    Text,
    Timestamp,
    WireModel,
)

__all__ = [
    "INTERACTION_KINDS",
    "Attribute",
    "Engaged",
    "Feedback",
    "Interaction",
    "Op",
    "Preference",
    "Presented",
    "PresentedItem",
    "Seen",
    "Strength",
    "Unwatch",
    "Watch",
]

Ref = Annotated[str, StringConstraints(min_length=1, max_length=512)]


class PresentedItem(WireModel):
    pos: int = Field(
        ge=1, le=UINT32_MAX, description="Position across every page of the same list."
    )
    ref: Ref
    shown: dict[Annotated[str, StringConstraints(max_length=128)], Scalar | None] = Field(
        default_factory=dict, max_length=64
    )


class _Kind(WireModel):
    """Base of every kind: whose signal it is travels with it inside a turn."""

    for_: ForWhom | None = Field(default=None, alias="for")


class Presented(_Kind):
    """A list delivered to the person: the exposure."""

    kind: Literal["presented"]
    exposure_id: ExposureId
    list_id: Id
    list_kind: Id
    page: int = Field(default=1, ge=1, le=UINT16_MAX)
    delivered_at: Timestamp
    visible_k: int = Field(ge=0, le=UINT32_MAX)
    method: Literal["bridge", "otel", "tool_result"] = "bridge"
    items: list[PresentedItem] = Field(min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _distinct_positions(self) -> Presented:
        positions = [item.pos for item in self.items]
        if len(set(positions)) != len(positions):
            raise ValueError("items: each pos may appear once in a page")
        return self


class Seen(_Kind):
    """How far the person saw a list."""

    kind: Literal["seen"]
    exposure_id: ExposureId
    max_index_seen: int = Field(ge=1, le=UINT32_MAX)


class Engaged(_Kind):
    kind: Literal["engaged"]
    exposure_id: ExposureId | None = None
    ref: Ref
    pos: int | None = Field(default=None, ge=1, le=UINT32_MAX)
    action: Literal["click", "detail", "mention", "cart", "compare", "share"]


class Feedback(_Kind):
    kind: Literal["feedback"]
    ref: Ref
    polarity: Literal["like", "dislike"]
    fields: list[Annotated[str, StringConstraints(max_length=128)]] | None = Field(
        default=None, max_length=64
    )
    reason: Text | None = None


class Op(StrEnum):
    in_ = "in"
    not_in = "not_in"
    eq = "eq"
    ne = "ne"
    lt = "lt"
    lte = "lte"
    gt = "gt"
    gte = "gte"
    between = "between"


_SINGLE_VALUE_OPS = frozenset({Op.eq, Op.ne, Op.lt, Op.lte, Op.gt, Op.gte})
_BETWEEN = Op.between  # looked up once: an enum member's access is a descriptor call


class Strength(StrEnum):
    must = "must"
    must_not = "must_not"
    prefer = "prefer"
    avoid = "avoid"


class Preference(_Kind):
    """What the person wants or refuses. Always said, never inferred."""

    kind: Literal["preference"]
    attr: AttrRef
    op: Op
    values: list[Scalar] = Field(min_length=1, max_length=256)
    strength: Strength
    scope: Literal["turn", "session", "persistent"] = "session"
    category: Id | None = None
    source: Literal["stated", "tool_args", "correction"]

    @model_validator(mode="after")
    def _arity(self) -> Preference:
        if self.op is _BETWEEN and len(self.values) != 2:
            raise ValueError(f"values: between takes exactly two values (got {len(self.values)})")
        if self.op in _SINGLE_VALUE_OPS and len(self.values) != 1:
            raise ValueError(f"values: {self.op.value} takes exactly one value")
        return self


class Attribute(_Kind):
    """What the person is: a size, a network, a diet."""

    kind: Literal["attribute"]
    attr: AttrRef
    value: Scalar
    system: Annotated[str, StringConstraints(max_length=16)] | None = None
    source: Literal["stated", "tool_args", "correction", "acquired", "kept", "returned_for_size"]


class Watch(_Kind):
    kind: Literal["watch"]
    condition: JsonObject = Field(min_length=1, max_length=64)
    consent_event: Id


class Unwatch(_Kind):
    kind: Literal["unwatch"]
    watch_id: Id


Interaction = Annotated[
    Presented | Seen | Engaged | Feedback | Preference | Attribute | Watch | Unwatch,
    Field(discriminator="kind"),
]

INTERACTION_KINDS = frozenset(
    {"presented", "seen", "engaged", "feedback", "preference", "attribute", "watch", "unwatch"}
)
