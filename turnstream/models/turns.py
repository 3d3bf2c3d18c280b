"""Turn records: claims with their verdicts, constraint measurements, interactions."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints, model_validator

from turnstream.models.common import UINT32_MAX, Envelope, Id, JsonObject, WireModel
from turnstream.models.interactions import Interaction

__all__ = [
    "EVIDENCED_VERDICTS",
    "Claim",
    "ConstraintMeasurement",
    "ExperimentRef",
    "Turn",
    "Verdict",
]


class Verdict(StrEnum):
    matched = "matched"
    mismatch = "mismatch"
    no_evidence = "no_evidence"
    stale = "stale"
    gap_not_stated = "gap_not_stated"
    role_ambiguous = "role_ambiguous"
    unsupported = "unsupported"
    quoted_found = "quoted_found"
    quoted_missing = "quoted_missing"
    anchored = "anchored"
    below_threshold = "below_threshold"
    source_missing = "source_missing"
    not_checked = "not_checked"
    internal_text_found = "internal_text_found"


#: A claim "stands on evidence" with one of these verdicts.
EVIDENCED_VERDICTS = frozenset({Verdict.matched, Verdict.quoted_found, Verdict.anchored})

ClaimClass = Literal["money", "percent", "date", "duration", "quantity", "count", "dosage", "label"]


class Claim(WireModel):
    """One claim of an output, with the verdict the SDK gave it."""

    category: Id
    class_: ClaimClass | None = Field(default=None, alias="class")
    nature: Literal["quoted", "computed", "model"]
    role: Id | None = None
    span: tuple[Annotated[int, Field(ge=0)], Annotated[int, Field(ge=0)]] | None = None
    value: Annotated[str, StringConstraints(max_length=256)] | None = None
    verdict: Verdict
    action: Literal["none", "block", "warn", "count", "rewrite", "discard_anchor"]
    evidence: JsonObject | None = Field(default=None, max_length=32)

    @model_validator(mode="after")
    def _span_order(self) -> Claim:
        if self.span is not None and self.span[0] > self.span[1]:
            raise ValueError("span: start must not be after end")
        return self


class ConstraintMeasurement(WireModel):
    """One tool call measured against the hard constraints sent to it."""

    tool: Id
    sent: int = Field(ge=0, le=UINT32_MAX)
    results_checked: int = Field(ge=0, le=UINT32_MAX)
    violations: int = Field(ge=0, le=UINT32_MAX)
    unverifiable: int = Field(ge=0, le=UINT32_MAX)
    relaxed: bool = False

    @model_validator(mode="after")
    def _within_checked(self) -> ConstraintMeasurement:
        if self.violations + self.unverifiable > self.results_checked:
            raise ValueError("violations: violations + unverifiable cannot exceed results_checked")
        return self


class ExperimentRef(WireModel):
    id: Id
    arm: Id


class Turn(Envelope):
    """A turn record."""

    type: Literal["turn"]
    turn_id: Id
    agent: Id
    build: Id | None = None
    contract_version: Id | None = None
    #: The language the output was read in (``pt``, ``en``, ``es``), when known.
    language: Literal["pt", "en", "es"] | None = None
    #: The ``version`` of the constraints block the turn used (``cv_...``).
    constraints_version: Id | None = None
    interactions: list[Interaction] = Field(default_factory=list, max_length=1000)
    claims: list[Claim] = Field(default_factory=list, max_length=1000)
    constraints: list[ConstraintMeasurement] = Field(default_factory=list, max_length=1000)
    experiment: ExperimentRef | None = None
    guard_acted: bool = False
    guard_budget_exceeded: bool = False
