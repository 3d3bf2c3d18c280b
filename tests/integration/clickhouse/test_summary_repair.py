"""Issue 35: every summary equals its recomputation from the raw tables, whatever a crash
left: a summary short of an insert, one holding it twice, a chained roll-up short of
what its daily table holds, a crash during the repair itself.

The crashes are made without a SIGKILL lottery, on real chDB and the real schema: the
store's state between two of ClickHouse's commits is built by hand (a view dropped for
one insert, an insert's summary rows written twice, the sink's marks left unconfirmed),
then a sink starts again, as the worker does after a SIGKILL, and replays the batch.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from tests.integration.clickhouse.test_value_daily_view import SETTINGS, _edges, _rows
from turnstream.adapters.clickhouse.schema import RAW_TABLES, REF_VALUES_WEEKS, VALUE_WEEKS
from turnstream.adapters.clickhouse.sensitivity import write_sensitive
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.summaries import SUMMARIES, differences, repair, summaries_of
from turnstream.adapters.clickhouse.writer import (
    RawSink,
    insert_columns,
    insert_id,
    spans_of,
    token_of,
)
from turnstream.core.rows import COLUMNS, Rows
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(scope="module")
def batch() -> Rows:
    """A mixed batch sent now (turns, claims, calls, pages, engagements, statements,
    corrections) and the hand-made pages at the contract's edges (sensitive names)."""
    return _rows([*mixed_items(n=1200, bad=12, seed=35, start=NOW).lines, *_edges()])


def _ready(store: Store) -> Store:
    write_sensitive(store, SETTINGS.sensitive_names())
    return store


def _exact(store: Store) -> None:
    found = differences(lambda sql: store.query(sql).rows)
    assert found == dict.fromkeys(found, 0)


def _target(create: str) -> str:
    """The table a materialized view writes, from its ``CREATE`` statement."""
    return re.search(r"\bTO\s+(?:\w+\.)?(\w+)", create).group(1)


def _cut(rows: Rows, lo: int, hi: int) -> Rows:
    return {t: [r for r in rs if lo <= r["_offset"] < hi] for t, rs in rows.items()}


def _unconfirm(store: Store) -> None:
    """The sink's marks as a crash before they were written leaves them."""
    store.command("TRUNCATE TABLE sink_marks")


def _sums(store: Store) -> tuple[int, ...]:
    return tuple(
        int(store.scalar(sql))
        for sql in (
            "SELECT sum(claims) FROM claims_minute",
            "SELECT sum(calls) FROM constraints_minute",
            "SELECT sum(turns) FROM turns_minute",
            "SELECT sum(events) FROM value_daily",
            "SELECT sum(events) FROM value_weekly",
            "SELECT sum(presentations) FROM ref_values_weekly",
            "SELECT sum(rows) FROM interactions_daily",
        )
    )


def test_every_summary_of_a_clean_run_equals_its_recomputation(store: Store, batch: Rows) -> None:
    """The recomputation is the views' SQL: on a run without a crash they agree on
    every summary (here in three inserts, so the capped people sets merge)."""
    _ready(store)
    sink = RawSink(store)
    for lo in range(0, 1300, 450):
        sink.write(_cut(batch, lo, lo + 450))
    assert all(n > 0 for n in _sums(store))
    assert store.scalar("SELECT count() FROM stated") > 0
    _exact(store)


def test_every_view_on_a_raw_table_writes_a_summary_the_repair_knows(store: Store) -> None:
    """A view added later without its recomputation here would be left unrepaired."""
    known = {(s.table, s.source) for s in SUMMARIES}
    found = set()
    sources = [(t, t) for t in RAW_TABLES]
    while sources:
        raw, source = sources.pop()
        for view in store.scalar(
            "SELECT dependencies_table FROM system.tables WHERE database = currentDatabase() "
            "AND name = {name:String}",
            {"name": source},
        ):
            create = store.scalar(
                "SELECT create_table_query FROM system.tables "
                "WHERE database = currentDatabase() AND name = {name:String}",
                {"name": view},
            )
            target = _target(create)
            found.add((target, raw))
            sources.append((raw, target))
    found.discard(("interaction_values", "interactions"))  # a Null table: nothing stored
    assert found == known
    assert len(found) == 11


def test_a_summary_holding_an_insert_twice_is_repaired_at_the_next_start(
    store: Store, batch: Rows
) -> None:
    """What a push again did when a view's deduplication log lost the insert: the
    summaries hold it twice. The marks unconfirmed, a start repairs every one."""
    _ready(store)
    first = _cut(batch, 0, 700)
    RawSink(store).write(first)
    once = _sums(store)
    # The insert again through every view (the weekly roll-ups by their own views).
    for table in dict.fromkeys(s.table for s in SUMMARIES if s.day and not s.chained_on):
        store.command(f"INSERT INTO {table} SELECT * FROM {table}")
    assert _sums(store) == tuple(2 * n for n in once)
    _unconfirm(store)
    restarted = RawSink(store)
    restarted.write(first)  # the batch redelivered: nothing new in it
    assert _sums(store) == once
    restarted.write(_cut(batch, 700, 1300))
    _exact(store)


