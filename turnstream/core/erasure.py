"""Which messages erase whom, and what an erase forgets: the erase policy, one for the
live drivers and for replay.

An accepted ``erase`` command erases its subject, the person of a space: every row of
theirs in every table that holds a profile id (the sink does it, after the rows of the
batch that carries the command are written), and their derivation state. It leaves an
*erase tombstone*: the subject and the time the erase occurred (``erased_through``), so
that whatever of theirs occurred at or before it and arrives later (commands, outcomes
and interactions travel on different topics, with no order between them) is dropped
and counted, not written or derived: an erase forgets the past whatever the order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from turnstream.core.ingest import Decision
from turnstream.models import Command

__all__ = [
    "Subject",
    "Tombstones",
    "erased_before",
    "erases",
    "erasure_tombstones",
    "forget_erased",
    "merge_tombstones",
]

#: A person of a space: ``(space_id, profile_id)``.
Subject = tuple[str, str]
#: Erase tombstones: subject -> the latest erase's ``occurred_at`` (``erased_through``).
Tombstones = Mapping[Subject, datetime]


def erases(decision: Decision) -> Subject | None:
    """The subject a decision erases: an accepted, not duplicate, ``erase`` command's."""
    item = decision.item
    if decision.duplicate or not isinstance(item, Command) or item.command != "erase":
        return None
    if decision.profile_id is None:
        return None
    return (item.space_id, decision.profile_id)


def erasure_tombstones(decisions: Iterable[Decision]) -> dict[Subject, datetime]:
    """The tombstones the decisions' erases leave: each subject, in the order of the
    decisions, with the latest ``occurred_at`` of its erases."""
    out: dict[Subject, datetime] = {}
    for d in decisions:
        subject = erases(d)
        if subject is not None:
            assert d.item is not None
            at = d.item.occurred_at
            out[subject] = max(out.get(subject, at), at)
    return out


def merge_tombstones(into: dict[Subject, datetime], new: Tombstones) -> None:
    """Add ``new`` to ``into`` (in place), keeping the later time of a subject in both."""
    for subject, at in new.items():
        known = into.get(subject)
        into[subject] = at if known is None else max(known, at)


def erased_before(decision: Decision, tombstones: Tombstones) -> bool:
    """Whether an accepted item occurred at or before its subject's erase (and so is to
    be forgotten). An ``erase`` command itself never is: erasing again is harmless."""
    item = decision.item
    if decision.duplicate or item is None or decision.profile_id is None or not tombstones:
        return False
    through = tombstones.get((item.space_id, decision.profile_id))
    if through is None or item.occurred_at > through:
        return False
    return erases(decision) is None


def forget_erased(decision: Decision, tombstones: Tombstones) -> Decision:
    """The decision, or, for an item that occurred at or before its subject's erase, a
    decision that keeps nothing of it (no item, no person, no refusal: no row but its
    idempotency key, no fan-out, no dead letter), marked ``erased``."""
    if not erased_before(decision, tombstones):
        return decision
    return replace(decision, item=None, profile_id=None, refusal=None, token=None, erased=True)
