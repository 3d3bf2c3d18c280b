"""The ingest use case, for the live loop and the replay alike: a prepared batch
de-duplicated, written, its refusals dead-lettered and its erases run.

A batch is prepared first (the :class:`~turnstream.service.ports.Preparer`: validated,
gated, turned into rows and fan-out messages, no store), then goes through the store in
three calls, in order (:meth:`IngestBatch.calls`): the key look-up (de-duplicated against
the keys already taken; what occurred at or before its person's erase is forgotten: its
key is written, nothing else), the write (through the idempotent raw tables: a batch the
store refuses is split by message until the refused messages are isolated, each becoming
a ``store_refused`` dead letter; what the store refused when the batch was first written
stays refused), and, when the batch erases someone, the erasure (the tombstone first,
then every row of the subject). The caller runs each call and decides what a failure
does: the live loop backs off and runs it again (``entrypoints/kafka/ingest_driver.py``), a replay
stops. What is left, :class:`Settled`, is what the caller sends and counts; past it, the
caller's commit point.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from turnstream.adapters.clickhouse.bisect import Refused
from turnstream.config import Settings
from turnstream.core.erasure import Subject, forget, forgotten, merge_tombstones, tombstones_left
from turnstream.core.identity import forget_handles
from turnstream.core.ingest import Decision, Source, dedupe, refused_by_store, refused_length
from turnstream.core.messages import dead_letter_for
from turnstream.core.rows import BatchRows, Block, Rows, as_dicts, rows_for
from turnstream.service.ports import (
    Erasures,
    Keys,
    Message,
    PreparedBatch,
    Preparer,
    RawTables,
)

__all__ = ["Ingest", "IngestBatch", "Settled", "ingest_batch", "rows_to_write"]

log = logging.getLogger(__name__)


@dataclass
class Settled:
    """A batch after the store: every message's final decision (some refused by the
    store), the fan-out messages to send for each, and the rows written per table."""

    decisions: list[Decision]
    sends: list[list[Message]]
    written: dict[str, int]
    #: Per message: whether its item (or part of it) is accepted, after the store.
    accepted: list[bool]

    def messages(self) -> Iterator[Message]:
        """The fan-out to send, in order: every message's but the duplicates'."""
        return (
            m
            for d, out in zip(self.decisions, self.sends, strict=True)
            if not d.duplicate
            for m in out
        )


class Ingest:
    """The ingest use case on its ports; one per consumer (or replay), since it keeps
    the erase tombstones, read at the first batch (and again after :meth:`reset`), then
    kept up to date by the erasures it runs."""

    def __init__(
        self,
        settings: Settings,
        dead_letters: str,
        prepare: Preparer,
        keys: Keys,
        raw: RawTables,
        erasures: Erasures,
    ) -> None:
        """``dead_letters``: the topic of the dead letters the store's refusals send."""
        self.settings = settings
        self.dead_letters = dead_letters
        self.preparer = prepare
        self.keys = keys
        self.raw = raw
        self.erasures = erasures
        self.tombstones: dict[Subject, datetime] | None = None

    def prepare(
        self, messages: list[Any], fanout_max_bytes: int, received_at: datetime | None = None
    ) -> PreparedBatch:
        """Stage one, no store: the batch validated and turned into rows and fan-out."""
        return self.preparer(messages, fanout_max_bytes, received_at)

    def batch(self, prepared: PreparedBatch) -> IngestBatch:
        """Stage two: the batch's way through the store (run :meth:`IngestBatch.calls`)."""
        return IngestBatch(self, prepared)

    def reset(self) -> None:
        """Another writer may have written meanwhile: read the high-water marks and the
        erase tombstones again."""
        self.raw.forget()
        self.keys.forget()
        self.tombstones = None


