"""What the raw sink inserts, column by column (``writer.insert_columns``, sent
``column_oriented``, ``LowCardinality`` columns as their inner type): the same values in
every column of every raw table as rows of ``datetime`` values inserted as they are."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import insert_columns, insert_rows
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.rows import COLUMNS, MS_TIMES
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        # A sensitive field the mixed items state: its words go to stated_sensitive.
        "signals": {"sensitive": ["person.clothing_size"]},
        "spaces": {
            "acme": {"features": ["signals", "turns", "claims"]},
            "lumen": {"features": ["signals", "turns"]},
            "vida": {"features": ["signals", "turns"]},
        },
    }
)


class _Record:
    def __init__(self, offset: int, value: bytes) -> None:
        self.topic, self.partition, self.offset, self.value, self.key = (
            "in",
            offset % 3,
            offset,
            value,
            None,
        )


def test_every_raw_table_gets_the_values_rows_of_datetimes_gave(store: Store) -> None:
    lines = mixed_items(n=1_500, bad=60, seed=11).lines
    prepared = prepare_batch(
        [_Record(o, line) for o, line in enumerate(lines)], SETTINGS, TopicNames("t"), 1 << 20
    )
    assert set(prepared.rows) == set(RAW_TABLES), "a mixed batch fills every raw table"
    for table in RAW_TABLES:
        rows = prepared.rows[table]
        columns = [*COLUMNS[table], "_insert"]
        copies = ("as_dicts", "as_rows", "as_columns")
        for copy in copies:
            store.command(f"CREATE TABLE {table}_{copy} AS {table}")
        store.insert(
            f"{table}_as_dicts", [[*(r[c] for c in COLUMNS[table]), 7] for r in rows], columns
        )
        store.insert(f"{table}_as_rows", insert_rows(table, rows, 7), columns)
        store.insert(
            f"{table}_as_columns", insert_columns(table, rows, 7), columns, column_oriented=True
        )
        selected = ", ".join(f"toString(`{c}`)" for c in columns)
        old, *new = (
            store.query(f"SELECT {selected} FROM {table}_{copy} ORDER BY ALL").rows
            for copy in copies
        )
        assert len(old) == len(rows) > 0, table
        assert new == [old, old], table


def test_the_times_inserted_as_milliseconds_are_the_rows_times(store: Store) -> None:
    times = [
        datetime(2026, 9, 29, 14, 2, 11, 999_999, tzinfo=UTC),
        datetime.fromisoformat("2026-09-29T11:02:11.000999-03:00"),
        datetime(1969, 12, 31, 23, 59, 59, 500_000, tzinfo=UTC),
        datetime(2299, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC),
    ]
    rows = [
        {c: "" for c in COLUMNS["idempotency_keys"]}
        | {"_topic": "in", "_partition": 0, "_offset": i, "ingested_at": t, "kept_from": t}
        for i, t in enumerate(times)
    ]
    # The table's TTL (46 days on kept_from) would let a background merge drop the rows
    # of 1969 and 2026-09 before the query (the test failed so now and then): this test
    # is about the values' encoding, not retention.
    store.command("ALTER TABLE idempotency_keys REMOVE TTL")
    store.insert(
        "idempotency_keys",
        insert_rows("idempotency_keys", rows, 9),
        [*COLUMNS["idempotency_keys"], "_insert"],
    )
    got = store.query(
        "SELECT toString(ingested_at), _insert FROM idempotency_keys ORDER BY _offset"
    ).rows
    assert got == [
        ("2026-09-29 14:02:11.999", 9),
        ("2026-09-29 14:02:11.000", 9),
        ("1969-12-31 23:59:59.500", 9),
        ("2299-12-31 23:59:59.999", 9),
    ]


def test_the_millisecond_columns_are_datetime64_3_utc_in_every_raw_table(store: Store) -> None:
    for table in RAW_TABLES:
        types = dict(
            store.query(
                "SELECT name, type FROM system.columns WHERE database = currentDatabase() "
                "AND table = {table:String}",
                {"table": table},
            ).rows
        )
        times = {c for c in COLUMNS[table] if "DateTime" in types[c]}
        assert times <= MS_TIMES, (table, times)
        for column in MS_TIMES & set(COLUMNS[table]):
            assert types[column] == "DateTime64(3, 'UTC')", (table, column)
