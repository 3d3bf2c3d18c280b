"""An erasure removes the subject from every table that holds a profile id."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.sinks.erasure import erase_subject, tables_with_profiles
from turnstream.sinks.store import Store

pytestmark = pytest.mark.integration


def test_every_table_with_profiles_is_emptied_of_the_subject_but_review_requests(
    store: Store,
) -> None:
    tables = tables_with_profiles(store)
    assert {"turns", "interactions", "outcomes", "inferences", "stated"} <= set(tables)
    now = datetime.now(UTC)
    for table in tables:
        columns = [r[0] for r in store.query(f"DESCRIBE TABLE {table}").rows]
        types = dict(store.query(f"SELECT name, type FROM system.columns WHERE database = "
                                 f"'{store.database}' AND table = '{table}'").rows)  # fmt: skip
        for profile in ("p_gone", "p_stays"):
            row = {c: _zero(types[c], now) for c in columns}
            row.update(space_id="acme", profile_id=profile)
            store.insert(table, [[row[c] for c in columns]], columns)
    erasure = erase_subject(store, "acme", "p_gone")
    assert erasure.retained == {"review_requests": 1}
    for table in tables:
        left = dict(store.query(f"SELECT profile_id, count() FROM {table} GROUP BY 1").rows)
        expected = {"p_stays": 1, "p_gone": 1} if table == "review_requests" else {"p_stays": 1}
        assert left == expected, table


def _zero(kind: str, now: datetime):  # type: ignore[no-untyped-def]
    if kind.startswith(("Array", "Map")):
        return [] if kind.startswith("Array") else {}
    if "DateTime" in kind:
        return None if kind.startswith("Nullable") else now
    if "Int" in kind or "Float" in kind or kind == "Bool":
        return 0
    return ""
