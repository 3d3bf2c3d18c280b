"""The replay driver: a JSONL file through the same use cases as live, on event time, no
broker.

Each batch of lines goes through the ingest use case (:mod:`turnstream.service.ingest`),
the very orchestration the live loop runs: each line's source is ``replay:<file name>``,
partition 0, offset = line number; the raw rows go through the idempotent sink, a batch
the store refuses is split until the refused lines are isolated and dead-lettered
(``store_refused``), the batch's erases run after it is written and leave their erase
tombstones; a batch also ends before a line that corrects an earlier one (its key, other
bytes), so that the store's refusal of the earlier one is known first, as live knows it.
Lines are unsigned (a replay reads the items its operator hands it, not a
topic that producers write), and a line dated past the raw tables' retention or too far
ahead is refused as live refuses it, judged at the replay's start (``core/time_edges.py``:
the tables' TTL counts from the store's clock, whatever the file's dates). Then the
batch's accepted messages are derived on event time (:mod:`turnstream.service.derive`):
triggers fire on ``occurred_at``, and at the end of the file the clock moves past every
due trigger, so everything in the file is derived.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from turnstream.adapters.jsonl import read_lines
from turnstream.adapters.kafka.topology import FANOUT_MAX_BYTES, TopicNames
from turnstream.config import Settings
from turnstream.core.derivation import events_from_accepted
from turnstream.core.derivation.engine import Derivation, SignalsEngine
from turnstream.core.derivation.first_fit import FirstFits
from turnstream.core.erasure import erases
from turnstream.core.ingest import first_correction
from turnstream.entrypoints.kafka.prepare import Prepared, prepare_batch
from turnstream.service.derive import DerivationWriter, derive_all, derive_on_event_time
from turnstream.service.ingest import Ingest
from turnstream.service.ports import Preparer

__all__ = ["BATCH_LINES", "Replay", "ReplayReport", "unsigned_preparer"]

#: Lines per batch through the ingest use case.
BATCH_LINES = 2000


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
    #: The new spaces fitted at the end (their field priors, the people derived again).
    first_fit: dict[str, Any] = field(default_factory=dict)


def unsigned_preparer(settings: Settings, names: TopicNames) -> Preparer:
    """The replay's prepare stage: on the calling thread, no signature required."""

    def prepare(
        messages: list[Any], fanout_max_bytes: int, received_at: datetime | None = None
    ) -> Prepared:
        return prepare_batch(messages, settings, names, fanout_max_bytes, received_at, signed=False)

    return prepare


class Replay:
    """Replays files into one store, with the parts the bootstrap built for it
    (:func:`turnstream.entrypoints.bootstrap.build_replay`). Blocking."""

    def __init__(
        self,
        ingest: Ingest,
        derived: DerivationWriter,
        engine: SignalsEngine,
        accepted_topic: str,
        first_fits: FirstFits | None = None,
        run_fit: Callable[[list[str]], dict[str, Any]] | None = None,
    ) -> None:
        """``accepted_topic``: the topic of the accepted messages among the fan-out the
        ingest use case hands back (derived here instead of sent). ``first_fits``: which
        new spaces to fit at the end of a file, as a live worker would have by then
        (``run_fit`` runs the priors job for them; none: no such fit)."""
        self.ingest = ingest
        self.derived = derived
        self.engine = engine
        self.accepted_topic = accepted_topic
        self.first_fits = first_fits
        self.run_fit = run_fit

    def run(self, path: Path, on_line: Callable[[], None] | None = None) -> ReplayReport:
        """Replay ``path``: every line through the same use cases as live, on event time."""
        report = ReplayReport()
        topic = f"replay:{path.name}"
        # The replay's start judges every line's occurred_at edges, as the batch's received
        # time does live: the raw tables' TTL counts from the store's clock, not the file's.
        now = datetime.now(UTC)
        lines = iter(read_lines(path))
        left: list[Any] = []  # records read, after an erase that ended the last batch
        while records := left + _records(topic, islice(lines, BATCH_LINES - len(left))):
            prepared = self.ingest.prepare(records, FANOUT_MAX_BYTES, now)
            # A batch ends at an erase, as the erase takes effect at its line: what came
            # before it is written and erased, what comes after meets its tombstone.
            cut = next((i + 1 for i, e in enumerate(prepared.erases) if e), len(records))
            # And before a correction of an earlier line: the store may refuse that one,
            # known once it is written, as live wrote it in an earlier batch.
            cut = min(cut, first_correction(prepared.judged) or cut)
            records, left = records[:cut], records[cut:]
            if left:
                prepared = self.ingest.prepare(records, FANOUT_MAX_BYTES, now)
            settled = self.ingest.batch(prepared).run()
            report.lines += len(records)
            for table, n in settled.written.items():
                report.rows[table] = report.rows.get(table, 0) + n
            for d, ok in zip(settled.decisions, settled.accepted, strict=True):
                report.duplicates += d.duplicate
                report.erased_before += d.erased
                report.dead_letters += d.refusal is not None
                report.accepted += ok and not d.duplicate
                report.erased += ok and erases(d) is not None
            events = [
                event
                for topic_, value, _ in settled.messages()
                if topic_ == self.accepted_topic
                for event in events_from_accepted(json.loads(value))
            ]
            self._saw(derive_on_event_time(self.engine, self.derived, events), report)
            if on_line is not None:
                for _ in records:
                    on_line()
        self._saw(derive_all(self.engine, self.derived), report)
        if self.first_fits is not None and self.run_fit is not None:
            due = self.first_fits.due()
            if due:
                fit = self.run_fit(due)
                report.first_fit = {
                    "spaces": due,
                    "field_priors": fit.get("field_priors", {}),
                    "rederived": fit.get("rederived", {}),
                }
        return report

    def _saw(self, derivations: list[Derivation], report: ReplayReport) -> None:
        report.derivations += len(derivations)
        if self.first_fits is not None:
            self.first_fits.took(derivations)


def _records(topic: str, lines: Iterable[tuple[int, bytes]]) -> list[Any]:
    """Consumer records of ``lines``: partition 0, the line number as the offset."""
    return [
        SimpleNamespace(topic=topic, partition=0, offset=number, value=raw, key=None)
        for number, raw in lines
    ]
