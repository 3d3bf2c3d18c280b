"""Erasure: every row of a subject, in every table that holds a profile id, is removed.

Mutations (``ALTER TABLE ... DELETE``, synchronous) rewrite the parts, so the rows are
gone from disk, not only hidden. Review requests are kept: the law requires them for at
least 395 days after resolution, and an erasure counts them as retained. What cannot be
erased per person: the daily aggregates behind the priors keep hashed profile ids in
per-day sets until they age out (100 days).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from turnstream.sinks.store import Store, quote

__all__ = ["RETAINED", "Erasure", "erase_subject", "tables_with_profiles"]

#: Tables whose rows an erasure keeps, and why.
RETAINED = {"review_requests": "kept by law at least 395 days after resolution"}


@dataclass
class Erasure:
    space_id: str
    profile_id: str
    tables: list[str] = field(default_factory=list)
    retained: dict[str, int] = field(default_factory=dict)


def tables_with_profiles(store: Store) -> list[str]:
    """The tables (not views) of the database with a ``profile_id`` column."""
    rows = store.query(
        "SELECT c.table FROM system.columns AS c INNER JOIN system.tables AS t "
        "ON c.database = t.database AND c.table = t.name "
        f"WHERE c.database = {quote(store.database)} AND c.name = 'profile_id' "
        "AND t.engine NOT IN ('View', 'MaterializedView') ORDER BY c.table"
    ).rows
    return [table for (table,) in rows]


def erase_subject(
    store: Store, space_id: str, profile_id: str, only: tuple[str, ...] | None = None
) -> Erasure:
    """Delete the subject's rows (blocking); ``only`` limits it to some tables."""
    erasure = Erasure(space_id, profile_id)
    who = f"space_id = {quote(space_id)} AND profile_id = {quote(profile_id)}"
    for table in tables_with_profiles(store):
        if only is not None and table not in only:
            continue
        if table in RETAINED:
            erasure.retained[table] = int(store.scalar(f"SELECT count() FROM {table} WHERE {who}"))
            continue
        store.command(f"ALTER TABLE {table} DELETE WHERE {who} SETTINGS mutations_sync = 2")
        erasure.tables.append(table)
    return erasure
