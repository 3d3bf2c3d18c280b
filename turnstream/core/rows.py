"""Decisions become raw-table rows. Pure: the ingest time is passed in.

Raw handles are never written: rows carry the profile id only, and dead letters keep
the reason, the field path and a digest of the bytes (the bytes themselves stay on the
dead-letter topic).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable
from datetime import datetime
from itertools import compress
from operator import itemgetter
from typing import Any

from pydantic_core import to_json

from turnstream.config import Feature, Settings
from turnstream.core.constraints.sensitive import withheld
from turnstream.core.exposure_tokens import TokenCheck
from turnstream.core.ingest import Decision
from turnstream.core.object_types import types_for_space
from turnstream.core.tables import ENVELOPE, SOURCE
from turnstream.models import (
    EVIDENCED_VERDICTS,
    Command,
    Interaction,
    InteractionItem,
    Outcome,
    Turn,
    Verdict,
    field_of,
)
from turnstream.models.common import Envelope

__all__ = [
    "COLUMNS",
    "MS_TIMES",
    "BatchRows",
    "Block",
    "Rows",
    "Spans",
    "TableRows",
    "add_rows",
    "as_dicts",
    "ms_ticks",
    "rows_for",
    "spans_of",
    "table_columns",
]

Rows = dict[str, list[dict[str, Any]]]
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
    "idempotency_keys": ["dedup_key", "space_id", *_SOURCE],
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
MS_TIMES = frozenset({"occurred_at", "ingested_at"})


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
    """The spans of rows given by their source columns (see :func:`spans_of`)."""
    pairs = sorted(zip(zip(topics, partitions, strict=True), offsets, strict=True))
    highest = dict(pairs)
    lowest = dict(reversed(pairs))
    return {tp: (lowest[tp], hi) for tp, hi in highest.items()}


def spans_of(rows: list[dict[str, Any]]) -> Spans:
    """Each source (topic, partition)'s lowest and highest offset in ``rows``.

    Sorted in C, not min/max per row in Python (0.19 s of cProfile per 20,000 items):
    a batch's rows come in offset order per partition, which the sort finds as runs;
    of the sorted pairs, a dict keeps each partition's last (highest), built backwards
    its first (lowest)."""
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


def _envelope(item: Envelope, profile_id: str) -> dict[str, Any]:
    return {
        "space_id": item.space_id,
        "profile_id": profile_id,
        "source": item.source,
        "conversation_id": item.conversation_id or "",
        "session_id": item.session or "",
        "idempotency_key": item.idempotency_key,
        "occurred_at": item.occurred_at,
    }


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


def _sensitive(settings: Settings, space_id: str) -> Callable[[str], bool]:
    """Whether a ``type.field`` is sensitive in the space."""
    names = _sensitive_names(settings, space_id)
    return lambda attr: attr in names or attr.split(".", 1)[0] in names


def _apart(
    rows: Rows,
    base: dict[str, Any],
    row_id: str,
    for_: str,
    payload: dict[str, Any],
    settings: Settings,
) -> str | None:
    """The payload without the words of a sensitive stated value (``None``: nothing
    sensitive), the words written apart to ``stated_sensitive``."""
    found = withheld(payload, _sensitive(settings, base["space_id"]))
    if found is None:
        return None
    kept, words = found
    rows["stated_sensitive"].append(
        {
            "id": row_id,
            "space_id": base["space_id"],
            "profile_id": base["profile_id"],
            "for": for_,
            "attr": payload["attr"],
            "value": words,
            "occurred_at": base["occurred_at"],
            **{k: base[k] for k in _SOURCE},
        }
    )
    return _json(kept)


def _interaction_row(
    base: dict[str, Any],
    interaction: Interaction,
    for_: str,
    turn_id: str,
    index: int,
    rows: Rows | None = None,
    settings: Settings | None = None,
) -> dict[str, Any]:
    payload = None
    if (
        rows is not None
        and settings is not None
        and interaction.kind in _STATED
        and _sensitive(settings, base["space_id"])(field_of(interaction, "attr", ""))
    ):
        row_id = f"{base['idempotency_key']}#{index}"
        dumped = interaction.model_dump(mode="json", exclude={"for_"})
        payload = _apart(rows, base, row_id, for_, dumped, settings)
    return {
        **base,
        "for": for_,
        "turn_id": turn_id,
        "item_index": index,
        "kind": interaction.kind,
        "exposure_id": field_of(interaction, "exposure_id") or "",
        "list_id": field_of(interaction, "list_id", ""),
        "ref": field_of(interaction, "ref", ""),
        "attr": field_of(interaction, "attr", ""),
        # Serialized by the model in one call: model_dump + json.dumps took 4 times as long.
        "payload": payload or interaction.model_dump_json(exclude={"for_"}),
    }


#: The kinds that state a value: a sensitive one is kept apart.
_STATED = frozenset({"attribute", "preference"})


def _clean(text: str) -> str:
    """Text that encodes as UTF-8 (JSON may carry lone surrogates, which do not)."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _header(raw: bytes) -> dict[str, str]:
    """Best-effort type, space, source and key of an invalid item, for triage."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        field: value[:256]
        for field in ("type", "space_id", "source", "idempotency_key")
        if isinstance(value := data.get(field), str)
    }


def rows_for(decision: Decision, settings: Settings, ingested_at: datetime) -> Rows:
    """The raw-table rows one decision writes (none for a duplicate)."""
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
    order of its messages): what :func:`rows_for` returns, without a mapping per
    decision merged into the batch's (~6.5 ``setdefault`` and ``extend`` per item)."""
    if decision.duplicate:
        return
    src = decision.source
    source_cols = {
        "ingested_at": ingested_at,
        "_topic": src.topic,
        "_partition": src.partition,
        "_offset": src.offset,
    }
    item = decision.item
    rows["idempotency_keys"].append(
        {"dedup_key": decision.dedup_key, "space_id": item.space_id if item else "", **source_cols}
    )
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
            {
                "reason": decision.refusal.reason.value,
                "field_path": _clean(decision.refusal.field_path[:512]),
                "message": _clean(decision.refusal.message[:2048]),
                "item_type": _clean(header.get("type", "")),
                "space_id": _clean(header.get("space_id", "")),
                "source": _clean(header.get("source", "")),
                "idempotency_key": _clean(header.get("idempotency_key", "")),
                "raw_sha256": hashlib.sha256(decision.raw).hexdigest(),
                "raw_bytes": len(decision.raw),
                **source_cols,
            }
        )
    if item is None or decision.profile_id is None:
        return
    base = {**_envelope(item, decision.profile_id), **source_cols}
    if isinstance(item, InteractionItem):
        rows["interactions"].append(
            _interaction_row(base, item.interaction, item.for_, "", 0, rows, settings)
        )
    elif isinstance(item, Turn):
        _turn_rows(rows, base, item, decision, settings, source_cols)
    elif isinstance(item, Outcome):
        token = decision.token
        if token is None:  # a decision not made by ``judge``: its token was never verified
            token = TokenCheck("absent" if item.exposure_token is None else "invalid")
        rows["outcomes"].append(
            {
                **base,
                "outcome": item.outcome,
                "ref": item.ref,
                "order_id": item.order_id,
                "exposure_token": _clean(item.exposure_token or ""),
                # Filled only from a token the space's keys verify (core/exposure_tokens).
                "exposure_id": token.exposure_id,
                "exposure_pos": token.pos,
                "token_status": token.status,
                "attrs": {k: str(v) for k, v in item.attrs.items()},
                "reason": item.reason or "",
                "for": item.for_ or "self",
            }
        )
    elif isinstance(item, Command):
        # By alias: the stated view reads the correction's bucket from ``for``.
        replacement = item.replacement.model_dump_json(by_alias=True) if item.replacement else ""
        if item.replacement is not None:
            dumped = item.replacement.model_dump(mode="json", by_alias=True)
            bucket = dumped.get("for") or "self"
            replacement = (
                _apart(rows, base, item.idempotency_key, bucket, dumped, settings) or replacement
            )
        rows["commands"].append(
            {
                **base,
                "command": item.command,
                "inference_id": item.inference_id or "",
                "replacement": replacement,
            }
        )