class IngestBatch:
    """One prepared batch through the store: run :meth:`calls` in order, each until it
    returns, then read :attr:`settled`. Each call is blocking and safe to run again
    after a failure (what landed is skipped)."""

    def __init__(self, ingest: Ingest, prepared: PreparedBatch) -> None:
        self.ingest = ingest
        self.prepared = prepared
        self.decisions: list[Decision] = []
        self.settled: Settled | None = None
        self.tombstones: dict[Subject, datetime] = {}

    def calls(self) -> Iterator[tuple[str, Callable[[], object]]]:
        """The store calls, named for the logs, in order; the erasure only when the
        batch erases someone (known once it is written)."""
        yield "key look-up", self.settle
        yield "write", self.write
        if self.erasing():
            yield "erasure", self.erase

    def run(self) -> Settled:
        """Run the calls here, in order (no retry: a failure is raised). Blocking."""
        for _, call in self.calls():
            call()
        assert self.settled is not None
        return self.settled

    def settle(self) -> None:
        """De-duplicate against the keys already taken (one look-up) and take the new
        ones; forget what occurred before its person's erase. What the store refused
        when the batch was first written is refused again, here, before any key is
        taken: its item's key stays free for a correction later in the batch."""
        ingest, prepared = self.ingest, self.prepared
        tombstones = ingest.tombstones
        if tombstones is None:
            tombstones = ingest.tombstones = ingest.erasures.load_tombstones()
        keys = ingest.keys
        # A replay decides as the first time (the dead letters of the batch's sources).
        earlier = ingest.raw.refused_before([d.source for d in prepared.judged])
        # Each item's key, and the digest of a correctable refusal's bytes (its own key).
        taken = keys.lookup(
            [
                *(d.dedup_key for d in prepared.judged),
                *(k for d in prepared.judged if d.correctable and (k := d.taken_key)),
            ]
        )
        # The bytes the store refused are in memory (few): asked of messages their length.
        refused = keys.refused()
        lengths = {refused_length(k) for k in refused}
        if refused:
            taken = {**refused, **taken}
        decisions = []
        for decision, facts, erasing in zip(
            prepared.judged, prepared.erasure_facts, prepared.erases, strict=True
        ):
            message = earlier.get(decision.source)
            if message is not None:  # refused the first time, neither a copy nor forgotten
                final = refused_by_store(decision, message)
            else:
                final = dedupe(decision, taken.get, lengths)
                # The prepared facts, not the item: a batch prepared in the child has none.
                if not final.duplicate and forgotten(facts, erasing, tombstones):
                    final = forget(final)
            key = final.taken_key  # none for a duplicate; a digest for a correctable refusal
            if key is not None:
                taken.setdefault(key, final.source)  # a second copy in the batch
                # Taken now, before the write: the next batch is settled before this one
                # is committed. A crash forgets it, and a redelivery from the same source
                # is never a duplicate of itself.
                keys.remember(key, final.source)
            decisions.append(final)
        self.decisions = decisions

    def write(self) -> None:
        """Write the settled batch; the messages the store refuses for good are
        isolated and become dead letters, their item's key given back for the digest
        of their bytes. Raises :class:`~turnstream.errors.StoreError` for a failure that
        is not a refusal."""
        ingest, prepared, decisions = self.ingest, self.prepared, self.decisions
        settings, received_at = ingest.settings, prepared.received_at
        sends = list(prepared.sends)
        final = list(decisions)
        accepted = list(prepared.accepted)
        at = {d.source: i for i, d in enumerate(decisions)}
        order = [d.source for d in decisions if not d.duplicate]

        def refuse(i: int, message: str) -> Rows:
            final[i] = refused_by_store(decisions[i], message)
            accepted[i] = False
            letter = dead_letter_for(final[i], received_at)
            sends[i] = [(ingest.dead_letters, letter, prepared.messages[i].key)]
            taken, refused = decisions[i].taken_key, final[i].taken_key
            if taken is not None and refused is not None and taken != refused:
                ingest.keys.drop(taken, final[i].source)  # left free for a correction
                ingest.keys.remember(refused, final[i].source)
            return rows_for(final[i], settings, received_at)

        rows = rows_to_write(prepared, decisions)
        # Forgotten (occurred before its person's erase): its key is written, nothing else.
        forgotten_rows = {
            d.source: rows_for(d, settings, received_at) for d in decisions if d.erased
        }
        if forgotten_rows:
            rows = _swap_rows(rows, forgotten_rows)
            for source in forgotten_rows:
                sends[at[source]] = []
                accepted[at[source]] = False
        # A replay decides as the first time: what the store refused stays refused (its
        # own rows are not offered again; its dead letter's are, in case they were cut).
        # Read again here: a write that failed after a refusal may have landed it.
        earlier = ingest.raw.refused_before(order)
        if earlier:
            swapped = {source: refuse(at[source], message) for source, message in earlier.items()}
            rows = _swap_rows(rows, swapped)

        def replace(refused: Refused) -> Rows:
            table = refused.table or "the store"
            return refuse(at[refused.source], f"{table} refused it: {refused.reason}")

        done = ingest.raw.write(rows, order, replace)
        if done.refused:
            log.warning(
                "%d of %d messages refused by the store, the rest written (%d writes)",
                len(done.refused),
                len(order),
                done.writes,
            )
        self.settled = Settled(final, sends, dict(done.written), accepted)

    def erasing(self) -> bool:
        """Whether the written batch erases someone: its erases still accepted after the
        store, not duplicates (read from the prepared facts: a batch prepared in the
        child has no items)."""
        prepared, settled = self.prepared, self.settled
        assert settled is not None, "write the batch first"
        if any(prepared.erases):  # most batches erase nobody: no walk over them
            self.tombstones = tombstones_left(
                (facts, erasing)
                for facts, erasing, d, ok in zip(
                    prepared.erasure_facts,
                    prepared.erases,
                    settled.decisions,
                    settled.accepted,
                    strict=True,
                )
                if ok and not d.duplicate
            )
        return bool(self.tombstones)

    def erase(self) -> None:
        """Every erase of the batch in one go (one statement per table): the tombstone
        first, so that a crash between the two leaves it and the redelivered batch
        erases again."""
        ingest = self.ingest
        ingest.erasures.record_tombstones(self.tombstones)
        erasures = ingest.erasures.erase(list(self.tombstones))
        # This process's hashed handles (the block route's, when the batch was prepared in
        # the child): the erased person's may be among them.
        forget_handles()
        if ingest.tombstones is not None:
            merge_tombstones(ingest.tombstones, self.tombstones)
        log.info(
            "erased %d subjects (%d rows)",
            len(erasures),
            sum(sum(e.deleted.values()) for e in erasures),
        )


