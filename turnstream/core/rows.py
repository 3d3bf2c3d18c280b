"""Decisions become raw-table rows. Pure: the ingest time is passed in.

Raw handles are never written: rows carry the profile id only, and dead letters keep
the reason, the field path and a digest of the bytes (the bytes themselves stay on the
dead-letter topic).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import defaultdict
from collections.abc import Collection, Iterable
from datetime import datetime
from itertools import compress
from operator import itemgetter
from typing import Any

from pydantic_core import to_json

from turnstream.config import Feature, Settings
from turnstream.core.constraints.sensitive import withheld
from turnstream.core.exposure_tokens import TokenCheck
from turnstream.core.ingest import Decision
from turnstream.core.messages import fields_serializer
from turnstream.core.object_types import types_for_space
from turnstream.core.tables import ENVELOPE, SOURCE
from turnstream.core.time_edges import key_kept_from
from turnstream.models import (
    EVIDENCED_VERDICTS,
    Command,
    Interaction,
    InteractionItem,
    Outcome,
    Turn,
    Verdict,
)
from turnstream.models.common import SPACE_ID_PATTERN, Envelope
from turnstream.models.items import ITEM_TYPES

__all__ = [
    "COLUMNS",
    "MS_TIMES",
    "BatchRows",
    "Block",
    "Row",
    "Rows",
    "Spans",
    "TableRows",
    "ValueRows",
    "add_row_values",
    "add_rows",
    "as_dicts",
    "ms_ticks",
    "named",
    "rows_for",
    "spans_of",
    "table_columns",
]

Rows = dict[str, list[dict[str, Any]]]
#: A row as a tuple of its table's values, in the order of :data:`COLUMNS`.
Row = tuple[Any, ...]
#: A batch's rows per table, a tuple per row (:func:`add_row_values`).
ValueRows = defaultdict[str, list[Row]]
#: Each source (topic, partition)'s lowest and highest offset in some rows.
Spans = dict[tuple[str, int], tuple[int, int]]

_ENVELOPE = [c.name for c in ENVELOPE]
_SOURCE = [c.name for c in SOURCE]

#: Column order of each raw table, as the sink inserts them.
COLUMNS: dict[str, list[str]] = {
    "turns": [
        *_ENVELOPE,
        "turn_id",
        "agent",
        "build",
        "contract_version",
        "constraints_version",
        "experiment_id",
        "experiment_arm",
        "guard_acted",
        "guard_budget_exceeded",
        "internal_text_found",
        "interactions",
        "interactions_refused",
        "claims",
        "constraints",
        "language",
        *_SOURCE,
    ],
    "interactions": [
        *_ENVELOPE,
        "for",
        "turn_id",
        "item_index",
        "kind",
        "exposure_id",
        "list_id",
        "ref",
        "attr",
        "payload",
        *_SOURCE,
    ],
    "turn_claims": [
        "space_id",
        "source",
        "agent",
        "turn_id",
        "claim_index",
        "contract_version",
        "category",
        "class",
        "nature",
        "role",
        "verdict",
        "action",
        "evidenced",
        "value",
        "evidence",
        "occurred_at",
        "language",
        *_SOURCE,
    ],
    "turn_constraints": [
        "space_id",
        "source",
        "agent",
        "turn_id",
        "call_index",
        "tool",
        "sent",
        "results_checked",
        "violations",
        "unverifiable",
        "relaxed",
        "occurred_at",
        *_SOURCE,
    ],
    "outcomes": [
        *_ENVELOPE,
        "outcome",
        "ref",
        "order_id",
        "exposure_token",
        "exposure_id",
        "exposure_pos",
        "token_status",
        "attrs",
        "reason",
        "for",
        *_SOURCE,
    ],
    "commands": [*_ENVELOPE, "command", "inference_id", "replacement", *_SOURCE],
    # The words of a value stated on a sensitive field, apart (migration 29).
    "stated_sensitive": [
        "id",
        "space_id",
        "profile_id",
        "for",
        "attr",
        "value",
        "occurred_at",
        *_SOURCE,
    ],
    "idempotency_keys": ["dedup_key", "space_id", "kept_from", *_SOURCE],
    "dead_letters": [
        "reason",
        "field_path",
        "message",
        "item_type",
        "space_id",
        "source",
        "idempotency_key",
        "raw_sha256",
        "raw_bytes",
        *_SOURCE,
    ],
}


#: The columns that are ``DateTime64(3, 'UTC')`` in every raw table that has them
#: (tests/integration/clickhouse/test_insert_rows.py checks the schema).
MS_TIMES = frozenset({"occurred_at", "ingested_at", "kept_from"})


def ms_ticks(times: list[datetime | int]) -> list[int]:
    """Each (aware) time as clickhouse-connect writes a ``DateTime64(3)`` value: whole
    milliseconds since the epoch, by its own formula (``DateTime64._datetime64_ticks``,
    so the same bytes), each distinct time converted once.

    The distinct times by ``set`` and each value looked up by ``map`` (C): a batch has one
    ``ingested_at`` and an item's rows share its ``occurred_at``, so a look-up and an
    append per value in Python were most of it (0.22 s of cProfile per 20,000 items).
    A value already in ticks (an ``int``: a :class:`Block`'s row, as dicts) stays."""
    ticks = {
        value: value
        if isinstance(value, int)
        else ((math.floor(value.timestamp()) * 1_000_000 + value.microsecond) * 1000) // 1_000_000
        for value in set(times)
    }
    return list(map(ticks.__getitem__, times))


def _spans(topics: Iterable[str], partitions: Iterable[int], offsets: Iterable[int]) -> Spans:
    """The spans of rows given by their source columns (see :func:`spans_of`).

    Each source's offsets picked out by ``compress`` and their ``min`` and ``max``, all in
    C: a batch holds a few topics and partitions. Sorting ``((topic, partition), offset)``
    pairs took ~490 ns a row; this, ~135 (10,000 rows on four partitions)."""
    topics, partitions, offsets = list(topics), list(partitions), list(offsets)
    if not len(topics) == len(partitions) == len(offsets):
        raise ValueError("the source columns differ in length")
    spans: Spans = {}
    names = set(topics)
    for topic in sorted(names):
        if len(names) == 1:
            ps, os = partitions, offsets
        else:
            mask = list(map(topic.__eq__, topics))
            ps, os = list(compress(partitions, mask)), list(compress(offsets, mask))
        numbers = set(ps)
        for partition in sorted(numbers):
            of = os if len(numbers) == 1 else list(compress(os, map(partition.__eq__, ps)))
            spans[(topic, partition)] = (min(of), max(of))
    return spans


def spans_of(rows: list[dict[str, Any]]) -> Spans:
    """Each source (topic, partition)'s lowest and highest offset in ``rows``: in C, not
    min/max per row in Python (0.19 s of cProfile per 20,000 items)."""
    return _spans(
        map(itemgetter("_topic"), rows),
        map(itemgetter("_partition"), rows),
        map(itemgetter("_offset"), rows),
    )


def table_columns(table: str, rows: list[dict[str, Any]]) -> list[list[Any]]:
    """``rows`` of ``table`` column by column, in the order of :data:`COLUMNS`, the times
    of :data:`MS_TIMES` as milliseconds since the epoch (:func:`ms_ticks`): what the
    store inserts, but ``_insert``.

    Each column is read by ``map(itemgetter)`` (C)."""
    columns: list[list[Any]] = []
    for name in COLUMNS[table]:
        column = list(map(itemgetter(name), rows))
        columns.append(ms_ticks(column) if name in MS_TIMES else column)
    return columns


#: Where each table's source columns are in :data:`COLUMNS` (topic, partition, offset).
_SOURCE_AT = {
    table: (names.index("_topic"), names.index("_partition"), names.index("_offset"))
    for table, names in COLUMNS.items()
}


#: Where each table's times of :data:`MS_TIMES` are in :data:`COLUMNS`.
_TIMES_AT = {
    table: [at for at, name in enumerate(names) if name in MS_TIMES]
    for table, names in COLUMNS.items()
}


class Block:
    """One table's rows as the store inserts them: :func:`table_columns`, and their
    :data:`Spans`. Built in the prepare process, whose hand-back it is: unpickling
    columns costs the parent less than a dict per row, and the store thread inserts
    them as they are (docs/performance.md, issue 14 round eight). Never empty."""

    __slots__ = ("columns", "spans", "table")

    def __init__(self, table: str, columns: list[list[Any]], spans: Spans) -> None:
        self.table = table
        self.columns = columns
        self.spans = spans

    @classmethod
    def of(cls, table: str, rows: list[dict[str, Any]]) -> Block:
        """``rows`` (not empty) of ``table`` as a block."""
        return cls(table, table_columns(table, rows), spans_of(rows))

    @classmethod
    def of_values(cls, table: str, rows: list[Row]) -> Block:
        """``rows`` (not empty) of ``table``, a tuple per row (:func:`add_row_values`), as
        a block: the same columns and spans as :meth:`of` on those rows as dicts, the
        columns turned by ``zip`` (C) instead of read by name from each row."""
        columns = [list(column) for column in zip(*rows, strict=True)]
        if len(columns) != len(COLUMNS[table]):
            raise ValueError(f"{table}: {len(columns)} values a row, not {len(COLUMNS[table])}")
        for at in _TIMES_AT[table]:
            columns[at] = ms_ticks(columns[at])
        t, p, o = _SOURCE_AT[table]
        return cls(table, columns, _spans(columns[t], columns[p], columns[o]))

    def __reduce__(self) -> tuple[type[Block], tuple[str, list[list[Any]], Spans]]:
        return (Block, (self.table, self.columns, self.spans))

    def __len__(self) -> int:
        return len(self.columns[0])

    def joined(self, after: Block) -> Block:
        """This block's rows, then ``after``'s (the same table)."""
        spans = dict(self.spans)
        for tp, (lo, hi) in after.spans.items():
            had = spans.get(tp)
            spans[tp] = (lo, hi) if had is None else (min(had[0], lo), max(had[1], hi))
        columns = [a + b for a, b in zip(self.columns, after.columns, strict=True)]
        return Block(self.table, columns, spans)

    def _sources(self) -> Iterable[tuple[str, int, int]]:
        t, p, o = _SOURCE_AT[self.table]
        return zip(self.columns[t], self.columns[p], self.columns[o], strict=True)

    def without(self, sources: Collection[tuple[str, int, int]]) -> Block | None:
        """The block but the rows from ``sources`` (topic, partition, offset); None when
        none is left."""
        keep = [source not in sources for source in self._sources()]
        if all(keep):
            return self
        if not any(keep):
            return None
        columns = [list(compress(column, keep)) for column in self.columns]
        t, p, o = _SOURCE_AT[self.table]
        return Block(self.table, columns, _spans(columns[t], columns[p], columns[o]))

    def dicts(self) -> list[dict[str, Any]]:
        """The rows, a dict per row (times in ticks, which :func:`ms_ticks` keeps)."""
        names = COLUMNS[self.table]
        return [dict(zip(names, row, strict=True)) for row in zip(*self.columns, strict=True)]


#: A table's rows: a dict per row, or a :class:`Block`.
TableRows = list[dict[str, Any]] | Block
#: A batch's rows per table, in either form.
BatchRows = dict[str, TableRows]


def as_dicts(rows: TableRows) -> list[dict[str, Any]]:
    """A table's rows, a dict per row, whatever their form."""
    return rows.dicts() if isinstance(rows, Block) else rows


def _json(value: Any) -> str:
    """Compact JSON, by pydantic-core's serializer (keys in the producer's order): 1.5 µs
    against 9 for ``json.dumps(sort_keys=True)`` on a claim's evidence here."""
    return to_json(value).decode()


def _envelope(item: Envelope, profile_id: str) -> Row:
    """The envelope's columns (:data:`~turnstream.core.tables.ENVELOPE`), in order."""
    return (
        item.space_id,
        profile_id,
        item.source,
        item.conversation_id or "",
        item.session_id or item.conversation_id or "",
        item.idempotency_key,
        item.occurred_at,
    )


#: (id of the settings, space) -> (the settings, the space's sensitive names): a stated
#: item asks for every message; resolving the space's types each time (a getcwd for a
#: relative path) added ~6 µs per item of ~15; cached, add_rows costs 13.75 µs per item
#: against main's 13.46 (medians of 6 alternating runs, 15,000 items, 2 of 3 stated,
#: load 15 to 23). The settings are held so that their id is not reused while cached.
_SENSITIVE: dict[tuple[int, str], tuple[Settings, frozenset[str]]] = {}


def _sensitive_names(settings: Settings, space_id: str) -> frozenset[str]:
    """The sensitive types and ``type.field`` names of the space (its types document and
    ``[signals] sensitive``)."""
    key = (id(settings), space_id)
    hit = _SENSITIVE.get(key)
    if hit is not None and hit[0] is settings:
        return hit[1]
    types = types_for_space(settings.space(space_id))
    names = settings.sensitive_names() | (types.sensitive_names() if types else frozenset())
    if len(_SENSITIVE) >= 64:
        _SENSITIVE.clear()
    _SENSITIVE[key] = (settings, names)
    return names


def _is_sensitive(names: frozenset[str], attr: str) -> bool:
    """Whether a ``type.field`` is sensitive, given the space's sensitive names."""
    return attr in names or attr.split(".", 1)[0] in names


def _apart(
    rows: ValueRows,
    envelope: Row,
    source: Row,
    row_id: str,
    for_: str,
    payload: dict[str, Any],
    names: frozenset[str],
) -> str | None:
    """The payload without the words of a sensitive stated value (``None``: nothing
    sensitive), the words written apart to ``stated_sensitive``."""
    found = withheld(payload, lambda attr: _is_sensitive(names, attr))
    if found is None:
        return None
    kept, words = found
    space_id, profile_id, *_, occurred_at = envelope
    rows["stated_sensitive"].append(
        (row_id, space_id, profile_id, for_, payload["attr"], words, occurred_at, *source)
    )
    return _json(kept)


def _interaction_row(
    rows: ValueRows,
    envelope: Row,
    source: Row,
    interaction: Interaction,
    for_: str,
    turn_id: str,
    index: int,
    settings: Settings,
) -> Row:
    fields = interaction.__dict__  # field_of: a kind's missing fields read as a default
    kind = interaction.kind
    attr = fields.get("attr", "")
    payload = None
    if kind in _STATED:
        names = _sensitive_names(settings, envelope[0])
        if _is_sensitive(names, attr):
            row_id = f"{envelope[5]}#{index}"
            dumped = interaction.model_dump(mode="json", exclude={"for_"})
            payload = _apart(rows, envelope, source, row_id, for_, dumped, names)
    return (
        *envelope,
        for_,
        turn_id,
        index,
        kind,
        fields.get("exposure_id") or "",
        fields.get("list_id", ""),
        fields.get("ref", ""),
        attr,
        # The bytes of ``model_dump_json(exclude={"for_"})``, by the kind's own serializer
        # (``fields_serializer``): without pydantic's Python wrapper and the exclude set
        # converted on every call.
        payload or fields_serializer(type(interaction), _NOT_FOR).to_json(fields).decode(),
        *source,
    )


#: What an interaction's payload leaves out: whose signal it is has its own column.
_NOT_FOR = frozenset({"for_"})
#: The kinds that state a value: a sensitive one is kept apart.
_STATED = frozenset({"attribute", "preference"})


def _clean(text: str) -> str:
    """Text that encodes as UTF-8 (JSON may carry lone surrogates, which do not)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _header(raw: bytes) -> dict[str, str]:
    """Best-effort type, space, source and key of an invalid item, for triage. A type
    or a space only when it is one (a handle sent in ``type`` was written to the
    ``dead_letters`` table as the item's type); the source and the key as an accepted
    item's rows keep them."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    header = {
        field: value[:256]
        for field in ("source", "idempotency_key")
        if isinstance(value := data.get(field), str)
    }
    if (kind := data.get("type")) in ITEM_TYPES:
        header["type"] = kind
    if isinstance(space := data.get("space_id"), str) and _SPACE_ID.fullmatch(space):
        header["space_id"] = space
    return header


_SPACE_ID = re.compile(SPACE_ID_PATTERN)


def rows_for(decision: Decision, settings: Settings, ingested_at: datetime) -> Rows:
    """The raw-table rows one decision writes (none for a duplicate; of keys, the one it
    takes: :attr:`~turnstream.core.ingest.Decision.taken_key`)."""
    rows: Rows = defaultdict(list)
    add_rows(rows, decision, settings, ingested_at)
    return rows


def add_rows(
    rows: defaultdict[str, list[dict[str, Any]]],
    decision: Decision,
    settings: Settings,
    ingested_at: datetime,
) -> None:
    """Append the raw-table rows one decision writes to ``rows`` (a batch's, in the
    order of its messages), a dict per row: :func:`add_row_values`, each row named by
    :data:`COLUMNS`."""
    values: ValueRows = defaultdict(list)
    add_row_values(values, decision, settings, ingested_at)
    for table, batch in values.items():
        rows[table].extend(named(table, batch))


def named(table: str, rows: list[Row]) -> list[dict[str, Any]]:
    """``rows`` of ``table`` (a tuple per row, :func:`add_row_values`), a dict per row."""
    names = COLUMNS[table]
    return [dict(zip(names, row, strict=True)) for row in rows]


def add_row_values(
    rows: ValueRows, decision: Decision, settings: Settings, ingested_at: datetime
) -> None:
    """Append the raw-table rows one decision writes to ``rows`` (a batch's, in the
    order of its messages), each row a tuple of its table's values in the order of
    :data:`COLUMNS` (times as ``datetime``): what :func:`Block.of_values` turns into
    columns. A tuple in column order, not a dict per row read back column by column:
    rows and blocks cost 0.55 of what they did (docs/performance.md, issue 35)."""
    if decision.duplicate:
        return
    src = decision.source
    source = (ingested_at, src.topic, src.partition, src.offset)
    item = decision.item
    taken = decision.taken_key
    if taken is not None:
        # An accepted item's key outlives the window its date is accepted in.
        kept_from = key_kept_from(item.occurred_at if item else None, ingested_at)
        rows["idempotency_keys"].append((taken, item.space_id if item else "", kept_from, *source))
    if decision.refusal is not None:
        header = (
            _header(decision.raw)
            if item is None
            else {
                "type": item.type,
                "space_id": item.space_id,
                "source": item.source,
                "idempotency_key": item.idempotency_key,
            }
        )
        rows["dead_letters"].append(
            (
                decision.refusal.reason.value,
                _clean(decision.refusal.field_path[:512]),
                _clean(decision.refusal.message[:2048]),
                _clean(header.get("type", "")),
                _clean(header.get("space_id", "")),
                _clean(header.get("source", "")),
                _clean(header.get("idempotency_key", "")),
                hashlib.sha256(decision.raw).hexdigest(),
                len(decision.raw),
                *source,
            )
        )
    if item is None or decision.profile_id is None:
        return
    envelope = _envelope(item, decision.profile_id)
    if isinstance(item, InteractionItem):
        rows["interactions"].append(
            _interaction_row(rows, envelope, source, item.interaction, item.for_, "", 0, settings)
        )
    elif isinstance(item, Turn):
        _turn_rows(rows, envelope, source, item, decision, settings)
    elif isinstance(item, Outcome):
        token = decision.token
        if token is None:  # a decision not made by ``judge``: its token was never verified
            token = TokenCheck("absent" if item.exposure_token is None else "invalid")
        rows["outcomes"].append(
            (
                *envelope,
                item.outcome,
                item.ref,
                item.order_id,
                _clean(item.exposure_token or ""),
                # Filled only from a token the space's keys verify (core/exposure_tokens).
                token.exposure_id,
                token.pos,
                token.status,
                {k: str(v) for k, v in item.attrs.items()},
                item.reason or "",
                item.for_ or "self",
                *source,
            )
        )
    elif isinstance(item, Command):
        # By alias: the stated view reads the correction's bucket from ``for``.
        replacement = item.replacement.model_dump_json(by_alias=True) if item.replacement else ""
        if item.replacement is not None:
            dumped = item.replacement.model_dump(mode="json", by_alias=True)
            bucket = dumped.get("for") or "self"
            names = _sensitive_names(settings, item.space_id)
            replacement = (
                _apart(rows, envelope, source, item.idempotency_key, bucket, dumped, names)
                or replacement
            )
        rows["commands"].append(
            (*envelope, item.command, item.inference_id or "", replacement, *source)
        )


#: Each verdict's value, looked up by the member: ``.value`` and ``Verdict.x`` go through
#: the enum's descriptor (~0.4 µs under cProfile, once per claim).
_VERDICT_VALUE = {verdict: verdict.value for verdict in Verdict}
_INTERNAL_TEXT = Verdict.internal_text_found


def _turn_rows(
    rows: ValueRows,
    envelope: Row,
    source: Row,
    turn: Turn,
    decision: Decision,
    settings: Settings,
) -> None:
    keep = decision.keep_interactions
    experiment = turn.experiment
    contract = turn.contract_version or ""
    language = turn.language or ""
    claims = turn.claims
    interactions = turn.interactions
    rows["turns"].append(
        (
            *envelope,
            turn.turn_id,
            turn.agent,
            turn.build or "",
            contract,
            turn.constraints_version or "",
            experiment.id if experiment else "",
            experiment.arm if experiment else "",
            turn.guard_acted,
            turn.guard_budget_exceeded,
            sum(c.verdict is _INTERNAL_TEXT for c in claims),
            len(interactions) if keep else 0,
            0 if keep else len(interactions),
            len(claims),
            len(turn.constraints),
            language,
            *source,
        )
    )
    if keep and interactions:
        add = rows["interactions"].append
        for i, interaction in enumerate(interactions):
            add(
                _interaction_row(
                    rows,
                    envelope,
                    source,
                    interaction,
                    interaction.for_ or "self",
                    turn.turn_id,
                    i,
                    settings,
                )
            )
    common = (turn.space_id, turn.source, turn.agent, turn.turn_id)
    occurred_at = turn.occurred_at
    if claims:
        space = settings.space(turn.space_id)
        if space is not None and space.has(Feature.claims):
            add = rows["turn_claims"].append
            for i, claim in enumerate(claims):
                verdict = claim.verdict
                add(
                    (
                        *common,
                        i,
                        contract,
                        claim.category,
                        claim.class_ or "",
                        claim.nature,
                        claim.role or "",
                        _VERDICT_VALUE[verdict],
                        claim.action,
                        verdict in EVIDENCED_VERDICTS,
                        claim.value or "",
                        _json(claim.evidence) if claim.evidence else "",
                        occurred_at,
                        language,
                        *source,
                    )
                )
    if turn.constraints:
        add = rows["turn_constraints"].append
        for i, call in enumerate(turn.constraints):
            add(
                (
                    *common,
                    i,
                    call.tool,
                    call.sent,
                    call.results_checked,
                    call.violations,
                    call.unverifiable,
                    call.relaxed,
                    occurred_at,
                    *source,
                )
            )
