"""Re-derivation: people already derived, derived again with the priors the nightly job
just wrote, through the engine that holds their states (:meth:`SignalsEngine.rederive`)
and the sink that writes live derivations, so what changed is written as a live
derivation writes it (rows and state, at a newer version).

:func:`signals_engine` builds the engine the worker, a replay and a standalone job run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from turnstream.adapters.clickhouse.derivations import DerivationSink
from turnstream.adapters.clickhouse.priors import PriorsCache
from turnstream.config import Settings
from turnstream.core.derivation.engine import Derivation, PersonKey, SignalsEngine
from turnstream.core.erasure import covered, merge_tombstones
from turnstream.core.object_types import types_for_space

__all__ = ["Rederived", "rederive_people", "signals_engine"]


def signals_engine(
    settings: Settings,
    sink: DerivationSink,
    priors: PriorsCache,
    max_states: int | None = None,
) -> SignalsEngine:
    """The signals engine on ``sink``'s store: its states and tombstones read through
    ``sink``, its priors through ``priors``, each space's types document from
    ``settings`` (checked by ``check_spaces``)."""
    return SignalsEngine(
        settings.signals,
        priors_for=priors.get,
        field_priors_for=priors.fields,
        priors_changed=priors.forget,
        types_for=lambda space_id: types_for_space(settings.space(space_id)),
        load_states=sink.load_states,
        load_tombstones=sink.load_tombstones,
        max_states=max_states,
    )


@dataclass
class Rederived:
    """What re-deriving did: people derived again, those of them whose inferences
    changed, the inference rows written, and the CPU seconds of the thread."""

    people: int = 0
    changed_people: int = 0
    inferences: int = 0
    cpu_seconds: float = 0.0

    def add(self, other: Rederived) -> None:
        self.people += other.people
        self.changed_people += other.changed_people
        self.inferences += other.inferences
        self.cpu_seconds += other.cpu_seconds


def rederive_people(
    engine: SignalsEngine,
    sink: DerivationSink,
    people: Sequence[PersonKey],
    since: datetime | None = None,
) -> Rederived:
    """Derive ``people`` again with their spaces' latest priors (those whose newest event
    is at or after ``since``) and write what changed. Blocking; on the thread that runs
    the engine's derivations (the worker's store thread), so a state in memory is the
    one derived, and kept up to date."""
    started = time.thread_time()
    derivations, derived = engine.rederive(people, since)
    if derivations:
        try:
            sink.write(derivations)
        except BaseException:
            # Their states in memory say it was written: read them again from the store
            # at their next use, so a run of the job again derives and writes them.
            for d in derivations:
                engine.states.pop((d.space_id, d.profile_id), None)
            raise
        _erase_again(engine, sink, derivations)
    return Rederived(
        people=derived,
        changed_people=len(derivations),
        inferences=sum(len(d.inferences) for d in derivations),
        cpu_seconds=time.thread_time() - started,
    )


def _erase_again(engine: SignalsEngine, sink: DerivationSink, written: list[Derivation]) -> None:
    """Erase again those of ``written`` whom an erase reached after their states were
    read and before they were written (the job run by a scheduler in its own process on
    a ClickHouse server, or an ingest erasure the derivation driver has not folded yet):
    their tombstone, read again from the store (theirs alone: every tombstone is a
    read of the whole table a batch), covers their state's newest event; the engine
    learns it. Read after the write: an erasure records its tombstone before it
    deletes, so one missed here deleted what was written."""
    found = sink.tombstones_of([(d.space_id, d.profile_id) for d in written])
    if not found:
        return
    merge_tombstones(engine.tombstones, found)
    erased = []
    for d in written:
        newest = d.state.newest_occurred_at
        if newest is not None and covered(found, (d.space_id, d.profile_id), newest):
            engine.states.pop((d.space_id, d.profile_id), None)
            erased.append(replace(d, exposures=[], inferences=[], erased=True))
    if erased:
        sink.write(erased)
