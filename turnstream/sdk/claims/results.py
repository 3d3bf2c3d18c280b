"""What a check and the guard return (``Evaluation``, ``Guarded``), and what the guard needs
of a ``Claims`` (``Checker``): here, so that ``check`` may call the guard and the guard use
these without importing ``check`` back (no import circle)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from turnstream.sdk.claims.contract import Contract, Language
from turnstream.sdk.claims.evidence import Evidence, StateRead
from turnstream.sdk.claims.records import ClaimRecord

__all__ = ["Checker", "Evaluation", "Guarded"]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every claim of an output and what the actions would do to it."""

    records: list[ClaimRecord]
    #: Passages to replace in a mutable output: (start, end, new text).
    edits: list[tuple[int, int, str]]
    mutable: bool
    #: Anchors (indexes into the evidence's) whose claim discards them.
    discarded_anchors: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Guarded:
    """What the guard let out."""

    text: str
    claims: list[ClaimRecord]
    guard_acted: bool
    guard_budget_exceeded: bool = False
    #: A block in an immutable output: the whole output goes to a person, untouched.
    held_for_review: bool = False
    discarded_anchors: list[int] = field(default_factory=list)

    def wire_claims(self) -> list[dict[str, Any]]:
        """The claims as the turn record's ``claims`` entries."""
        return [c.as_wire() for c in self.claims]


class Checker(Protocol):
    """What the guard uses of :class:`~turnstream.sdk.claims.check.Claims`."""

    contract: Contract
    clock: Callable[[], float]
    now: Callable[[], datetime]
    verify_claim: Callable[[ClaimRecord, Evidence], StateRead | None] | None

    def language(self, language: Language | None) -> Language: ...

    def evaluate(self, text: str, **options: Any) -> Evaluation: ...

    def apply(self, text: str, evaluation: Evaluation) -> Guarded: ...
