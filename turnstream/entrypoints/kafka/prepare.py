"""The ingest driver's first stage: a fetched batch validated, gated and turned into rows
and fan-out messages, as if none of it were a duplicate. No store: it runs beside the
store thread, on the prepare thread or in the prepare process
(:mod:`turnstream.entrypoints.kafka.prepare_process`)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.erasure import ErasureFacts, erases, facts_of
from turnstream.core.identity import forget_handles
from turnstream.core.ingest import Decision, Gate, Source, judge, too_large_to_fan_out
from turnstream.core.liveness import first_offsets
from turnstream.core.messages import accepted_for, dead_letter_for
from turnstream.core.rows import BatchRows, Block, ValueRows, add_row_values, named
from turnstream.core.signing import signature_in
from turnstream.models import Command
from turnstream.service.ports import Message

__all__ = ["Prepared", "prepare_batch", "signatures_of"]


def signatures_of(messages: list[Any]) -> list[bytes | None]:
    """Each record's signature header (records built without headers have none)."""
    return [signature_in(getattr(m, "headers", None)) for m in messages]


@dataclass
class Prepared:
    """A fetched batch, validated and turned into rows and fan-out messages as if none
    of it were a duplicate (de-duplication needs the store, in the next stage).

    Prepared in another process, its decisions carry no item and no token (what the
    process hands back is plain data: see :mod:`turnstream.entrypoints.kafka.prepare_process`):
    what the later stages need of the item is in ``accepted``, ``erasure_facts`` and ``erases``,
    and they read it there however the batch was prepared."""

    messages: list[Any]
    judged: list[Decision]
    #: Per table: a dict per row (prepared here) or a block of columns (in the process).
    rows: BatchRows
    #: Per message: (topic, value, key) of each fan-out message it sends.
    sends: list[list[Message]]
    #: Per message: whether its item (or part of it) is accepted.
    accepted: list[bool]
    #: Per message: its accepted item's subject and ``occurred_at`` (what the erase
    #: tombstone rules read, ``core/erasure.py``), None when none is accepted.
    erasure_facts: list[ErasureFacts | None]
    #: Per message: whether it is an accepted ``erase`` command.
    erases: list[bool]
    #: When the driver took the batch (its rows' ``ingested_at``, its dead letters' time).
    received_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def stuck_at(self) -> dict[tuple[str, int], int]:
        """The batch's first offset per partition: where the loop waits while it fails."""
        return first_offsets((m.topic, m.partition, m.offset) for m in self.messages)


def prepare_batch(
    messages: list[Any],
    settings: Settings,
    names: TopicNames,
    fanout_max_bytes: int,
    received_at: datetime | None = None,
    signatures: list[bytes | None] | None = None,
    signed: bool = True,
    blocks: bool = False,
) -> Prepared:
    """Validate, gate and turn a batch of consumer records into rows and fan-out
    messages; an accepted message past ``fanout_max_bytes`` becomes a ``too_large``
    dead letter. ``received_at``: when the batch was taken (default: now; the chunks of
    one batch, prepared apart, share the batch's); ``signatures``: each record's
    ``turnstream-sig`` header (default: read from the records' headers); ``signed``: whether
    records must carry their space's signature (a replay's need not: ``core/ingest.Gate``);
    ``blocks``: each table's rows as a :class:`~turnstream.core.rows.Block` of columns (what
    the store inserts) rather than a dict per row. Blocking; no store access."""
    # Each step over the whole batch before the next: interleaved per message, the
    # same calls took 18% more CPU (190 against 160 µs per item, the same process,
    # alternating, on mixed_items; the validator's and the serializer's code stays
    # in the CPU's caches this way).
    gate = Gate(settings, signed)  # each space's settings read once for the batch
    if received_at is None:
        received_at = datetime.now(UTC)
    # The batch's received time judges every occurred_at's edges (core/time_edges.py).
    if signatures is None:
        signatures = signatures_of(messages)
    judged = [
        judge(
            m.value or b"",
            Source(m.topic, m.partition, m.offset),
            settings,
            gate,
            signature=sig,
            now=received_at,
        )
        for m, sig in zip(messages, signatures, strict=True)
    ]
    sends: list[list[Message]] = []
    for i, (message, decision) in enumerate(zip(messages, judged, strict=True)):
        out: list[Message] = []
        if decision.item is not None and decision.profile_id is not None:
            accepted = accepted_for(decision)
            key = decision.profile_id.encode()
            size = len(accepted) + len(key)
            if size > fanout_max_bytes:
                decision = judged[i] = too_large_to_fan_out(decision, size, fanout_max_bytes)
            else:
                out.append((names.accepted, accepted, key))
        if decision.refusal is not None:
            letter = dead_letter_for(decision, received_at)
            out.insert(0, (names.dead_letters, letter, message.key))
        sends.append(out)
    values: ValueRows = defaultdict(list)
    for decision in judged:
        add_row_values(values, decision, settings, received_at)
    rows: BatchRows
    if blocks:
        rows = {table: Block.of_values(table, batch) for table, batch in values.items()}
    else:
        rows = {table: named(table, batch) for table, batch in values.items()}
    accepted_items = [d.item is not None for d in judged]
    facts = [facts_of(d) for d in judged]
    # Only a command can erase: the rule is not called for the other items.
    erasing = [isinstance(d.item, Command) and erases(d) is not None for d in judged]
    if any(erasing):
        forget_handles()  # the erased person's handle was just hashed: not kept in memory
    return Prepared(messages, judged, rows, sends, accepted_items, facts, erasing, received_at)
