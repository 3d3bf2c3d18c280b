"""The replay driver: a JSONL file through the same core, on event time, no broker.

It writes the same tables as the live path: raw rows through the idempotent sink (each
line's source is ``replay:<file name>``, partition 0, offset = line number), then the
signals. Triggers fire on ``occurred_at``; at the end of the file the clock moves past
every due trigger, so everything in the file is derived.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from turnstream.config import Settings
from turnstream.core.derivation import events_from_accepted
from turnstream.core.derivation.engine import Derivation, SignalsEngine
from turnstream.core.ingest import Source, decide
from turnstream.jobs.priors import PriorsCache
from turnstream.producer import read_lines
from turnstream.sinks.derivations import load_state, write_derivations
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import Store
from turnstream.sinks.writer import RawSink
from turnstream.streams.ingest_driver import accepted_for

__all__ = ["ReplayReport", "replay_file"]

_BATCH = 2000


@dataclass
class ReplayReport:
    lines: int = 0
    accepted: int = 0
    dead_letters: int = 0
    duplicates: int = 0
    derivations: int = 0
    rows: dict[str, int] = field(default_factory=dict)


def replay_file(
    settings: Settings,
    path: Path,
    store: Store,
    on_line: Callable[[], None] | None = None,
) -> ReplayReport:
    """Replay ``path`` into ``store`` (blocking)."""
    report = ReplayReport()
    sink = RawSink(store)
    priors = PriorsCache(store, ttl_seconds=float("inf"))
    engine = SignalsEngine(
        settings.signals,
        priors_for=priors.get,
        load_state=lambda space, profile: load_state(store, space, profile),
    )
    taken: dict[str, Source] = {}
    pending_rows: Rows = {}
    derivations: list[Derivation] = []
    topic = f"replay:{path.name}"

    def flush() -> None:
        for table, n in sink.write(pending_rows).items():
            report.rows[table] = report.rows.get(table, 0) + n
        pending_rows.clear()
        if derivations:
            write_derivations(store, derivations)
            derivations.clear()

    now = datetime.now(UTC)
    for number, raw in read_lines(path):
        report.lines += 1
        decision = decide(raw, Source(topic, 0, number), settings, taken.get)
        if decision.duplicate:
            report.duplicates += 1
        else:
            taken.setdefault(decision.dedup_key, decision.source)
        report.dead_letters += decision.refusal is not None
        for table, rows in rows_for(decision, settings, now).items():
            pending_rows.setdefault(table, []).extend(rows)
        if decision.item is not None:
            report.accepted += 1
            for event in events_from_accepted(json.loads(accepted_for(decision))):
                fired = engine.fire_due(event.occurred_at)
                report.derivations += len(fired)
                derivations.extend(fired)
                engine.offer(event, event.occurred_at)
        if sum(len(r) for r in pending_rows.values()) >= _BATCH:
            flush()
        if on_line is not None:
            on_line()
    fired = engine.fire_all()
    report.derivations += len(fired)
    derivations.extend(fired)
    flush()
    return report
