"""The derivation store: derivations become rows of exposure_items, inferences and
signal_state, and a person's saved state is read back.

These tables are ReplacingMergeTree by identity with a version, so writing a derivation
twice (a replayed batch, a trigger fired again) leaves one current row each.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from turnstream.core.derivation.engine import Derivation
from turnstream.core.derivation.state import ProfileState
from turnstream.core.derivation.window import evidence_from
from turnstream.sinks.erase_tombstones import load_tombstones, record_tombstones
from turnstream.sinks.erasure import erase_subjects
from turnstream.sinks.store import Store

__all__ = ["SIGNAL_COLUMNS", "DerivationSink", "load_state", "signal_rows", "write_derivations"]

SIGNAL_COLUMNS: dict[str, list[str]] = {
    "exposure_items": [
        "space_id", "profile_id", "for", "exposure_id", "list_id", "page", "pos", "ref",
        "weight", "method", "delivered_at", "version",
    ],
    "inferences": [
        "id", "space_id", "profile_id", "for", "kind", "attr", "value", "polarity", "weight",
        "confidence", "effective_exposure", "weighted_signal", "events", "sessions", "lift",
        "exposures", "origin_events", "purposes", "applies", "status", "created_at",
        "updated_at", "version",
    ],
    "signal_state": ["profile_id", "space_id", "state", "version", "evidence_from"],
}  # fmt: skip


def signal_rows(derivations: Iterable[Derivation], version: int) -> dict[str, list[list[Any]]]:
    """The rows of a set of derivations, all stamped with ``version``."""
    rows: dict[str, list[list[Any]]] = {t: [] for t in SIGNAL_COLUMNS}
    for d in derivations:
        for e in d.exposures:
            rows["exposure_items"].append(
                [
                    d.space_id, d.profile_id, e.for_, e.exposure_id, e.list_id, e.page, e.pos,
                    e.ref, e.weight, e.method, e.delivered_at, version,
                ]
            )  # fmt: skip
        for i in d.inferences:
            ev = i.evidence
            rows["inferences"].append(
                [
                    i.id, i.space_id, i.profile_id, i.for_, i.kind, i.attr, i.value,
                    i.polarity or "", i.weight, i.confidence, ev.effective_exposure,
                    ev.weighted_signal, ev.events, ev.sessions, ev.lift, ev.exposures,
                    list(i.origin_events), list(i.purposes), i.applies, i.status,
                    i.created_at, i.updated_at, version,
                ]
            )  # fmt: skip
        state = json.dumps(d.state.to_dict(), separators=(",", ":"), sort_keys=True)
        rows["signal_state"].append(
            [d.profile_id, d.space_id, state, version, evidence_from(d.state)]
        )
    return rows


def write_derivations(store: Store, derivations: list[Derivation]) -> dict[str, int]:
    """Write derivations (blocking); returns rows per table. An erased person's derived
    rows are deleted instead, their erase tombstone kept (the ingest driver wrote it
    already; again here, so the engine's own outlives a restart whatever wrote first)."""
    erased = [(d.space_id, d.profile_id) for d in derivations if d.erased]
    if erased:
        record_tombstones(
            store,
            {
                (d.space_id, d.profile_id): d.state.erased_through
                for d in derivations
                if d.erased and d.state.erased_through is not None
            },
        )
        erase_subjects(store, erased, only=tuple(SIGNAL_COLUMNS))
    derivations = [d for d in derivations if not d.erased]
    rows = signal_rows(derivations, time.time_ns())
    for table, batch in rows.items():
        if batch:
            store.insert(table, batch, SIGNAL_COLUMNS[table])
    return {t: len(b) for t, b in rows.items() if b}


def load_state(store: Store, space_id: str, profile_id: str) -> ProfileState | None:
    """The latest saved derivation state of a person of a space, if any."""
    state = store.scalar(
        "SELECT argMax(state, version) FROM signal_state "
        "WHERE space_id = {space_id:String} AND profile_id = {profile_id:String}",
        {"space_id": space_id, "profile_id": profile_id},
    )
    return ProfileState.from_dict(json.loads(state)) if state else None


class DerivationSink:
    """The derivation store of one store: what the engine loads and what it writes.
    Blocking (on the store thread)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def load_state(self, space_id: str, profile_id: str) -> ProfileState | None:
        """The person's latest saved state, if any."""
        return load_state(self.store, space_id, profile_id)

    def load_tombstones(self) -> dict[tuple[str, str], datetime]:
        """Every erase tombstone: ``(space_id, profile_id)`` -> ``erased_through``."""
        return load_tombstones(self.store)

    def write(self, derivations: list[Derivation]) -> dict[str, int]:
        """Write derivations (an erased person's derived rows are deleted instead)."""
        return write_derivations(self.store, derivations)
