"""The replay driver: a JSONL file through the same core, on event time, no broker.

It writes the same tables as the live path: raw rows through the idempotent sink (each
line's source is ``replay:<file name>``, partition 0, offset = line number), then the
derivations. Triggers fire on ``occurred_at``, but a line dated past the raw tables'
retention or too far ahead is refused as live refuses it, judged at the replay's start
(``core/time_edges.py``: the tables' TTL counts from the store's clock, whatever the
file's dates). Triggers fire on ``occurred_at``; at the end of the file the clock moves
past every due trigger, so everything in the file is derived. It applies the live
erase policy (:mod:`turnstream.core.erasure`): at an accepted ``erase``, what came before
it is written, then every row of the subject is erased, as the ingest driver erases
after writing the batch that carries the command, and leaves the same erase tombstone:
a later line of theirs that occurred at or before the erase is forgotten.
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
from turnstream.core.erasure import erasure_tombstones, forget_erased, merge_tombstones
from turnstream.core.ingest import Gate, Source, decide
from turnstream.core.messages import accepted_for
from turnstream.jsonl import read_lines
from turnstream.sinks.derivations import DerivationSink
from turnstream.sinks.erase_tombstones import load_tombstones, record_tombstones
from turnstream.sinks.erasure import erase_subjects
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import Store
from turnstream.sinks.writer import RawSink

__all__ = ["Replay", "ReplayReport"]

_BATCH = 2000


@dataclass
class ReplayReport:
    """What a replay did: lines, decisions, derivations, erasures, rows per table."""

    lines: int = 0
    accepted: int = 0
    dead_letters: int = 0
    duplicates: int = 0
    derivations: int = 0
    erased: int = 0
    #: Lines that occurred at or before their person's erase, and were forgotten.
    erased_before: int = 0
    rows: dict[str, int] = field(default_factory=dict)


class Replay:
    """Replays files into one store, with the parts the bootstrap built for it
    (:func:`turnstream.bootstrap.build_replay`). Blocking."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        sink: RawSink,
        derived: DerivationSink,
        engine: SignalsEngine,
    ) -> None:
        self.settings = settings
        self.store = store
        self.sink = sink
        self.derived = derived
        self.engine = engine

    def run(self, path: Path, on_line: Callable[[], None] | None = None) -> ReplayReport:
        """Replay ``path``: every line through the same core as live, on event time."""
        settings, store, sink, engine = self.settings, self.store, self.sink, self.engine
        report = ReplayReport()
        taken: dict[str, Source] = {}
        pending_rows: Rows = {}
        derivations: list[Derivation] = []
        topic = f"replay:{path.name}"

        def flush() -> None:
            for table, n in sink.write(pending_rows).items():
                report.rows[table] = report.rows.get(table, 0) + n
            pending_rows.clear()
            if derivations:
                self.derived.write(derivations)
                derivations.clear()

        # The replay's start judges every line's occurred_at edges, as the batch's received
        # time does live: the raw tables' TTL counts from the store's clock, not the file's.
        now = datetime.now(UTC)
        tombstones = load_tombstones(store)
        # Unsigned: a replay reads the items its operator hands it, not a topic that
        # producers write (the producers' signatures are checked there).
        gate = Gate(settings, signed=False)
        for number, raw in read_lines(path):
            report.lines += 1
            decision = decide(raw, Source(topic, 0, number), settings, taken.get, now, gate)
            decision = forget_erased(decision, tombstones)
            report.erased_before += decision.erased
            if decision.duplicate:
                report.duplicates += 1
            else:
                taken.setdefault(decision.dedup_key, decision.source)
            report.dead_letters += decision.refusal is not None
            for table, rows in rows_for(decision, settings, now).items():
                pending_rows.setdefault(table, []).extend(rows)
            erasing = erasure_tombstones([decision])
            if erasing:
                flush()
                record_tombstones(store, erasing)
                erase_subjects(store, list(erasing))
                merge_tombstones(tombstones, erasing)
                report.erased += 1
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