def _turn_rows(
    rows: Rows,
    base: dict[str, Any],
    turn: Turn,
    decision: Decision,
    settings: Settings,
    source_cols: dict[str, Any],
) -> None:
    keep = decision.keep_interactions
    rows["turns"].append(
        {
            **base,
            "turn_id": turn.turn_id,
            "agent": turn.agent,
            "build": turn.build or "",
            "contract_version": turn.contract_version or "",
            "constraints_version": turn.constraints_version or "",
            "experiment_id": turn.experiment.id if turn.experiment else "",
            "experiment_arm": turn.experiment.arm if turn.experiment else "",
            "guard_acted": turn.guard_acted,
            "guard_budget_exceeded": turn.guard_budget_exceeded,
            "internal_text_found": sum(
                c.verdict is Verdict.internal_text_found for c in turn.claims
            ),
            "interactions": len(turn.interactions) if keep else 0,
            "interactions_refused": 0 if keep else len(turn.interactions),
            "claims": len(turn.claims),
            "constraints": len(turn.constraints),
            "language": turn.language or "",
        }
    )
    if keep:
        for i, interaction in enumerate(turn.interactions):
            rows["interactions"].append(
                _interaction_row(
                    base, interaction, interaction.for_ or "self", turn.turn_id, i, rows, settings
                )
            )
    space = settings.space(turn.space_id)
    common = {
        "space_id": turn.space_id,
        "source": turn.source,
        "agent": turn.agent,
        "turn_id": turn.turn_id,
        "occurred_at": turn.occurred_at,
        **source_cols,
    }
    if space is not None and space.has(Feature.claims):
        for i, claim in enumerate(turn.claims):
            rows["turn_claims"].append(
                {
                    **common,
                    "claim_index": i,
                    "contract_version": turn.contract_version or "",
                    "category": claim.category,
                    "class": claim.class_ or "",
                    "nature": claim.nature,
                    "role": claim.role or "",
                    "verdict": claim.verdict.value,
                    "action": claim.action,
                    "evidenced": claim.verdict in EVIDENCED_VERDICTS,
                    "value": claim.value or "",
                    "evidence": _json(claim.evidence) if claim.evidence else "",
                    "language": turn.language or "",
                }
            )
    for i, call in enumerate(turn.constraints):
        rows["turn_constraints"].append(
            {
                **common,
                "call_index": i,
                "tool": call.tool,
                "sent": call.sent,
                "results_checked": call.results_checked,
                "violations": call.violations,
                "unverifiable": call.unverifiable,
                "relaxed": call.relaxed,
            }
        )
