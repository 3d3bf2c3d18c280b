"""The table registry: one declaration per table, and what is made from it."""

from __future__ import annotations

from turnstream.adapters.clickhouse.catalog import CATALOG, INTERNAL
from turnstream.core.rows import COLUMNS
from turnstream.core.tables import (
    ENVELOPE,
    RETENTION,
    SOURCE,
    TABLES,
    columns_ddl,
    table,
    ttl_ddl,
)
from turnstream.core.time_edges import RAW_KEEP_DAYS
from turnstream.models.common import Envelope


def test_each_table_is_declared_once_with_each_column_once() -> None:
    names = [t.name for t in TABLES]
    assert len(names) == len(set(names))
    for declared in TABLES:
        columns = [c.name for c in declared.columns]
        assert len(columns) == len(set(columns)), declared.name
        assert all(c.type and c.description for c in declared.columns), declared.name


def test_the_catalog_and_the_internal_objects_are_the_registry_split_in_two() -> None:
    assert set(CATALOG) | set(INTERNAL) == {t.name for t in TABLES}
    assert not set(CATALOG) & set(INTERNAL)
    assert CATALOG["turns"].columns["turn_id"] == "the turn"


def test_the_envelope_is_the_wire_envelope_s_fields_a_row_keeps() -> None:
    # The wire's handle never reaches a row (the profile id does); its type is the item's table.
    assert {c.name for c in ENVELOPE} == set(Envelope.model_fields) - {"handle", "type"}


def test_every_column_the_sink_inserts_is_declared() -> None:
    for name, inserted in COLUMNS.items():
        assert set(inserted) <= {c.name for c in table(name).columns}, name
    envelope, source = [c.name for c in ENVELOPE], [c.name for c in SOURCE]
    assert COLUMNS["turns"][: len(envelope)] == envelope
    assert COLUMNS["commands"][-len(source) :] == source


def test_the_raw_window_is_the_interactions_retention() -> None:
    assert RETENTION["interactions"].days == RAW_KEEP_DAYS
    assert ttl_ddl("interactions") == f"TTL toDateTime(occurred_at) + INTERVAL {RAW_KEEP_DAYS} DAY"
    assert ttl_ddl("priors") == "TTL window_end + INTERVAL 400 DAY"
    assert ttl_ddl("turns") == ""


def test_columns_ddl_lists_the_declared_columns() -> None:
    ddl = columns_ddl("schema_migrations").splitlines()
    assert ddl == [f"    {c.name} {c.type}," for c in table("schema_migrations").columns[:-1]] + [
        f"    {c.name} {c.type}" for c in table("schema_migrations").columns[-1:]
    ]
