"""Which messages erase whom: the erase policy, one for the live driver and for replay.

An accepted ``erase`` command erases its subject, the person of a space: every row of
theirs in every table that holds a profile id (the sink does it, after the rows of the
batch that carries the command are written), and their derivation state.
"""

from __future__ import annotations

from collections.abc import Iterable

from turnstream.core.ingest import Decision
from turnstream.models import Command

__all__ = ["Subject", "erases", "erasure_subjects", "unique_subjects"]

#: A person of a space: ``(space_id, profile_id)``.
Subject = tuple[str, str]


def erases(decision: Decision) -> Subject | None:
    """The subject a decision erases: an accepted, not duplicate, ``erase`` command's."""
    item = decision.item
    if decision.duplicate or not isinstance(item, Command) or item.command != "erase":
        return None
    if decision.profile_id is None:
        return None
    return (item.space_id, decision.profile_id)


def erasure_subjects(decisions: Iterable[Decision]) -> list[Subject]:
    """Every subject the decisions erase, once each, in the order of the decisions."""
    return unique_subjects(erases(d) for d in decisions)


def unique_subjects(found: Iterable[Subject | None]) -> list[Subject]:
    """The subjects found, once each, in their order (``None``: nobody)."""
    return list(dict.fromkeys(s for s in found if s is not None))
