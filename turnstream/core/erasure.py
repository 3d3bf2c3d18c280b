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
    "ErasureFacts",
    "Subject",
    "Tombstones",
    "covered",
    "erased_before",
    "erases",
    "erasure_tombstones",
    "facts_of",
    "forget",
    "forget_erased",
    "forgotten",
    "merge_tombstones",
    "tombstones_left",
]

#: A person of a space: ``(space_id, profile_id)``.
Subject = tuple[str, str]
#: Erase tombstones: subject -> the latest erase's ``occurred_at`` (``erased_through``).
Tombstones = Mapping[Subject, datetime]
#: What the rules read of an accepted item: its subject and its ``occurred_at``. Plain
#: data, so that the prepare process hands it back instead of the item
#: (``entrypoints/kafka/prepare_process.py``).
ErasureFacts = tuple[Subject, datetime]


def erases(decision: Decision) -> Subject | None:
    """The subject a decision erases: an accepted, not duplicate, ``erase`` command's."""
    item = decision.item
    if decision.duplicate or not isinstance(item, Command) or item.command != "erase":
        return None
    if decision.profile_id is None:
        return None
    return (item.space_id, decision.profile_id)


def facts_of(decision: Decision) -> ErasureFacts | None:
    """The subject and time of a decision's accepted, not duplicate, item (else None)."""
    item = decision.item
    if decision.duplicate or item is None or decision.profile_id is None:
        return None
    return (item.space_id, decision.profile_id), item.occurred_at


def tombstones_left(
    items: Iterable[tuple[ErasureFacts | None, bool]],
) -> dict[Subject, datetime]:
    """The tombstones left by the erases among ``(facts, erasing)`` pairs, one per item:
    each subject, in their order, with the latest ``occurred_at`` of its erases."""
    out: dict[Subject, datetime] = {}
    for facts, erasing in items:
        if erasing and facts is not None:
            subject, at = facts
            out[subject] = max(out.get(subject, at), at)
    return out


def erasure_tombstones(decisions: Iterable[Decision]) -> dict[Subject, datetime]:
    """The tombstones the decisions' erases leave (:func:`tombstones_left`)."""
    return tombstones_left((facts_of(d), erases(d) is not None) for d in decisions)


def merge_tombstones(into: dict[Subject, datetime], new: Tombstones) -> None:
    """Add ``new`` to ``into`` (in place), keeping the later time of a subject in both."""
    for subject, at in new.items():
        known = into.get(subject)
        into[subject] = at if known is None else max(known, at)


def covered(tombstones: Tombstones, subject: Subject, at: datetime) -> bool:
    """Whether ``subject``'s erase covers what stems from events up to ``at``: at or
    before its ``erased_through`` (an item, a state by its newest event).
    ``SignalsEngine.rederive`` writes the same test in place: ``core.derivation`` may not
    import this module, which imports the ingest rules (an import cycle)."""
    through = tombstones.get(subject)
    return through is not None and at <= through


def forgotten(facts: ErasureFacts | None, erasing: bool, tombstones: Tombstones) -> bool:
    """Whether an accepted item (its ``facts``) occurred at or before its subject's erase
    (and so is to be forgotten). An ``erase`` command itself never is: erasing again is
    harmless."""
    if facts is None or erasing or not tombstones:
        return False
    return covered(tombstones, *facts)


def erased_before(decision: Decision, tombstones: Tombstones) -> bool:
    """:func:`forgotten`, for a decision that holds its item."""
    return forgotten(facts_of(decision), erases(decision) is not None, tombstones)


def forget(decision: Decision) -> Decision:
    """A decision that keeps nothing of its item (no item, no person, no refusal: no row
    but its idempotency key, no fan-out, no dead letter), marked ``erased``."""
    return replace(decision, item=None, profile_id=None, refusal=None, token=None, erased=True)


def forget_erased(decision: Decision, tombstones: Tombstones) -> Decision:
    """The decision, or, for an item that occurred at or before its subject's erase,
    the decision forgotten (:func:`forget`)."""
    return forget(decision) if erased_before(decision, tombstones) else decision
