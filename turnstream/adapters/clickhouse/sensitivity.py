"""The sensitive names in the store: what the daily aggregates' views leave out.

The views that aggregate by value (migration 11, ``adapters/clickhouse/migrations/0011_*.sql``) read
the
``sensitive_names`` table at each insert and skip an object of a sensitive type and a
sensitive ``type.field``; ``sensitive_daily`` counts those by name only. The
configuration says which names are sensitive (``Settings.sensitive_names``);
:func:`write_sensitive` puts them in the table and takes out of the by-value aggregates
whatever was stored under a name before it became sensitive (or before the table was
written, for the days a migration rebuilt).
"""

from __future__ import annotations

from collections.abc import Iterable

from turnstream.adapters.clickhouse.store import Store

__all__ = ["BY_VALUE", "is_sensitive_name", "stored_sensitive", "write_sensitive"]

#: The aggregates keyed by value, with the SQL of each row's type and ``type.field``.
BY_VALUE = {
    "value_daily": ("splitByChar('.', attr)[1]", "attr"),
    "ref_values_daily": ("splitByChar(':', ref)[1]", "attr"),
    # Their weekly roll-ups (migration 20): the views copy what the daily rows hold.
    "value_weekly": ("splitByChar('.', attr)[1]", "attr"),
    "ref_values_weekly": ("splitByChar(':', ref)[1]", "attr"),
}


def is_sensitive_name(name: str, names: frozenset[str]) -> bool:
    """Whether a type or ``type.field`` is sensitive: itself, or its type."""
    return name in names or name.split(".", 1)[0] in names


def stored_sensitive(store: Store) -> frozenset[str]:
    """The names the views leave out now."""
    return frozenset(n for (n,) in store.query("SELECT name FROM sensitive_names").rows)


def write_sensitive(store: Store, names: Iterable[str]) -> dict[str, int]:
    """Make the views leave ``names`` out, and delete their rows from the by-value
    aggregates; the rows deleted per table. Blocking; safe to run at every start."""
    wanted = frozenset(names)
    if stored_sensitive(store) != wanted:
        store.command("TRUNCATE TABLE sensitive_names")
        if wanted:
            store.insert("sensitive_names", [(n,) for n in sorted(wanted)], ["name"])
    deleted: dict[str, int] = {}
    if not wanted:
        return deleted
    for table, (type_sql, attr_sql) in BY_VALUE.items():
        where = (
            f"has({{names:Array(String)}}, {type_sql}) OR has({{names:Array(String)}}, {attr_sql})"
        )
        parameters = {"names": sorted(wanted)}
        found = int(store.scalar(f"SELECT count() FROM {table} WHERE {where}", parameters) or 0)
        if found:
            store.command(
                f"ALTER TABLE {table} DELETE WHERE {where}",
                settings={"mutations_sync": 2},
                parameters=parameters,
            )
            deleted[table] = found
    return deleted
