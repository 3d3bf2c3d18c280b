"""Claim records: what each claim puts in the turn record (docs/wire.md, ``claims`` entries)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

__all__ = ["STANDING", "ClaimRecord", "RecordAction", "Verdict"]

Verdict = Literal[
    "matched",
    "mismatch",
    "no_evidence",
    "stale",
    "gap_not_stated",
    "role_ambiguous",
    "unsupported",
    "quoted_found",
    "quoted_missing",
    "anchored",
    "below_threshold",
    "source_missing",
    "not_checked",
    "internal_text_found",
]
RecordAction = Literal["none", "block", "warn", "count", "rewrite", "discard_anchor"]
Nature = Literal["quoted", "computed", "model"]
#: Verdicts on which a claim stands on evidence (they take no action).
STANDING = frozenset({"matched", "quoted_found", "anchored"})
_MAX_VALUE = 256  # the wire model's limit on a claim's value


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """One claim of an output, with its verdict and the action taken (or that would be)."""

    category: str
    cls: str | None
    nature: Nature
    role: str | None
    span: tuple[int, int]
    value: str | None
    verdict: Verdict
    action: RecordAction
    evidence: dict[str, Any] | None = None
    #: The text that replaces the span when the action is ``rewrite`` (never published).
    rewrite_to: str | None = None

    @property
    def evidenced(self) -> bool:
        """Whether the claim stands on evidence."""
        return self.verdict in STANDING

    def with_action(self, action: RecordAction) -> ClaimRecord:
        """The same claim with another action."""
        return replace(
            self, action=action, rewrite_to=self.rewrite_to if action == "rewrite" else None
        )

    def as_wire(self) -> dict[str, Any]:
        """The ``claims`` entry of the turn record, exactly as docs/wire.md names its fields."""
        value = self.value if self.value is None else self.value[:_MAX_VALUE]
        return {
            "category": self.category,
            "class": self.cls,
            "nature": self.nature,
            "role": self.role,
            "span": [self.span[0], self.span[1]],
            "value": value,
            "verdict": self.verdict,
            "action": self.action,
            "evidence": self.evidence,
        }