def ingest_batch(
    ingest: Ingest,
    messages: list[Any],
    fanout_max_bytes: int,
    received_at: datetime | None = None,
) -> Settled:
    """Prepare a batch and run its store calls here, in order (no retry: a failure is
    raised). Blocking."""
    return ingest.batch(ingest.prepare(messages, fanout_max_bytes, received_at)).run()


def rows_to_write(prepared: PreparedBatch, decisions: list[Decision]) -> BatchRows:
    """The prepared rows of a batch but those of the messages settled as duplicates."""
    duplicates = {d.source for d in decisions if d.duplicate}
    if not duplicates:
        return prepared.rows
    out: BatchRows = {}
    sources = {(s.topic, s.partition, s.offset) for s in duplicates}  # as a Block names them
    for table, batch in prepared.rows.items():
        if isinstance(batch, Block):  # from the prepare process: its rows by a mask
            left = batch.without(sources)
            if left is not None:
                out[table] = left
        else:
            out[table] = [
                r
                for r in batch
                if Source(r["_topic"], r["_partition"], r["_offset"]) not in duplicates
            ]
    return out


def _swap_rows(rows: BatchRows, swapped: dict[Source, Rows]) -> BatchRows:
    """``rows`` with the rows of the ``swapped`` messages replaced by the ones given."""
    out: dict[str, list[dict[str, Any]]] = {
        table: [
            r
            for r in as_dicts(batch)
            if Source(r["_topic"], r["_partition"], r["_offset"]) not in swapped
        ]
        for table, batch in rows.items()
    }
    for replacement in swapped.values():
        for table, batch in replacement.items():
            out.setdefault(table, []).extend(batch)
    return out  # type: ignore[return-value]
