"""Deterministic assignment of a person to an arm of an experiment, and what the arm
drops from the block when the worker serves it.

The person's point in [0, 1) is a hash of (experiment id, profile id); walking the arms'
cumulative allocation picks the arm, so the same person always lands in the same arm and
arms fill in proportion to their weights. A person coming from a critical source never
lands in the control arm: when the walk picks control, a second, salted point picks among
the other arms by their weights. People the walk puts in other arms keep them, whatever
their source.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Protocol, TypeVar

from turnstream.models.measurement import Arm, Experiment, MeasurementDocument

__all__ = ["arm_at", "assign", "pick_arm", "served_inferences", "unit_point"]

_I = TypeVar("_I", bound="_Kinded")


class _Kinded(Protocol):
    @property
    def kind(self) -> str: ...


_SEP = "\x1f"
_CRITICAL_SALT = "critical"


def unit_point(*parts: str) -> float:
    """A uniform point in [0, 1) from the SHA-256 of the parts (64 bits of it)."""
    digest = hashlib.sha256(_SEP.join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def pick_arm(arms: Sequence[Arm], point: float) -> Arm:
    """The arm whose share of the cumulative allocation holds ``point`` (in [0, 1))."""
    if not arms:
        raise ValueError("no arms to pick from")
    total = sum(a.allocation for a in arms)
    edge = 0.0
    for arm in arms:
        edge += arm.allocation / total
        if point < edge:
            return arm
    return arms[-1]  # rounding left the last edge a hair under 1


def assign(experiment: Experiment, profile_id: str, source: str) -> str:
    """The name of the arm this person is in, given the source they came through."""
    arm = pick_arm(experiment.arms, unit_point(experiment.id, profile_id))
    if arm.control and source in experiment.critical_sources:
        others = [a for a in experiment.arms if not a.control]
        arm = pick_arm(others, unit_point(experiment.id, profile_id, _CRITICAL_SALT))
    return arm.name


def arm_at(
    doc: MeasurementDocument, space_id: str, profile_id: str, source: str, now: datetime
) -> tuple[Experiment, Arm] | None:
    """The experiment of ``space_id`` running at ``now`` (the first, when several do) and
    this person's arm in it; ``None`` when none runs. The block the worker serves this
    person goes without ``arm.dropped`` (the control arm: without any block)."""
    for experiment in doc.experiments:
        if experiment.space_id != space_id or now < experiment.starts_at:
            continue
        if experiment.ends_at is not None and now >= experiment.ends_at:
            continue
        arm = experiment.arm(assign(experiment, profile_id, source))
        assert arm is not None  # assign names one of the experiment's arms
        return experiment, arm
    return None


def served_inferences(dropped: frozenset[str], inferences: Iterable[_I]) -> list[_I]:
    """The inferences the block of an arm that drops ``dropped`` may hold: without the
    inferred soft signals (``soft_signals``: affinities, implicit negatives, interests)
    and without the inferred sizes (``inferred_sizes``: inferred attributes)."""
    kept = []
    for inference in inferences:
        if "soft_signals" in dropped and inference.kind != "attribute":
            continue
        if "inferred_sizes" in dropped and inference.kind == "attribute":
            continue
        kept.append(inference)
    return kept
