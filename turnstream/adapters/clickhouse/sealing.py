"""The words of sensitive stated values written before they were kept apart.

From migration 29 the ingest sink writes a value stated on a sensitive field to
``stated_sensitive`` alone (``core/rows.py``). Rows written before it, or before a field
became sensitive, still hold the words in ``interactions``, ``stated`` and ``commands``:
:func:`seal_stated` moves them apart (the same id as the block reads them by) and leaves
the field, ``withheld``, in those tables. Blocking; safe to run at every start (a row
already withheld is not read again).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime

from turnstream.adapters.clickhouse.sensitivity import is_sensitive_name
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.constraints.sensitive import withheld

__all__ = ["seal_stated"]

_NOT_WITHHELD = "NOT JSONExtractBool({column}, 'withheld')"
#: Per table: the id the block reads by, the payload's column and where its field is.
_SOURCES = (
    ("stated", "id", "payload", "attr", "kind IN ('attribute', 'preference')"),
    (
        "interactions",
        "concat(idempotency_key, '#', toString(item_index))",
        "payload",
        "attr",
        "kind IN ('attribute', 'preference')",
    ),
    (
        "commands",
        "idempotency_key",
        "replacement",
        "JSONExtractString(replacement, 'attr')",
        "command = 'correct' AND replacement != ''",
    ),
)
_APART = ["id", "space_id", "profile_id", "for", "attr", "value", "occurred_at",
          "ingested_at", "_topic", "_partition", "_offset"]  # fmt: skip


def seal_stated(store: Store, names: Iterable[str]) -> dict[str, int]:
    """Move the words of values stated on the sensitive ``names`` (types or
    ``type.field``) out of ``interactions``, ``stated`` and ``commands``; the rows sealed
    per table."""
    wanted = frozenset(names)
    sealed: dict[str, int] = {}
    if not wanted:
        return sealed
    known = {i for (i,) in store.query("SELECT id FROM stated_sensitive").rows}
    now = datetime.now(UTC)
    parameters = {
        "names": sorted(wanted),
        "types": sorted({n.split(".", 1)[0] for n in wanted if "." not in n}),
    }
    for table, id_sql, column, attr_sql, kinds in _SOURCES:
        where = (
            f"{kinds} AND {_NOT_WITHHELD.format(column=column)} AND "
            f"(has({{names:Array(String)}}, {attr_sql}) OR "
            f"has({{types:Array(String)}}, splitByChar('.', {attr_sql})[1]))"
        )
        bucket = (
            "`for`"
            if table != "commands"
            else (
                "if(JSONExtractString(replacement, 'for') != '', "
                "JSONExtractString(replacement, 'for'), 'self')"
            )
        )
        rows = store.query(
            f"SELECT {id_sql} AS id, space_id, profile_id, {bucket}, {attr_sql}, {column}, "
            f"occurred_at FROM {table} WHERE {where}",
            parameters,
        ).rows
        if not rows:
            continue
        payloads: dict[str, str] = {}
        apart = []
        for row_id, space_id, profile_id, for_, attr, payload, occurred_at in rows:
            if not is_sensitive_name(attr, wanted):
                continue
            found = withheld(json.loads(payload), lambda _: True)
            if found is None:
                continue
            kept, words = found
            payloads[row_id] = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
            if row_id not in known:
                known.add(row_id)
                apart.append([row_id, space_id, profile_id, for_, attr, words, occurred_at,
                              now, "", 0, 0])  # fmt: skip
        if apart:
            store.insert("stated_sensitive", apart, _APART)
        if not payloads:
            continue
        ids, texts = list(payloads), list(payloads.values())
        store.command(
            f"ALTER TABLE {table} UPDATE {column} = transform({id_sql}, "
            "{ids:Array(String)}, {texts:Array(String)}, " + column + ") "
            f"WHERE has({{ids:Array(String)}}, {id_sql})",
            settings={"mutations_sync": 2},
            parameters={"ids": ids, "texts": texts},
        )
        sealed[table] = len(payloads)
    return sealed
