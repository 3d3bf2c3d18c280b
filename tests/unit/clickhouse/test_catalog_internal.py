"""The tables page documents every internal object and every value set (issue 39)."""

from __future__ import annotations

import pytest

from turnstream.adapters.clickhouse.catalog import CATALOG, render_markdown
from turnstream.core.ingest import Reason
from turnstream.core.tables import table
from turnstream.errors import StoreError
from turnstream.models import Verdict


def _describe(name: str) -> list[tuple[str, str]]:
    return [(c.name, c.type) for c in table(name).columns]


def test_an_undescribed_internal_table_stops_the_page() -> None:
    objects = [("stray", "MergeTree", "CREATE TABLE stray (x UInt8)", [])]
    with pytest.raises(StoreError, match="stray: no description"):
        render_markdown(_describe, lambda: objects)


def test_views_and_null_tables_are_described_from_the_schema() -> None:
    objects = [
        ("feed", "Null", "CREATE TABLE feed (x UInt8) ENGINE = Null", ["feed_mv"]),
        ("feed_mv", "MaterializedView",
         "CREATE MATERIALIZED VIEW db.feed_mv TO db.counts (x UInt8) AS SELECT x FROM "
         "db.feed JOIN db.other USING x", []),
    ]  # fmt: skip
    page = render_markdown(_describe, lambda: objects)
    assert "| `feed_mv` | MaterializedView | writes into `counts` each insert into `feed` |" in page
    assert "| `feed` | Null | a Null table: it keeps nothing." in page


def test_every_verdict_and_dead_letter_reason_is_on_the_page() -> None:
    page = render_markdown(_describe, lambda: [])
    sets = page[page.index("## Value sets") :]
    for value in [*Verdict, *Reason]:
        assert f"`{value.value}`" in sets
    assert "`past_retention`" in sets and "`sample_ratio`" in sets


def test_a_type_other_than_the_declared_one_stops_the_page() -> None:
    def describe(name: str) -> list[tuple[str, str]]:
        live = _describe(name)
        return [(c, "UInt8") if c == "turn_id" else (c, t) for c, t in live]

    assert "turn_id" in CATALOG["turns"].columns
    with pytest.raises(StoreError, match=r"turns.turn_id: UInt8 in the schema, String in"):
        render_markdown(describe, lambda: [])
