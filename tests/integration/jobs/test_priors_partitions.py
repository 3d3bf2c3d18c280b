"""The daily aggregates partitioned by ISO week (migration 21), on real chDB: the job's
reads of the window's edge days select only the edge weeks' parts (checked with
``EXPLAIN indexes = 1``, not by timing), the migration moves every row and makes the
views again, and an ingest block spread over many weeks is not refused."""

from __future__ import annotations

import re
import uuid
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.integration.jobs.test_priors import TODAY, _engaged, _insert, _presented
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.jobs.priors import window_of, window_parameters, window_rows

pytestmark = pytest.mark.integration

DAILY = ("value_daily", "ref_values_daily")
_COLUMNS = {
    "value_daily": "attr, value, level, people, exposure_micro, events, signal_micro",
    "ref_values_daily": "attr, ref, value, presentations",
}
_WEEKLY = {"value_daily": "value_weekly", "ref_values_daily": "ref_values_weekly"}
_KEYS = {
    "value_daily": "space_id, attr, value, day, level, arraySort(people), exposure_micro, "
    "events, signal_micro",
    "ref_values_daily": "space_id, attr, ref, value, day, presentations",
}


def _days(store: Store, first: date, days: int, people: int = 3) -> None:
    """Each day of ``[first, first + days)``: a few people shown two objects, one
    engagement; one insert per day."""
    for d in range(days):
        day = first + timedelta(days=d)
        items = [(f"item_variant:acme:{d % 5}", {"color": f"c{d % 3}"}), ("item:acme:9", {})]
        rows = [_presented(f"p{i}", day, items, visible_k=2) for i in range(people)]
        _insert(store, [*rows, _engaged("p0", day, items[0][0], "click")])


def _selected_parts(store: Store, sql: str, parameters: dict, table: str) -> tuple[int, int]:
    """From ``EXPLAIN indexes = 1`` of ``sql``: the parts of ``table`` its read selects
    after the partition and min-max indexes, and the parts it had to choose from."""
    lines = [r[0] for r in store.query(f"EXPLAIN indexes = 1 {sql}", parameters).rows]
    start = next(i for i, line in enumerate(lines) if f".{table})" in line and "ReadFrom" in line)
    found: dict[str, tuple[int, int]] = {}
    index = ""
    for line in lines[start + 1 :]:
        if "ReadFrom" in line:
            break
        if line.strip() in ("Min-Max", "Partition", "PrimaryKey"):
            index = line.strip()
        match = re.match(r"\s*Parts: (\d+)/(\d+)$", line)
        if match and index and index not in found:
            found[index] = (int(match[1]), int(match[2]))
    # The min-max index of `day` runs first and sees every part; the partition index then
    # keeps what it passed.
    selected = min(n for n, _ in found.values())
    return selected, found["Min-Max"][1]


def _parts(store: Store, table: str, mondays: list[date] | None = None) -> int:
    where = "" if mondays is None else " AND partition IN {mondays:Array(String)}"
    return store.scalar(
        f"SELECT count() FROM system.parts WHERE database = currentDatabase() "
        f"AND table = {{table:String}} AND active{where}",
        {"table": table, "mondays": [str(m) for m in mondays or []]},
    )


def test_the_daily_tables_are_partitioned_by_week(store: Store) -> None:
    keys = dict(
        store.query(
            "SELECT name, partition_key FROM system.tables WHERE database = currentDatabase() "
            "AND name IN ('value_daily', 'ref_values_daily')"
        ).rows
    )
    assert keys == {"value_daily": "toMonday(day)", "ref_values_daily": "toMonday(day)"}


