"""What landed: rows per raw table and dead letters by reason."""

from __future__ import annotations

from collections.abc import Callable

from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import QueryResult
from turnstream.core.sql_gate import PRIVATE_TABLES

__all__ = ["DEAD_LETTERS_SQL", "SUMMARY_SQL", "table_counts"]

#: The raw tables shown in the summary (idempotency keys are bookkeeping; the tables no
#: analyst reads are left out: the summary runs as an analyst's SQL).
SUMMARY_TABLES = tuple(t for t in RAW_TABLES if t != "idempotency_keys" and t not in PRIVATE_TABLES)
SUMMARY_SQL = " UNION ALL ".join(
    f"SELECT '{t}' AS table, count() AS rows FROM {t}" for t in SUMMARY_TABLES
)
DEAD_LETTERS_SQL = (
    "SELECT reason, count() AS dead_letters, anyIf(field_path, field_path != '') AS example_field "
    "FROM dead_letters GROUP BY reason ORDER BY dead_letters DESC, reason"
)


def table_counts(query: Callable[[str], QueryResult]) -> dict[str, int]:
    """Rows per raw table, in schema order."""
    counts = {t: int(n) for t, n in query(SUMMARY_SQL).rows}
    return {t: counts.get(t, 0) for t in SUMMARY_TABLES}
