"""Store.insert gives clickhouse-connect the columns' types from a cache (no DESCRIBE per
insert): the cache follows a table that changes, and a value of the wrong type is refused."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.store import Store

pytestmark = pytest.mark.integration


@pytest.fixture
def store(chdb_path: Path) -> Iterator[Store]:
    """A store in a database of its own, without the migrations (these tests make their
    own tables)."""
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    yield store
    store.command(f"DROP DATABASE IF EXISTS {store.database}")
    store.close()


def _describes(store: Store) -> list[str]:
    """Record every statement the store's client sends to chDB (the DESCRIBEs)."""
    backend = store._client._backend
    conn = backend._handle.conn
    sent: list[str] = []

    class Recording:
        def __getattr__(self, name: str) -> object:
            return getattr(conn, name)

        def query(self, sql: str | bytes, *args: object, **kwargs: object) -> object:
            sent.append(sql.decode() if isinstance(sql, bytes) else sql)
            return conn.query(sql, *args, **kwargs)

    backend._handle.conn = Recording()
    return sent


def test_no_describe_per_insert(store: Store) -> None:
    store.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    sent = _describes(store)
    for i in range(3):
        store.insert("t", [(i, f"x{i}")], ["a", "b"])
    assert not [s for s in sent if s.lstrip().upper().startswith("DESCRIBE")]
    assert sum("system.columns" in s for s in sent) == 1  # once for the table
    assert store.query("SELECT a, b FROM t ORDER BY a").rows == [(0, "x0"), (1, "x1"), (2, "x2")]


def test_insert_after_a_migration_that_adds_a_column(store: Store) -> None:
    store.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    store.insert("t", [(1, "x")], ["a", "b"])
    store.command("ALTER TABLE t ADD COLUMN c Nullable(Float64) DEFAULT 2.5")
    store.insert("t", [(2, "y", 0.5)], ["a", "b", "c"])
    store.insert("t", [(3, "z")], ["a", "b"])
    assert store.query("SELECT a, b, c FROM t ORDER BY a").rows == [
        (1, "x", 2.5),
        (2, "y", 0.5),
        (3, "z", 2.5),
    ]


def test_insert_after_another_process_changes_the_table(store: Store) -> None:
    """Another store (a second worker's migration) changes a column's type: the first
    insert may fail, loudly; the next reads the types again and lands."""
    store.command("CREATE TABLE t (a UInt64, b UInt8) ENGINE = MergeTree ORDER BY a")
    store.insert("t", [(1, 7)], ["a", "b"])
    other = Store(store.dsn, store.database)
    other.command("ALTER TABLE t MODIFY COLUMN b String")
    other.close()
    with pytest.raises(ValueError, match="invalid literal"):
        store.insert("t", [(2, "two")], ["a", "b"])  # b still typed UInt8 here
    store.insert("t", [(2, "two")], ["a", "b"])
    assert store.query("SELECT a, b FROM t ORDER BY a").rows == [(1, "7"), (2, "two")]


def test_a_wrong_type_fails_loudly(store: Store) -> None:
    store.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    store.insert("t", [(1, "x")], ["a", "b"])
    with pytest.raises(ValueError, match="invalid literal for int"):
        store.insert("t", [("not a number", "y")], ["a", "b"])
    assert store.query("SELECT count() FROM t").rows == [(1,)]


def test_an_unknown_column_fails_loudly(store: Store) -> None:
    store.command("CREATE TABLE t (a UInt64) ENGINE = MergeTree ORDER BY a")
    with pytest.raises(Exception, match="nope"):
        store.insert("t", [(1, 2)], ["a", "nope"])
    assert store.query("SELECT count() FROM t").rows == [(0,)]


def test_rows_as_columns(store: Store) -> None:
    store.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    store.insert("t", [[1, 2, 3], ["x", "y", "z"]], ["a", "b"], column_oriented=True)
    assert store.query("SELECT a, b FROM t ORDER BY a").rows == [(1, "x"), (2, "y"), (3, "z")]
