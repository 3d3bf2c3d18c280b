"""The derivation store: derivations become rows of exposure_items, inferences and
signal_state, and a person's saved state is read back.

These tables are ReplacingMergeTree by identity with a version, so writing a derivation
twice (a replayed batch, a trigger fired again) leaves one current row each.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from turnstream.adapters.clickhouse.erase_tombstones import (
    load_tombstones,
    record_tombstones,
    tombstones_of,
)
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.derivation.engine import Derivation
from turnstream.core.derivation.state import ProfileState
from turnstream.core.derivation.window import evidence_from

__all__ = [
    "SIGNAL_COLUMNS",
    "STATES_QUERY",
    "DerivationSink",
    "load_state",
    "load_states",
    "signal_rows",
    "write_derivations",
]

#: The session's temporary table that holds the people of one state read.
_PEOPLE = "turnstream_state_probe"

#: The latest state of each staged person (``(space_id, profile_id)`` is the sorting key
#: of ``signal_state``, so each person is a seek; the tests read its ``EXPLAIN``).
STATES_QUERY = (
    "SELECT space_id, profile_id, argMax(state, version) FROM signal_state "
    f"WHERE (space_id, profile_id) IN (SELECT space_id, profile_id FROM {_PEOPLE}) "
    "GROUP BY space_id, profile_id"
)

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


def load_states(
    store: Store, people: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], ProfileState]:
    """The latest saved derivation state of each ``(space_id, profile_id)`` in ``people``
    that has one (blocking; one look-up for all of them).

    One query per firing, not per person: each query costs chDB ~4 to 6 ms of CPU
    whatever it reads (a point query on an empty table: 3.7 ms; ``SELECT 1``: 0.8 ms,
    chDB 4.4.0 / chdb-core 26.9.0), and a firing of the derivation bench's background
    meets ~170 people it has not seen yet: one query each took 27 of the worker's
    55 CPU-seconds. The people go in as data (a temporary table), never in the SQL text;
    ``(space_id, profile_id)`` is the table's sorting key, so ClickHouse seeks each one.
    """
    wanted = list(dict.fromkeys(people))
    if not wanted:
        return {}
    store.stage(_PEOPLE, [("space_id", "String"), ("profile_id", "String")], wanted)
    rows = store.query(STATES_QUERY).rows
    return {
        (space, profile): ProfileState.from_dict(json.loads(state))
        for space, profile, state in rows
        if state
    }


def load_state(store: Store, space_id: str, profile_id: str) -> ProfileState | None:
    """The latest saved derivation state of a person of a space, if any."""
    return load_states(store, [(space_id, profile_id)]).get((space_id, profile_id))


class DerivationSink:
    """The derivation store of one store: what the engine loads and what it writes.
    Blocking (on the store thread)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def load_states(self, people: Sequence[tuple[str, str]]) -> dict[tuple[str, str], ProfileState]:
        """The latest saved state of each of ``people`` that has one (one look-up)."""
        return load_states(self.store, people)

    def load_tombstones(self) -> dict[tuple[str, str], datetime]:
        """Every erase tombstone: ``(space_id, profile_id)`` -> ``erased_through``."""
        return load_tombstones(self.store)

    def tombstones_of(self, people: Sequence[tuple[str, str]]) -> dict[tuple[str, str], datetime]:
        """The erase tombstones of ``people`` alone (one look-up)."""
        return tombstones_of(self.store, people)

    def write(self, derivations: list[Derivation]) -> dict[str, int]:
        """Write derivations (an erased person's derived rows are deleted instead)."""
        return write_derivations(self.store, derivations)
