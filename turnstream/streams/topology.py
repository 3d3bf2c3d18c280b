"""Topic names: one input topic per item type, plus fan-out and dead letters."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TopicNames"]


@dataclass(frozen=True)
class TopicNames:
    """Every topic turnstream uses, under one prefix. All are keyed by profile id."""

    prefix: str = "turnstream"

    def input(self, item_type: str) -> str:
        """The topic producers publish items of ``item_type`` to."""
        return f"{self.prefix}.{item_type}s"

    @property
    def inputs(self) -> tuple[str, ...]:
        """Input topics, one per item type."""
        return tuple(self.input(t) for t in ("turn", "interaction", "outcome", "command"))

    @property
    def accepted(self) -> str:
        """Validated items fanned out for derivation, keyed by profile id (no raw handle)."""
        return f"{self.prefix}.accepted"

    @property
    def inferences(self) -> str:
        """Inferences as derived (every change), keyed by profile id."""
        return f"{self.prefix}.inferences"

    @property
    def dead_letters(self) -> str:
        """Refused and invalid messages with the reason and the original bytes."""
        return f"{self.prefix}.dead-letters"
