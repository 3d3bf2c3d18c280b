"""The ``store`` fixture copies a migrated template: the copy must be the schema the
migrations make, table for table and column for column, and hold no rows of another test."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from turnstream.adapters.clickhouse.schema import MIGRATIONS, apply_migrations
from turnstream.adapters.clickhouse.store import Store

TABLES = (
    "SELECT name, engine, replaceAll(create_table_query, {prefix:String}, '')"
    " FROM system.tables WHERE database = {db:String} ORDER BY name"
)
COLUMNS = (
    "SELECT table, name, type, default_kind, default_expression, compression_codec"
    " FROM system.columns WHERE database = {db:String} ORDER BY table, position"
)


def schema(store: Store, database: str) -> tuple[list[tuple], list[tuple]]:
    parameters = {"db": database, "prefix": f"{database}."}
    return store.query(TABLES, parameters).rows, store.query(COLUMNS, parameters).rows


def test_the_copy_is_the_schema_the_migrations_make(store: Store) -> None:
    fresh = Store(f"chdb://{store.path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(fresh) == [m.version for m in MIGRATIONS]
        tables, columns = schema(store, store.database)
        assert len(tables) > 20 and len(columns) > 100  # the comparison compares something
        assert (tables, columns) == schema(store, fresh.database)
        # Nothing left to apply: the copy records every migration as the original does.
        assert apply_migrations(store) == []
    finally:
        fresh.command(f"DROP DATABASE IF EXISTS {fresh.database}")
        fresh.close()


def test_each_copy_starts_empty(store_factory: Callable[[], Store]) -> None:
    first = store_factory()
    first.insert(
        "schema_migrations", [(10_000, "a test's row", 0)], ["version", "name", "applied_at"]
    )
    second = store_factory()
    assert second.database != first.database
    count = "SELECT count() FROM schema_migrations WHERE version = 10000"
    assert first.query(count).rows == [(1,)]
    assert second.query(count).rows == [(0,)]
