"""Retention check: what each table keeps against what it promises
(``core/tables.RETENTION``), and whether the aggregates cover expired days.

A table whose oldest row is older than its window (by the as-of day) holds evidence past
its promise: the report lists it and ``turnstream retention check`` exits 1. The
retention job (nightly) first folds and deletes what aged out
(``adapters/clickhouse/retention.py``).

Raw ``interactions`` are kept 45 days; the priors need 90. For every day of
``[today - 90, today - 45)`` on which the raw table held presented or engaged rows (the
``interactions_daily`` ledger says so after the raw rows are gone; the raw table itself
for days it still holds), ``value_daily`` must hold that day's exposures and
engagements. A day where it does not is a gap: priors for the next 90 days under-count
it, and the raw rows that could rebuild it are gone or about to go.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.clickhouse.store import Store, store_time
from turnstream.core.tables import RETENTION
from turnstream.core.time_edges import RAW_KEEP_DAYS

__all__ = [
    "AGGREGATE_TABLES",
    "EVIDENCE_TABLES",
    "PRIOR_DAYS",
    "RAW_DAYS",
    "DayCounts",
    "DayCoverage",
    "RetentionReport",
    "TableRetention",
    "coverage",
    "expired_window",
    "retention_check",
    "time_column",
    "ttl_of",
]

#: Days the raw interactions are kept, and the days the priors need.
RAW_DAYS = RAW_KEEP_DAYS
PRIOR_DAYS = 90

#: The aggregates that outlive the raw tables, with the column that dates their rows.
AGGREGATE_TABLES: dict[str, str] = {
    "value_daily": "day",
    "ref_values_daily": "day",
    "value_weekly": "week",
    "ref_values_weekly": "week",
    "interactions_daily": "day",
    "sensitive_daily": "day",
    "priors": "window_end",
    "field_priors": "window_end",
}
_INGESTED = frozenset({"dead_letters", "idempotency_keys"})
#: The per-person evidence and the outboxes, checked beside the raw tables and aggregates.
EVIDENCE_TABLES = (
    "exposure_items",
    "signal_state",
    "webhook_events",
    "webhook_deliveries",
    "webhook_attempts",
    "erase_subjects",
    "erase_tombstones",
)
_TTL = re.compile(r"\bTTL\s+(.+?)(?:\s+SETTINGS\b|$)", re.S)


def time_column(table: str) -> str:
    """The column that dates a table's rows."""
    promise = RETENTION.get(table)
    if promise is not None and promise.dated_by is not None:
        return promise.dated_by
    if table in AGGREGATE_TABLES:
        return AGGREGATE_TABLES[table]
    return "ingested_at" if table in _INGESTED else "occurred_at"


def ttl_of(create_table_query: str) -> str | None:
    """The TTL expression of a ``CREATE TABLE`` statement, or None."""
    found = _TTL.search(create_table_query)
    return found.group(1).strip() if found else None


def expired_window(today: date) -> tuple[date, date]:
    """The days whose raw rows have expired but which priors still need:
    ``[today - 90, today - 45)``."""
    return today - timedelta(days=PRIOR_DAYS), today - timedelta(days=RAW_DAYS)


@dataclass(frozen=True)
class TableRetention:
    """What one table keeps."""

    table: str
    rows: int
    oldest: date | datetime | None
    newest: date | datetime | None
    dated_by: str
    ttl: str | None
    #: The promise (days; None: kept) and whether the oldest row is past it.
    window_days: int | None = None
    past_window: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "rows": self.rows,
            "oldest": _iso(self.oldest),
            "newest": _iso(self.newest),
            "dated_by": self.dated_by,
            "kept_days": self.window_days,
            "past_window": self.past_window,
            "ttl": self.ttl,
        }


@dataclass(frozen=True)
class DayCounts:
    """One space's day: presented and engaged rows (raw), and the aggregated values."""

    presented: int = 0
    engaged: int = 0
    exposed_values: int = 0
    engaged_values: int = 0


@dataclass(frozen=True)
class DayCoverage:
    """Whether the aggregates hold one space's expired day."""

    space_id: str
    day: date
    presented: int
    engaged: int
    exposed_values: int
    engaged_values: int

    @property
    def covered(self) -> bool:
        """Presented rows left exposed values, and engaged rows engaged values."""
        return (self.presented == 0 or self.exposed_values > 0) and (
            self.engaged == 0 or self.engaged_values > 0
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "space_id": self.space_id,
            "day": self.day.isoformat(),
            "presented": self.presented,
            "engaged": self.engaged,
            "exposed_values": self.exposed_values,
            "engaged_values": self.engaged_values,
            "covered": self.covered,
        }


def coverage(counts: Mapping[tuple[str, date], DayCounts]) -> list[DayCoverage]:
    """Each ``(space, day)`` that had presented or engaged rows, by space then day."""
    return [
        DayCoverage(space, day, c.presented, c.engaged, c.exposed_values, c.engaged_values)
        for (space, day), c in sorted(counts.items())
        if c.presented or c.engaged
    ]