def test_a_crash_between_the_daily_and_the_weekly_part_is_repaired(
    store: Store, batch: Rows
) -> None:
    """The chained roll-up: value_daily and ref_values_daily took an insert, the weekly
    roll-ups did not (their views' parts never came); a start rebuilds those weeks."""
    _ready(store)
    RawSink(store).write(_cut(batch, 0, 500))
    store.command("DROP VIEW value_weekly_mv")
    store.command("DROP VIEW ref_values_weekly_mv")
    RawSink(store).write(_cut(batch, 500, 1300))
    daily, weekly = (
        store.scalar("SELECT sum(events) FROM value_daily"),
        store.scalar("SELECT sum(events) FROM value_weekly"),
    )
    assert weekly < daily  # a week short
    store.command(f"CREATE MATERIALIZED VIEW value_weekly_mv TO value_weekly AS {VALUE_WEEKS}")
    store.command(
        f"CREATE MATERIALIZED VIEW ref_values_weekly_mv TO ref_values_weekly AS {REF_VALUES_WEEKS}"
    )
    # The crash before the marks of the second insert were written.
    store.command(
        "ALTER TABLE sink_marks DELETE WHERE table = 'interactions'",
        settings={"mutations_sync": 2},
    )
    store.command(
        "INSERT INTO sink_marks SELECT 'interactions', _topic, _partition, max(_offset) "
        "FROM interactions WHERE _offset < 500 GROUP BY _topic, _partition"
    )
    RawSink(store).write(_cut(batch, 0, 1300))  # the start after the crash: redelivered
    assert store.scalar("SELECT sum(events) FROM value_weekly") == daily
    _exact(store)


def test_a_summary_short_of_an_insert_is_repaired_and_a_repair_again_changes_nothing(
    store: Store, batch: Rows
) -> None:
    """The raw part landed, no view's part did (a crash right after it); then a crash
    during the repair (here: the repair run twice, and once more over confirmed rows)."""
    _ready(store)
    RawSink(store).write(_cut(batch, 0, 600))
    views = {
        name: create
        for name, create in store.query(
            "SELECT name, create_table_query FROM system.tables WHERE database = "
            "currentDatabase() AND engine = 'MaterializedView'"
        ).rows
    }
    for name in views:
        store.command(f"DROP VIEW {name}")
    second = _cut(batch, 600, 1300)
    RawSink(store).write(second)
    for create in views.values():
        store.command(create)
    behind = {
        (t, int(p)): int(o)
        for t, p, o in store.query(
            "SELECT _topic, _partition, max(_offset) FROM interactions WHERE _offset < 600 "
            "GROUP BY _topic, _partition"
        ).rows
    }
    for source in ("interactions", "turns", "turn_claims", "turn_constraints", "commands"):
        repair(store, source, behind)
    repair(store, "interactions", behind)  # a crash in the first: run again
    _exact(store)
    repair(store, "interactions", {tp: -1 for tp in behind})  # every row, for nothing
    _exact(store)


def test_a_table_no_summary_reads_has_nothing_to_repair(store: Store) -> None:
    assert summaries_of("idempotency_keys") == ()
    assert repair(store, "idempotency_keys", {("in", 0): -1}) == 0


def test_an_insert_sent_again_with_its_token_changes_no_summary(store: Store, batch: Rows) -> None:
    """A client that sends an insert again with the same token (a retry after a lost
    answer, another writer on a server) adds nothing anywhere: the raw table and every
    view's target, the chained weekly roll-ups and ``stated`` included, drop it by the
    token (each target keeps a deduplication window, migration 31)."""
    _ready(store)
    rows = _cut(batch, 0, 900)["interactions"]
    spans = spans_of(rows)
    token = token_of("interactions", spans, len(rows))
    columns = insert_columns("interactions", rows, insert_id(token))
    names = [*COLUMNS["interactions"], "_insert"]
    store.insert("interactions", columns, names, token, column_oriented=True)
    once = _sums(store)
    stated = store.scalar("SELECT count() FROM stated")
    assert stated > 0
    store.insert("interactions", columns, names, token, column_oriented=True)
    assert _sums(store) == once
    assert store.scalar("SELECT count() FROM stated") == stated
    _exact(store)


def test_every_view_target_keeps_a_deduplication_window(store: Store) -> None:
    """What makes the test above hold for every summary, present and future: a view's
    target table without a window takes a repeated token's rows again."""
    creates = dict(
        store.query(
            "SELECT name, create_table_query FROM system.tables WHERE database = "
            "currentDatabase() AND engine != 'Null'"
        ).rows
    )
    targets = {
        _target(create)
        for create in creates.values()
        if create.startswith("CREATE MATERIALIZED VIEW")
    }
    stored = targets & creates.keys()  # a Null table (interaction_values) stores nothing
    without = {t for t in stored if "non_replicated_deduplication_window = 1000" not in creates[t]}
    assert len(stored) >= 10 and not without
