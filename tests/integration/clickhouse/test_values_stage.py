"""Migration 24: a page's items and shown values parsed once (into the Null table
`interaction_values`) for value_daily, ref_values_daily and sensitive_daily gives the
rows migration 23's views gave, in the daily aggregates and in the weekly roll-ups they
feed; and a store at migration 23 that already holds rows migrates with its views
replaced and its aggregates untouched.

Two stores, one at migration 23, one at the latest, take the same rows through the real
sink: a mixed batch as producers send it and the hand-made pages at the contract's edges
of tests/integration/clickhouse/test_value_daily_view.py (values in every JSON kind and
language, a window cutting the page, a page starting past position 1, a sensitive type
and a sensitive field, engagements on a sensitive object, `cart`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.integration.clickhouse.test_value_daily_view import (
    SETTINGS,
    START,
    _edges,
    _merged,
    _page,
    _rows,
    with_language_columns,
)
from turnstream.adapters.clickhouse.schema import MIGRATIONS, apply_migrations
from turnstream.adapters.clickhouse.sensitivity import write_sensitive
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.core.rows import Rows
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.integration

_VIEWS = (
    "SELECT name FROM system.tables WHERE database = currentDatabase() "
    "AND engine = 'MaterializedView' ORDER BY name"
)
#: Every table the views on interactions write, as the engine merges it.
_AGGREGATES = {
    "value_daily": None,
    "value_weekly": None,
    "ref_values_daily": "SELECT space_id, attr, ref, value, day, sum(presentations) "
    "FROM ref_values_daily GROUP BY ALL ORDER BY ALL",
    "ref_values_weekly": "SELECT space_id, attr, ref, value, week, sum(presentations) "
    "FROM ref_values_weekly GROUP BY ALL ORDER BY ALL",
    "sensitive_daily": "SELECT space_id, name, day, sum(presented), sum(engaged) "
    "FROM sensitive_daily GROUP BY ALL ORDER BY ALL",
    "interactions_daily": "SELECT space_id, day, kind, sum(rows) FROM interactions_daily "
    "GROUP BY ALL ORDER BY ALL",
}


def _more_edges() -> list[bytes]:
    """A sensitive field (item_variant.material) on an object of a type not sensitive,
    inside the visible window and outside it; an object of a sensitive type outside it."""
    refs = ["bag:acme:9", "item_variant:acme:7", "health_plan:acme:8"]
    return [
        _page(100 + k, f"pessoa{k}", START - timedelta(days=k), refs, first=1, visible_k=k + 1)
        for k in range(2)
    ]


def _store(chdb_path: Path, until: int | None) -> Store:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    apply_migrations(store, until=until)
    with_language_columns(store)
    write_sensitive(store, SETTINGS.sensitive_names())
    return store


def _drop(*stores: Store) -> None:
    for store in stores:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()


def _aggregates(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    out = {}
    for table, query in _AGGREGATES.items():
        if query is None:
            out[table] = _merged(store, table, "week" if table.endswith("weekly") else "day")
        else:
            out[table] = store.query(query).rows
    return out


def _write(store: Store, rows: Rows, lo: int, hi: int, cuts: int = 2) -> None:
    """The rows of offsets [lo, hi) through the real sink in ``cuts`` batches (the views
    run once per insert)."""
    sink = RawSink(store)
    size = -(-(hi - lo) // cuts)
    for at in range(lo, hi, size):
        end = min(at + size, hi)
        sink.write({t: [r for r in rs if at <= r["_offset"] < end] for t, rs in rows.items()})


@pytest.fixture
def stores(chdb_path: Path) -> Iterator[tuple[Store, Store]]:
    """A store at migration 23 and one at the latest."""
    old, new = _store(chdb_path, 23), _store(chdb_path, None)
    try:
        yield old, new
    finally:
        _drop(old, new)


def test_parsed_once_gives_the_rows_of_migration_23(stores: tuple[Store, Store]) -> None:
    old, new = stores
    assert "interaction_values_mv" not in {n for (n,) in old.query(_VIEWS).rows}
    assert "interaction_values_mv" in {n for (n,) in new.query(_VIEWS).rows}
    lines = [*mixed_items(n=1500, bad=15, seed=11, start=START).lines, *_edges(), *_more_edges()]
    rows = _rows(lines)
    for store in (old, new):
        _write(store, rows, 0, len(lines))
    got, want = _aggregates(new), _aggregates(old)
    for table in _AGGREGATES:
        assert (table, got[table]) == (table, want[table])
    # What the comparison covers: exposures with people, engagements, objects' values,
    # sensitive names counted, and both weeks' roll-ups filled.
    daily = got["value_daily"]
    assert any(r[5] and r[6] > 0 for r in daily)
    assert any(r[7] > 0 and r[8] > r[7] * 1_000_000 for r in daily)  # a cart among them
    assert {'preto "fosco" ção', "negro ñandú 🙂", "true"} <= {
        r[3] for r in got["ref_values_daily"]
    }
    assert len(got["ref_values_daily"]) > 100
    sensitive = got["sensitive_daily"]
    assert {"health_plan", "item_variant.material"} <= {r[1] for r in sensitive}
    assert any(r[3] > 0 for r in sensitive) and any(r[4] > 0 for r in sensitive)
    assert got["ref_values_weekly"] and got["value_weekly"]
    # The Null table holds nothing.
    assert new.scalar("SELECT count() FROM interaction_values") == 0


def test_the_same_batch_again_counts_once_behind_the_null_table(
    stores: tuple[Store, Store],
) -> None:
    """A block pushed again (a retry, a catch-up) through the Null table: value_daily and
    ref_values_daily drop it by their own deduplication window, so neither they nor the
    weekly roll-ups count it twice."""
    _, new = stores
    lines = [*_edges(), *_more_edges()]
    rows = _rows(lines)
    _write(new, rows, 0, len(lines), cuts=1)
    first = _aggregates(new)
    _write(new, rows, 0, len(lines), cuts=1)  # a fresh sink: the marks it reads skip the batch
    assert _aggregates(new) == first


def test_a_store_at_23_migrates_views_replaced_aggregates_untouched(chdb_path: Path) -> None:
    old, fresh = _store(chdb_path, 23), _store(chdb_path, None)
    try:
        lines = list(mixed_items(n=600, bad=6, seed=5, start=START).lines) + _edges()
        rows, half = _rows(lines), len(lines) // 2
        _write(old, rows, 0, half)
        before = _aggregates(old)
        views = {n for (n,) in old.query(_VIEWS).rows}
        assert {"value_daily_mv", "ref_values_daily_mv"} <= views
        # 24 and every later migration (summary_repairs, issue 35, among them)
        assert apply_migrations(old) == [m.version for m in MIGRATIONS if m.version >= 24]
        after = {n for (n,) in old.query(_VIEWS).rows}
        replaced = {"sensitive_daily_presented_mv", "sensitive_daily_engaged_mv"}
        assert replaced <= views
        assert after == views - replaced | {"interaction_values_mv", "sensitive_daily_mv"}
        assert ".interaction_values WHERE" in old.scalar(
            "SELECT create_table_query FROM system.tables "
            "WHERE database = currentDatabase() AND name = 'value_daily_mv'"
        )
        assert _aggregates(old) == before  # nothing stored changes
        # New rows feed the aggregates as a store made at 24 takes them all.
        _write(fresh, rows, 0, half)
        _write(old, rows, half, len(lines))
        _write(fresh, rows, half, len(lines))
        assert _aggregates(old) == _aggregates(fresh)
    finally:
        _drop(old, fresh)
