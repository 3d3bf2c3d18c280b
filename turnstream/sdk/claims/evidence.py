"""What the SDK saw in a turn: tool calls with their values, state reads, documents, anchors.

The file format of a turn to check is in docs/contract.md (``--turn FILE.json``); the same models
serve the SDK's API. A value's role is its ``field``; it is fresh for a claim while
``now - at <= claim_age_s``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from turnstream.models.common import Id, Timestamp
from turnstream.sdk.claims.contract import Language

__all__ = [
    "Anchor",
    "Document",
    "Evidence",
    "EvidenceValue",
    "ProvenancedValue",
    "StateRead",
    "ToolCall",
    "TurnToCheck",
]

ValueClass = Literal["money", "percent", "date", "duration", "quantity", "count", "dosage", "label"]


class _In(BaseModel):
    # Accept more, never less (docs/contract.md): unknown fields are ignored, named ones are strict.
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)


class EvidenceValue(_In):
    """One value with provenance: the object's field, its class and what it held."""

    object: Id | None = None
    field: Id
    class_: ValueClass = Field(alias="class")
    value: float | int | str | tuple[float, float]
    unit: Annotated[str, StringConstraints(max_length=32)] | None = None
    claim_age_s: float | None = Field(default=None, ge=0)
    gaps: list[Annotated[str, StringConstraints(min_length=1, max_length=512)]] = Field(
        default_factory=list
    )
    #: The value names its object (a field of role ``identifier``: a name, a title, a SKU):
    #: a sentence that says it is about that object (docs/claims.md, "Binding").
    identifies: bool = False


class ToolCall(_In):
    """A call of a tool in the turn, with the values of its result."""

    id: Id
    tool: Id
    at: Timestamp | None = None
    values: list[EvidenceValue] = Field(default_factory=list)


class StateRead(_In):
    """A read of an object's state, at a time."""

    object: Id
    at: Timestamp
    values: list[EvidenceValue] = Field(default_factory=list)


class Document(_In):
    """A document the turn holds (a quote or an anchor may cite it)."""

    id: Id
    text: str


class Anchor(_In):
    """Where in the output a source is cited, the quoted text and the document it cites."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    quote: str | None = None
    document: Id

    @model_validator(mode="after")
    def _order(self) -> Anchor:
        if self.end < self.start:
            raise ValueError("end: before start")
        return self


@dataclass(frozen=True, slots=True)
class ProvenancedValue:
    """A value of the evidence with where it came from (a call or a read) and when."""

    item: EvidenceValue
    object: str | None
    at: datetime | None
    call: str | None = None
    tool: str | None = None

    def fresh(self, now: datetime) -> bool:
        """Fresh for a claim while ``now - at <= claim_age_s`` (no age or no time: fresh)."""
        if self.item.claim_age_s is None or self.at is None:
            return True
        return (now - self.at).total_seconds() <= self.item.claim_age_s

    def ref(self) -> dict[str, Any]:
        """The evidence entry of a claim record: the call and field, or the object and field."""
        ref: dict[str, Any] = {"kind": "value"}
        if self.call is not None:
            ref["call"] = self.call
        if self.object is not None:
            ref["object"] = self.object
        ref["field"] = self.item.field
        return ref


class Evidence(_In):
    """The turn's evidence."""

    calls: list[ToolCall] = Field(default_factory=list)
    reads: list[StateRead] = Field(default_factory=list)
    documents: list[Document] = Field(default_factory=list)
    anchors: list[Anchor] = Field(default_factory=list)

    def values(self) -> list[ProvenancedValue]:
        """Every value with provenance, calls first, in the order they came."""
        out = [
            ProvenancedValue(v, v.object, c.at, c.id, c.tool) for c in self.calls for v in c.values
        ]
        out.extend(ProvenancedValue(v, r.object, r.at) for r in self.reads for v in r.values)
        return out

    def called(self, tools: tuple[str, ...]) -> list[ToolCall]:
        """The calls of any of ``tools``."""
        return [c for c in self.calls if c.tool in tools]

    def document(self, doc_id: str) -> Document | None:
        """The document with this id, if the turn holds it."""
        return next((d for d in self.documents if d.id == doc_id), None)

    def with_read(self, read: StateRead) -> Evidence:
        """This evidence and one more state read (a resolver's fresh read)."""
        return self.model_copy(update={"reads": [*self.reads, read]})


class TurnToCheck(Evidence):
    """A turn to check (``--turn FILE.json``, and each example's ``turn``)."""

    agent: Id | None = None
    language: Language | None = None
    context: Id | None = None
    immutable: bool = False
    now: Timestamp
    output: str

    def evidence(self) -> Evidence:
        """The turn's evidence alone."""
        return Evidence(
            calls=self.calls, reads=self.reads, documents=self.documents, anchors=self.anchors
        )
