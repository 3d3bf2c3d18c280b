"""A store failure between a raw table's part and its views' parts loses nothing.

ClickHouse commits an insert's part in the raw table, then each materialized view's part;
a crash (or any failure) in between leaves the raw table holding the batch and a view's
target without it. Reproduced here without a SIGKILL lottery, on real chDB and the real
schema: a constraint on the claims view's target that refuses one marked row stands for
the store failing after the raw part is written (the raw part stays, the view's part is
refused). The fault then goes away, the
sink starts again (or retries, as the ingest driver does) and the worker replays the
batch, as it is or cut differently: every summary must come out exact. The sink repairs
the summaries from the raw rows (adapters/clickhouse/summaries.py; tests/integration/clickhouse/
test_summary_repair.py for every summary and the chained roll-ups); it no longer pushes
the insert through the views again.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tests.integration.clickhouse.test_context_use import CLAIMS, _all, _check, _rows
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink, insert_id, token_for
from turnstream.core.rows import COLUMNS, Rows
from turnstream.errors import StoreError

pytestmark = pytest.mark.integration


def _fail_claims_view_of(store: Store, source: str) -> Callable[[], None]:
    """Make the claims view's part fail for a batch holding a claim from ``source`` (a
    constraint on the view's target), after the raw part is written; returns what takes
    the fault away."""
    store.command(
        "ALTER TABLE claims_minute ADD CONSTRAINT injected_fault CHECK source != {source:String}",
        parameters={"source": source},
    )

    def heal() -> None:
        store.command("ALTER TABLE claims_minute DROP CONSTRAINT injected_fault")

    return heal


def _cut(rows: Rows, start: int, stop: int | None = None) -> Rows:
    """The rows of turns ``start:stop`` (offsets ``start`` on), as a batch cut there."""
    hi = stop if stop is not None else 1 << 62
    return {t: [r for r in rs if start <= r["_offset"] < hi] for t, rs in rows.items()}


def _raw_failed_then_healed(store: Store, sink: RawSink | None = None) -> Rows:
    rows = _rows()
    heal = _fail_claims_view_of(store, "whatsapp")
    with pytest.raises(StoreError, match="injected_fault"):
        (sink or RawSink(store)).write(rows)
    # The hole: the raw table holds every claim of the batch, its summary none of them.
    assert store.scalar("SELECT count() FROM turn_claims") == 9
    assert store.scalar("SELECT count() FROM claims_minute") == 0
    heal()
    return rows


def test_a_restart_replaying_the_same_batch_fills_the_views(store: Store) -> None:
    rows = _raw_failed_then_healed(store)
    RawSink(store).write(rows)
    _check(store)


def test_a_restart_replaying_the_batch_cut_differently_fills_the_views(store: Store) -> None:
    rows = _raw_failed_then_healed(store)
    restarted = RawSink(store)
    restarted.write(_cut(rows, 0, 2))
    restarted.write(_cut(rows, 2))
    _check(store)


def test_a_first_batch_without_claims_still_fills_the_claims_view(store: Store) -> None:
    """The catch-up does not wait for the table's next rows: the replay's first batch
    here is the lumen turn alone, whose space keeps no claims."""
    rows = _raw_failed_then_healed(store)
    first = _cut(rows, 4)
    assert not first.get("turn_claims")
    RawSink(store).write(first)
    assert _all(store, "SELECT * FROM context_use_claims ORDER BY ALL") == CLAIMS


def test_a_retry_in_the_same_process_fills_the_views(store: Store) -> None:
    rows = _rows()
    heal = _fail_claims_view_of(store, "whatsapp")
    sink = RawSink(store)
    with pytest.raises(StoreError):
        sink.write(rows)
    heal()
    sink.forget()  # what the ingest driver does on a failed store call
    sink.write(rows)
    _check(store)


def test_starts_after_the_catch_up_count_nothing_twice(
    store: Store, store_factory: Callable[[], Store]
) -> None:
    rows = _raw_failed_then_healed(store)
    for _ in range(3):
        RawSink(store).write(rows)
        RawSink(store).write(_cut(rows, 1))
    _check(store)
    clean = store_factory()
    RawSink(clean).write(rows)
    for table in RAW_TABLES:
        count = f"SELECT count() FROM {table}"
        assert (table, store.scalar(count)) == (table, clean.scalar(count))


def test_the_same_token_again_is_dropped_by_the_table_and_taken_by_a_view_lacking_it(
    store: Store,
) -> None:
    """A retry of an insert with its token, as chDB 26.9 does it: the raw block is a
    duplicate, the views are still pushed to and each drops or takes the block on its
    own (``deduplicate_blocks_in_dependent_materialized_views``, set on every insert).
    The sink's repair after a crash does not rest on it (a SIGKILL can lose a
    deduplication log entry)."""
    sink = RawSink(store)
    rows = _raw_failed_then_healed(store, sink)["turn_claims"]
    columns = COLUMNS["turn_claims"]
    token = token_for("turn_claims", rows, sink.life)  # the retry of the sink's insert
    block = [[*(r[c] for c in columns), insert_id(token)] for r in rows]
    for _ in range(2):
        store.insert("turn_claims", block, [*columns, "_insert"], token)
        assert store.scalar("SELECT count() FROM turn_claims") == 9
        assert store.scalar("SELECT sum(claims) FROM claims_minute") == 9


def test_every_view_on_a_raw_table_writes_where_a_block_again_is_dropped(store: Store) -> None:
    """A retry with the same token may reach a view that holds the block: its target
    drops it (a deduplication window) or replaces rows by key (ReplacingMergeTree)."""
    checked = []
    sources = [(table, table) for table in RAW_TABLES]
    while sources:
        table, source = sources.pop()
        views = store.scalar(
            "SELECT dependencies_table FROM system.tables WHERE database = currentDatabase() "
            "AND name = {name:String}",
            {"name": source},
        )
        for view in views:
            create = store.scalar(
                "SELECT create_table_query FROM system.tables "
                "WHERE database = currentDatabase() AND name = {name:String}",
                {"name": view},
            )
            target = re.search(r"\bTO\s+(?:\w+\.)?(\w+)", create).group(1)
            target_create = store.scalar(
                "SELECT create_table_query FROM system.tables "
                "WHERE database = currentDatabase() AND name = {name:String}",
                {"name": target},
            )
            if re.search(r"ENGINE = `?Null\b", target_create):
                # Nothing stored: the rows pass to the views on it, whose targets must
                # drop the block again themselves (migration 24's interaction_values):
                # checked next.
                sources.append((table, target))
                checked.append((table, view, target, True))
                continue
            safe = "non_replicated_deduplication_window" in target_create or (
                "ReplacingMergeTree" in target_create
            )
            checked.append((table, view, target, safe))
    assert len(checked) >= 10  # the roll-ups, the priors' views, stated's
    assert [c for c in checked if not c[3]] == []


def test_the_same_batch_again_counts_once_in_the_chained_weekly_roll_ups(store: Store) -> None:
    """A block pushed again (a retry, a catch-up) goes through the raw table's views;
    the weekly roll-ups chained on the daily aggregates (migration 20), which have no
    deduplication window of their own, must not count it twice: a block their source
    drops as a repeat does not reach them (chDB 26.9)."""
    from tests.integration.clickhouse.test_raw_sink import _rows as _interactions

    def sums() -> tuple[int, int]:
        return (
            store.scalar("SELECT sum(events) FROM value_daily"),
            store.scalar("SELECT sum(events) FROM value_weekly"),
        )

    rows = _interactions(range(0, 40))
    RawSink(store).write(rows)
    first = sums()
    assert first[0] > 0 and first[0] == first[1]
    RawSink(store).write(rows)  # a fresh sink: the marks it reads skip the batch
    assert sums() == first


def test_a_table_no_view_reads_is_not_pushed_again_when_it_lost_the_insert_s_token(
    store: Store,
) -> None:
    """A SIGKILL between an insert's part and its deduplication log entry leaves the rows
    in the table and their token unknown to it. A table no view reads has nothing to
    catch up, so it is not pushed again (the push would land the rows twice)."""
    rows = _rows()
    table = "idempotency_keys"
    assert not store.scalar(
        "SELECT length(dependencies_table) FROM system.tables "
        "WHERE database = currentDatabase() AND name = {table:String}",
        {"table": table},
    )
    columns = COLUMNS[table]
    token = token_for(table, rows[table])
    block = [[*(r[c] for c in columns), insert_id(token)] for r in rows[table]]
    store.insert(table, block, [*columns, "_insert"], None)  # the part, without its token
    for _ in range(2):  # a start, then another one
        RawSink(store).write(rows)
        assert store.scalar(f"SELECT count() FROM {table}") == len(rows[table])
    _check(store)
