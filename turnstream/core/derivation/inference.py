"""An inference and its evidence, as derivation emits them and the store keeps them; its
id is a digest of what it says, so the same evidence always gives the same id. The rules
that derive them are in :mod:`turnstream.core.derivation.derive`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from turnstream.core.derivation.events import format_time, parse_time

__all__ = [
    "Evidence",
    "Inference",
    "InferenceKind",
    "inference_id",
]

InferenceKind = Literal["affinity", "implicit_negative", "attribute", "interest"]


def inference_id(
    space_id: str, profile_id: str, for_: str, kind: str, attr: str, value: str
) -> str:
    """``inf_`` and the first 24 hex digits of SHA-256 over the six parts.

    The parts are joined by the unit separator (U+001F), which none of them holds.
    """
    digest = hashlib.sha256(
        "\x1f".join((space_id, profile_id, for_, kind, attr, value)).encode()
    ).hexdigest()
    return f"inf_{digest[:24]}"


@dataclass(frozen=True)
class Evidence:
    """The counts an inference rests on (floats rounded to 6 decimals)."""

    effective_exposure: float = 0.0
    weighted_signal: float = 0.0
    events: int = 0
    sessions: int = 0
    lift: float = 0.0
    exposures: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "effective_exposure": self.effective_exposure,
            "weighted_signal": self.weighted_signal,
            "events": self.events,
            "sessions": self.sessions,
            "lift": self.lift,
            "exposures": self.exposures,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Evidence:
        return cls(**data)


@dataclass(frozen=True)
class Inference:
    """One soft signal inferred about a person, in one bucket. Never hard, never stated."""

    id: str
    space_id: str
    profile_id: str
    for_: str
    kind: InferenceKind
    attr: str
    value: str
    polarity: Literal["prefer", "avoid"] | None
    weight: float
    confidence: float
    evidence: Evidence
    origin_events: tuple[str, ...]
    applies: Literal["always", "when_asked"]
    status: Literal["active", "deleted"]
    created_at: datetime
    updated_at: datetime
    purposes: tuple[str, ...] = field(default=("personalization",))

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form, read back by :meth:`from_dict`."""
        return {
            "id": self.id,
            "space_id": self.space_id,
            "profile_id": self.profile_id,
            "for": self.for_,
            "kind": self.kind,
            "attr": self.attr,
            "value": self.value,
            "polarity": self.polarity,
            "weight": self.weight,
            "confidence": self.confidence,
            "evidence": self.evidence.to_dict(),
            "origin_events": list(self.origin_events),
            "applies": self.applies,
            "status": self.status,
            "created_at": format_time(self.created_at),
            "updated_at": format_time(self.updated_at),
            "purposes": list(self.purposes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Inference:
        return cls(
            id=data["id"],
            space_id=data["space_id"],
            profile_id=data["profile_id"],
            for_=data["for"],
            kind=data["kind"],
            attr=data["attr"],
            value=data["value"],
            polarity=data["polarity"],
            weight=data["weight"],
            confidence=data["confidence"],
            evidence=Evidence.from_dict(data["evidence"]),
            origin_events=tuple(data["origin_events"]),
            applies=data["applies"],
            status=data["status"],
            created_at=parse_time(data["created_at"]),
            updated_at=parse_time(data["updated_at"]),
            purposes=tuple(data["purposes"]),
        )
