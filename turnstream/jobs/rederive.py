"""After the nightly priors: a space's people derived again with the new priors.

Derivation runs when a person's session fires, so priors written by the job would only
reach each person at their next derivation. So once a space's priors are written, when
what derivation now reads for it (``priors_latest``, ``field_priors_latest``) differs
from what its people were last derived again with (``rederived``; none: the defaults),
every person with a saved state whose newest event is within ``jobs.rederive_days`` of
the as-of day is derived again, :data:`BATCH` people at a time, through a
:data:`Rederive`: the worker's own engine, each batch on its store thread, when the job
runs in the worker (a state in memory is newer than the store's), else an engine built
here as a replay builds it. What changed is written as a live derivation writes it (inference rows
and the state, at a newer version); the mark is written once every person is done, so a
run cut short does it all again, and a person already done changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from turnstream.adapters.clickhouse.derivations import DerivationSink
from turnstream.adapters.clickhouse.priors import PriorsCache, latest_field_priors, latest_priors
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import Settings
from turnstream.core.derivation.engine import PersonKey
from turnstream.service.rederive import Rederived, rederive_people, signals_engine

__all__ = [
    "BATCH",
    "DEFAULTS",
    "Rederive",
    "RederiveReport",
    "priors_hash",
    "rederive_here",
    "rederive_spaces",
]

log = logging.getLogger(__name__)

#: People derived again per call (one state read for all of them): in the worker one call
#: holds its store thread, ~1 to 3 s at 21 to 62 ms a person (docs/performance.md).
BATCH = 50

#: People per progress line in the log.
PROGRESS = 500

#: Derives a batch of people of one space again on the engine that holds their states,
#: skipping those whose newest event is before the datetime given (blocking).
Rederive = Callable[[Sequence[PersonKey], datetime | None], Rederived]


def rederive_here(store: Store, settings: Settings) -> Rederive:
    """A :data:`Rederive` on an engine of its own (no worker runs: no state is newer
    than the store's), built as a replay's; it keeps no state it reads."""
    sink = DerivationSink(store)
    engine = signals_engine(settings, sink, PriorsCache(store, ttl_seconds=float("inf")))
    return lambda people, since: rederive_people(engine, sink, people, since)


def priors_hash(priors: dict[tuple[str, str], float], fields: dict[str, Any]) -> str:
    """A hash of a space's priors and field priors as derivation reads them."""
    text = json.dumps(
        [sorted([*k, v] for k, v in priors.items()),
         sorted([k, repr(v)] for k, v in fields.items())],
        separators=(",", ":"),
    )  # fmt: skip
    return hashlib.sha256(text.encode()).hexdigest()[:32]


#: The hash of no priors at all: what derivation used before any were written.
DEFAULTS = priors_hash({}, {})


@dataclass
class RederiveReport:
    """What the re-derivation after the priors did: per space derived again, its people
    derived, those whose inferences changed, the inference rows written; and in all, the
    seconds and the CPU milliseconds per person."""

    spaces: dict[str, dict[str, int]] = field(default_factory=dict)
    totals: Rederived = field(default_factory=Rederived)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        t = self.totals
        return {
            "people": t.people,
            "changed_people": t.changed_people,
            "inferences": t.inferences,
            "seconds": round(self.seconds, 3),
            "cpu_ms_per_person": round(1000 * t.cpu_seconds / t.people, 2) if t.people else 0.0,
            "spaces": dict(self.spaces),
        }


def _people(store: Store, space_id: str) -> list[str]:
    return [
        pid
        for (pid,) in store.query(
            "SELECT DISTINCT profile_id FROM signal_state WHERE space_id = {space:String} "
            "ORDER BY profile_id",
            {"space": space_id},
        ).rows
    ]


def _marked(store: Store, space_id: str) -> str:
    rows = store.query(
        "SELECT priors FROM rederived FINAL WHERE space_id = {space:String}", {"space": space_id}
    ).rows
    return rows[0][0] if rows else DEFAULTS


def rederive_spaces(
    store: Store,
    spaces: Sequence[str],
    rederive: Rederive,
    as_of: date,
    days: int,
    batch: int = BATCH,
) -> RederiveReport:
    """Derive again the people of each of ``spaces`` whose priors changed since they were
    last derived again (see the module), their newest event within ``days`` before the
    as-of day (or on it); ``days`` 0: no one. Blocking."""
    report = RederiveReport()
    if days <= 0:
        return report
    started = time.monotonic()
    since = datetime.combine(as_of, datetime.min.time(), tzinfo=UTC) - timedelta(days=days)
    for space_id in spaces:
        now = priors_hash(latest_priors(store, space_id), latest_field_priors(store, space_id))
        if now == _marked(store, space_id):
            continue
        people = _people(store, space_id)
        done = Rederived()
        for start in range(0, len(people), batch):
            some = [(space_id, pid) for pid in people[start : start + batch]]
            done.add(rederive(some, since))
            read = start + len(some)
            if read // PROGRESS == start // PROGRESS and read < len(people):
                continue  # a line every PROGRESS people, and the last
            log.info(
                "rederive: space %s, %d/%d people read, %d derived, %d changed, %.1f s",
                space_id, read, len(people), done.people, done.changed_people,
                time.monotonic() - started,
            )  # fmt: skip
        store.insert(
            "rederived",
            [(space_id, now, done.people, done.inferences, datetime.now(UTC))],
            ["space_id", "priors", "people", "changed", "done_at"],
        )
        report.spaces[space_id] = {k: v for k, v in asdict(done).items() if k != "cpu_seconds"}
        report.totals.add(done)
    report.seconds = time.monotonic() - started
    return report