@pytest.mark.parametrize("as_of_weekday", [0, 3, 6], ids=["monday", "thursday", "sunday"])
def test_the_edge_days_are_read_from_the_edge_weeks_parts_only(
    store: Store, as_of_weekday: int
) -> None:
    as_of = TODAY - timedelta(days=(TODAY.weekday() - as_of_weekday) % 7)
    start, end = window_of(as_of)
    _days(store, start - timedelta(days=3), (end - start).days + 6)
    params = {**window_parameters(start, end), "space": "acme", "hidden": []}
    # The Mondays of the weeks holding edge days: none at the start when the window
    # starts on a Monday, none at the end when it ends on a Sunday.
    edges = [start - timedelta(days=start.weekday())] if start < params["weeks_start"] else []
    edges += [params["weeks_end"]] if params["weeks_end"] < end else []
    for table in DAILY:
        # One part per week, fixed while the plan and system.parts are read.
        store.command(f"OPTIMIZE TABLE {table} FINAL")
        store.command(f"SYSTEM STOP MERGES {table}")
        edge_sql = window_rows(table, _COLUMNS[table]).split("UNION ALL")[0]
        selected, among = _selected_parts(store, edge_sql, params, table)
        assert among == _parts(store, table) > 13, table
        # Only the parts of the weeks holding the edge days: two weeks at most.
        assert selected == _parts(store, table, edges) > 0, (table, edges)
        # And the rows read are the edge days' rows, every one of them.
        read = store.query(f"SELECT count() FROM ({edge_sql})", params).rows[0][0]
        expected = store.scalar(
            f"SELECT count() FROM {table} WHERE space_id = 'acme' AND ((day >= {{start:Date}} "
            f"AND day < {{weeks_start:Date}}) OR (day >= {{weeks_end:Date}} "
            f"AND day < {{end:Date}}))",
            params,
        )
        edge_days = (params["weeks_start"] - start).days + (end - params["weeks_end"]).days
        assert read == expected and (read > 0) == (edge_days > 0), table


def test_migration_21_moves_every_row_and_makes_the_views_again(chdb_path: Path) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        apply_migrations(store, until=20)
        _days(store, TODAY - timedelta(days=60), 40, people=12)
        tables = {**_KEYS, **{_WEEKLY[t]: _KEYS[t].replace("day", "week") for t in DAILY}}
        # FINAL: the rows as merged, whatever merges ran in between.
        before = {
            t: store.query(f"SELECT {k} FROM {t} FINAL ORDER BY ALL").rows
            for t, k in tables.items()
        }
        assert [len(before[t]) >= 40 for t in DAILY] == [True, True]
        assert [len(before[_WEEKLY[t]]) > 10 for t in DAILY] == [True, True]
        assert apply_migrations(store, until=21) == [21]
        for table, key in tables.items():
            rows = store.query(f"SELECT {key} FROM {table} FINAL ORDER BY ALL").rows
            assert rows == before[table], table
        assert not store.scalar(
            "SELECT count() FROM system.tables WHERE database = currentDatabase() "
            "AND endsWith(name, '_next')"
        )
        # The views write the partitioned tables and, through them, the roll-ups.
        events = store.scalar("SELECT sum(events) FROM value_weekly")
        _days(store, TODAY - timedelta(days=5), 3, people=12)
        assert store.scalar("SELECT sum(events) FROM value_daily") == events + 3
        assert store.scalar("SELECT sum(events) FROM value_weekly") == events + 3
        for daily, weekly, sums in [
            ("value_daily", "value_weekly", "sum(exposure_micro), sum(events)"),
            ("ref_values_daily", "ref_values_weekly", "sum(presentations)"),
        ]:
            by_day = store.query(
                f"SELECT toMonday(day) AS w, {sums} FROM {daily} GROUP BY w ORDER BY w"
            ).rows
            by_week = store.query(
                f"SELECT week, {sums} FROM {weekly} GROUP BY week ORDER BY week"
            ).rows
            assert by_day == by_week and len(by_day) >= 7, weekly
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()


def test_one_ingest_block_over_many_weeks_is_not_refused(store: Store) -> None:
    # 150 weeks in one insert: past ClickHouse's default of 100 partitions per block.
    days = [TODAY - timedelta(weeks=w) for w in range(150)]
    item = ("item_variant:acme:1", {"color": "black"})
    _insert(store, [_presented(f"p{i}", day, [item], 1) for i, day in enumerate(days)])
    # The rows older than the tables' 100 days go at the next merge (TTL); the rest stay.
    store.command("OPTIMIZE TABLE value_daily FINAL")
    kept = store.scalar(
        "SELECT count(DISTINCT day) FROM value_daily WHERE attr = 'item_variant.color'"
    )
    assert kept == sum(1 for d in days if d > TODAY - timedelta(days=100))
