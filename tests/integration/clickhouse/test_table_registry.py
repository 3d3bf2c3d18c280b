"""The table registry (core/tables.py) is the store the migrations make: every table's
columns and types in order, every TTL, and no table left undeclared."""

from __future__ import annotations

import re
from collections import defaultdict

from tests.fixtures.store import TEMPLATE, MigratedTemplate
from turnstream.core.tables import TABLES, columns_ddl, ttl_ddl

_COLUMNS = (
    "SELECT table, name, type FROM system.columns WHERE database = {db:String}"
    " ORDER BY table, position"
)
_TABLES = "SELECT name, engine, create_table_query FROM system.tables WHERE database = {db:String}"
#: The first TTL clause of a create statement, as ClickHouse prints it back.
_TTL = re.compile(r"\bTTL (?:toDateTime\()?(\w+)\)? \+ toIntervalDay\((\d+)\)(?! WHERE)")


def _objects(template: MigratedTemplate) -> list[tuple[str, str, str]]:
    return template.store.query(_TABLES, parameters={"db": TEMPLATE}).rows


def test_every_declared_table_has_the_migrated_columns_and_types(
    migrated_template: MigratedTemplate,
) -> None:
    live: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for name, column, type_ in migrated_template.store.query(
        _COLUMNS, parameters={"db": TEMPLATE}
    ).rows:
        live[name].append((column, type_))
    assert len(TABLES) > 30
    for declared in TABLES:
        assert [(c.name, c.type) for c in declared.columns] == live[declared.name], declared.name


def test_every_table_of_the_store_is_declared(migrated_template: MigratedTemplate) -> None:
    declared = {t.name for t in TABLES}
    undeclared = [
        name
        for name, engine, _ in _objects(migrated_template)
        if engine not in ("MaterializedView", "Null")
        and not name.startswith(".inner")
        and not name.endswith("_current")
        and name not in declared
    ]
    assert undeclared == []


def test_every_ttl_is_the_declared_retention(migrated_template: MigratedTemplate) -> None:
    ttls = {}
    for name, _, create in _objects(migrated_template):
        found = _TTL.search(create)
        if found is not None:
            ttls[name] = (found[1], int(found[2]))
    declared = {
        t.name: (t.retention.dated_by, t.retention.days)
        for t in TABLES
        if t.retention is not None and t.retention.ttl
    }
    assert len(declared) > 10
    assert ttls == declared


def test_a_table_created_from_its_declaration_is_the_migrated_one(
    migrated_template: MigratedTemplate,
) -> None:
    store, db = migrated_template.store, f"{TEMPLATE}_declared"
    store.command(f"CREATE DATABASE IF NOT EXISTS {db}")
    try:
        tables = [t for t in TABLES if t.kind != "view"]
        for declared in tables:
            store.command(
                f"CREATE TABLE {db}.{declared.name} ({columns_ddl(declared.name)})"
                f" ENGINE = MergeTree ORDER BY tuple() {ttl_ddl(declared.name)}"
            )
        made = {
            name: (columns, ttl)
            for name, columns, ttl in store.query(
                "SELECT t.name, groupArray((c.name, c.type)), any(t.create_table_query)"
                " FROM system.tables AS t JOIN system.columns AS c"
                " ON c.database = t.database AND c.table = t.name"
                " WHERE t.database = {db:String} GROUP BY t.name",
                parameters={"db": db},
            ).rows
        }
        for declared in tables:
            columns, create = made[declared.name]
            assert sorted(columns) == sorted((c.name, c.type) for c in declared.columns)
            found = _TTL.search(create)
            retention = declared.retention
            if retention is not None and retention.ttl:
                assert found is not None and (found[1], int(found[2])) == (
                    retention.dated_by,
                    retention.days,
                ), declared.name
            else:
                assert found is None, declared.name
    finally:
        store.command(f"DROP DATABASE IF EXISTS {db}")
