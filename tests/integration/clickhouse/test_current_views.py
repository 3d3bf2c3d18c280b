"""The ``<table>_current`` views and the analysts' SQL on a migrated chDB store: every
table that needs FINAL has its view (or a reason not to), each view has its table's
columns and reads one current row per identity, and every statement of the analysts'
script is read by ClickHouse's own parser and names relations that exist and hold a
``space_id``."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.adapters.clickhouse.analysts import (
    ANALYST_TABLES,
    ANALYST_VIEWS,
    NOT_FOR_ANALYSTS,
    analyst_sql,
)
from turnstream.adapters.clickhouse.current_views import CURRENT_VIEWS, NOT_VIEWED, current_view
from turnstream.adapters.clickhouse.store import Store

pytestmark = pytest.mark.integration


def _engines(store: Store) -> dict[str, str]:
    return dict(
        store.query(
            "SELECT name, engine FROM system.tables WHERE database = currentDatabase()"
        ).rows
    )


def _columns(store: Store, relation: str) -> list[tuple[str, str]]:
    return [
        (r[0], r[1])
        for r in store.query(
            "SELECT name, type FROM system.columns WHERE database = currentDatabase() "
            "AND table = {t:String} ORDER BY position",
            {"t": relation},
        ).rows
    ]


def test_every_table_that_needs_final_has_a_current_view_with_its_columns(store: Store) -> None:
    engines = _engines(store)
    needs_final = {t for t, e in engines.items() if e in ("ReplacingMergeTree", "SummingMergeTree")}
    assert needs_final == set(CURRENT_VIEWS) | set(NOT_VIEWED)
    for table in CURRENT_VIEWS:
        assert engines[current_view(table)] == "View", table
        assert _columns(store, current_view(table)) == _columns(store, table), table


def test_a_current_view_reads_one_row_per_identity(store: Store) -> None:
    columns = ["id", "space_id", "profile_id", "status", "weight", "version"]
    store.insert("inferences", [["inf_1", "acme", "p1", "active", 0.4, 1]], columns)
    store.insert("inferences", [["inf_1", "acme", "p1", "retracted", 0.0, 2]], columns)
    store.insert("inferences", [["inf_2", "acme", "p1", "active", 0.7, 1]], columns)
    raw = store.query("SELECT count() FROM inferences").rows[0][0]
    current = store.query("SELECT id, status, weight FROM inferences_current ORDER BY id").rows
    assert raw == 3  # two parts, not merged yet: the table alone counts inf_1 twice
    assert [tuple(r) for r in current] == [("inf_1", "retracted", 0.0), ("inf_2", "active", 0.7)]


def test_a_summing_tables_view_sums_its_rows(store: Store) -> None:
    day = datetime(2026, 12, 1, tzinfo=UTC).date()
    columns = ["space_id", "day", "kind", "rows"]
    have = [c for c, _ in _columns(store, "interactions_daily")]
    assert set(columns) <= set(have), have
    for n in (2, 3):
        store.insert("interactions_daily", [["acme", day, "engaged", n]], columns)
    rows = store.query("SELECT space_id, kind, rows FROM interactions_daily_current").rows
    assert [tuple(r) for r in rows] == [("acme", "engaged", 5)]


def test_the_analysts_relations_exist_and_hold_a_space(store: Store) -> None:
    engines = _engines(store)
    with_space = {
        r[0]
        for r in store.query(
            "SELECT table FROM system.columns WHERE database = currentDatabase() "
            "AND name = 'space_id'"
        ).rows
    }
    for relation in (*ANALYST_TABLES, *ANALYST_VIEWS):
        assert relation in with_space, relation
    assert all(engines[v] == "View" for v in ANALYST_VIEWS)
    assert all(engines[t] not in ("View", "MaterializedView") for t in ANALYST_TABLES)
    # Every table with a space is the analysts' (under a policy) or named as not theirs.
    tables = {t for t in with_space if engines[t] not in ("View", "MaterializedView")}
    assert tables == set(ANALYST_TABLES) | set(NOT_FOR_ANALYSTS)
    views = {t for t in with_space if engines[t] == "View"}
    assert views == {*ANALYST_VIEWS, current_view("erase_tombstones")}  # the operator's


def test_every_analysts_statement_parses_on_clickhouse(store: Store) -> None:
    statements = analyst_sql(["acme", "lumen-2"], store.database)
    for statement in statements:
        store.query(f"EXPLAIN AST {statement}")  # raises on a syntax error
    policies = [s for s in statements if s.startswith("CREATE ROW POLICY")]
    assert len(policies) == 2 * len(ANALYST_TABLES)
    grants = [s for s in statements if s.startswith("GRANT SELECT")]
    assert len(grants) == 2 * (len(ANALYST_TABLES) + len(ANALYST_VIEWS))