@dataclass(frozen=True)
class RetentionReport:
    """Per table what it keeps; per space and expired day whether the aggregates hold it."""

    today: date
    window_start: date
    window_end: date
    tables: list[TableRetention] = field(default_factory=list)
    days: list[DayCoverage] = field(default_factory=list)

    @property
    def past_window(self) -> list[TableRetention]:
        """The tables holding rows older than they promise to keep."""
        return [t for t in self.tables if t.past_window]

    @property
    def gaps(self) -> list[DayCoverage]:
        """The expired days the aggregates do not hold."""
        return [d for d in self.days if not d.covered]

    def table_rows(self) -> list[dict[str, Any]]:
        """The tables as rows to render."""
        return [t.as_dict() for t in self.tables]

    def day_rows(self) -> list[dict[str, Any]]:
        """The expired days as rows to render."""
        return [d.as_dict() for d in self.days]

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        return {
            "today": self.today.isoformat(),
            "window_start": self.window_start.isoformat(),
            "window_end": self.window_end.isoformat(),
            "tables": self.table_rows(),
            "days": self.day_rows(),
            "covered_days": len(self.days) - len(self.gaps),
            "gaps": [d.as_dict() for d in self.gaps],
            "past_window": [t.as_dict() for t in self.past_window],
        }


def _iso(moment: date | datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _past(oldest: date | datetime | None, today: date, days: int | None) -> bool:
    """Whether ``oldest`` is older than ``days`` before the start of ``today`` (UTC)."""
    if oldest is None or days is None:
        return False
    cut = datetime.combine(today, datetime.min.time(), tzinfo=UTC) - timedelta(days=days)
    if not isinstance(oldest, datetime):
        return oldest < cut.date()
    return oldest < cut


def _table(store: Store, table: str, create_query: str, today: date) -> TableRetention:
    column = time_column(table)
    rows, oldest, newest = store.query(
        f"SELECT count(), min(`{column}`), max(`{column}`) FROM `{table}`"
    ).rows[0]
    empty = int(rows) == 0
    oldest = None if empty else store_time(oldest)
    promise = RETENTION.get(table)
    days = promise.days if promise is not None else None
    return TableRetention(
        table,
        int(rows),
        oldest,
        None if empty else store_time(newest),
        column,
        ttl_of(create_query),
        days,
        _past(oldest, today, days),
    )


def _day_counts(store: Store, start: date, end: date) -> dict[tuple[str, date], DayCounts]:
    window = "day >= {start:Date} AND day < {end:Date}"
    days = {"start": start, "end": end}
    raw: dict[tuple[str, date], dict[str, int]] = {}
    ledger = store.query(
        f"""SELECT space_id, day, kind, sum(rows) FROM interactions_daily
WHERE {window} AND kind IN ('presented', 'engaged') GROUP BY space_id, day, kind""",
        days,
    ).rows
    still_raw = store.query(
        f"""SELECT space_id, toDate(occurred_at) AS day, kind, count() FROM interactions
WHERE {window} AND kind IN ('presented', 'engaged') GROUP BY space_id, day, kind""",
        days,
    ).rows
    for space, day, kind, n in [*ledger, *still_raw]:
        by_kind = raw.setdefault((space, day), {})
        by_kind[kind] = max(by_kind.get(kind, 0), int(n))
    aggregated = {
        (space, day): (int(exposed), int(engaged))
        for space, day, exposed, engaged in store.query(
            f"""SELECT space_id, day, countIf(exposure > 0), countIf(events > 0)
FROM (
    SELECT space_id, day, sum(exposure_micro) AS exposure, sum(events) AS events
    FROM value_daily WHERE {window} GROUP BY space_id, day, attr, value
)
GROUP BY space_id, day""",
            days,
        ).rows
    }
    return {
        key: DayCounts(
            by_kind.get("presented", 0), by_kind.get("engaged", 0), *aggregated.get(key, (0, 0))
        )
        for key, by_kind in raw.items()
    }


def retention_check(
    store: Store,
    today: date,
    tables: Iterable[str] = (*RAW_TABLES, *AGGREGATE_TABLES, *EVIDENCE_TABLES),
) -> RetentionReport:
    """What each table keeps, and the expired days of ``interactions`` the aggregates
    hold (and the gaps). Blocking."""
    created = dict(
        store.query(
            "SELECT name, create_table_query FROM system.tables WHERE database = currentDatabase()"
        ).rows
    )
    start, end = expired_window(today)
    return RetentionReport(
        today=today,
        window_start=start,
        window_end=end,
        tables=[_table(store, t, created[t], today) for t in tables if t in created],
        days=coverage(_day_counts(store, start, end)),
    )
