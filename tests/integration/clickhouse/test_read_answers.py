"""What the read side asks the store, on real chDB: an analyst's statements whose answer
the driver cannot decode are a StoreError (the route's 400), never another exception
(a 500); a person is known in a space by their rows, and not once erased."""

from __future__ import annotations

import pytest

from turnstream.adapters.clickhouse.analyst_sql import AnalystSql
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.profile_reads import profile_known
from turnstream.adapters.clickhouse.review_requests import open_review
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import SqlSettings
from turnstream.errors import SqlRefused, StoreError
from turnstream.models.requests import ReviewRequestIn

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 AS a; SELECT 1 AS a, 2 AS b",  # IndexError in the driver
        "SELECT 1 AS a; SELECT 'x' AS b, 2 AS c",  # StreamFailureError while reading rows
        "SELECT 'x' AS b, 2 AS c; SELECT 1 AS a",
    ],
)
def test_statements_of_different_columns_are_a_store_error(store: Store, sql: str) -> None:
    gate = AnalystSql(store.dsn, store.database, SqlSettings())
    try:
        # Several statements: refused by the SQL gate before any runs (a 400 too).
        with pytest.raises((StoreError, SqlRefused)):
            gate.run(sql, {})
        assert gate.run("SELECT 1 AS one", {}).rows == [(1,)]  # the lane goes on
    finally:
        gate.close()


def test_non_finite_numbers_come_back_as_floats(store: Store) -> None:
    gate = AnalystSql(store.dsn, store.database, SqlSettings())
    try:
        result = gate.run("SELECT nan AS n, inf AS i, -inf AS m", {})
    finally:
        gate.close()
    n, i, m = result.rows[0]
    assert n != n and i == float("inf") and m == float("-inf")


def test_a_person_is_known_by_their_rows_in_their_space_only(store: Store) -> None:
    assert not profile_known(store, "acme", "p_kim")
    store.insert(
        "stated",
        [["s1", "acme", "p_kim", "self", "preference", "item_variant.color", "{}", "", "o",
          "2026-01-01 00:00:00.000"]],
        ["id", "space_id", "profile_id", "for", "kind", "attr", "payload", "session_id",
         "origin", "occurred_at"],
    )  # fmt: skip
    assert profile_known(store, "acme", "p_kim")
    assert not profile_known(store, "lumen", "p_kim")
    assert not profile_known(store, "acme", "p_ki")  # no prefix match
    assert not profile_known(store, "acme", "p_kim' OR '1'='1")  # a parameter, not SQL
    # A review request alone does not make a person known: an erase keeps it.
    open_review(store, "p_kim", ReviewRequestIn(space_id="acme", receipts=["r1"]))
    erase_subjects(store, [("acme", "p_kim")])
    assert not profile_known(store, "acme", "p_kim")
