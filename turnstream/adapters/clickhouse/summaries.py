"""Every summary as a function of the raw rows, and its repair after a crash.

The summaries (context use per minute, the interactions ledger, the value and object
aggregates behind the priors and their weekly roll-ups, the stated read side) are filled
at insert time by materialized views on the raw tables. ClickHouse commits an insert's
raw part, then each view's part, then the parts of the views chained on those, one after
the other: a crash in between leaves a summary without the insert, and pushing the insert
through the views again rested on each target's deduplication log, which a SIGKILL can
lose (a summary then counted it twice: ``context_use_claims`` 2-3.5% over after
``make chaos``).

So a summary is never fixed by writing an insert again. Each one is declared here as a
``SELECT`` over its source's rows (the same SQL its views run), and is repaired by
*replacing* what an unconfirmed insert can have touched with its recomputation from the
raw table:

* a summary keyed by day (or minute, or ISO week) loses every row of the (space, day)
  pairs the unconfirmed raw rows fall on, then takes those days recomputed from every
  raw row of them; a chained roll-up (the weekly tables) is then rebuilt for the weeks of
  those days from its daily table;
* a summary keyed by the raw row (``stated``, a ReplacingMergeTree by id) takes the
  unconfirmed inserts' rows again: a row written twice is one row.

Running a repair again gives the same rows (a replacement, not an addition), so a crash
during one is repaired by the next: the sink confirms the table's marks only once its
repair returned (``adapters/clickhouse/writer.py``). The (space, day) pairs and insert ids of a
repair
are data in ``summary_repairs`` (migration 25), never SQL text. :func:`differences`
compares every summary with its recomputation from the raw tables (the fault tests).

The one writer of a summary's days during a repair is the worker repairing them (one
worker per store on chDB); on a server shared by several workers, a repair can race with
another worker's insert into the same days (docs/summaries.md, "Limits").
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from turnstream.adapters.clickhouse.people_sets import CAP, merged_people
from turnstream.adapters.clickhouse.schema import (
    REF_VALUES_FROM_STAGE,
    REF_VALUES_WEEKS,
    SENSITIVE_FROM_STAGE,
    SPLIT_VALUES,
    VALUE_WEEKS,
    VALUES_FROM_STAGE,
)
from turnstream.adapters.clickhouse.store import Store, insert_settings

__all__ = [
    "RAW_RETENTION_DAYS",
    "SUMMARIES",
    "Summary",
    "differences",
    "repair",
    "summaries_of",
]

log = logging.getLogger(__name__)

#: Where a summary's SQL reads its source's rows.
ROWS = "__ROWS__"

#: Raw tables whose rows a TTL removes, in days: a day is repaired only while the raw
#: table still holds all of it (recomputing an older day would drop what the TTL took).
RAW_RETENTION_DAYS = {"interactions": 45}


@dataclass(frozen=True)
class Summary:
    """One summary table: what it is computed from, and how its rows are identified."""

    table: str
    #: The raw table whose rows it summarizes.
    source: str
    #: Its rows from the rows of ``ROWS`` (the source's, or ``chained_on``'s).
    select: str
    #: The columns written, in the order of ``select``.
    columns: tuple[str, ...]
    #: The summed columns (the rest, but ``people``, identify a row).
    sums: tuple[str, ...]
    #: The table's day as an expression of its columns (None: keyed by the raw row).
    day: str | None
    #: A capped array of person keys (value_daily, value_weekly).
    people: str | None = None
    #: The summary it rolls up (its ``select`` reads that table's rows by week).
    chained_on: str | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.sums and c != self.people)


def _cols(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(","))


def _from_rows(sql: str, table: str) -> str:
    """``sql`` reading ``ROWS`` where it reads ``table`` (once, or it fails here)."""
    needle = f"FROM {table}\n"
    if sql.count(needle) != 1:
        raise AssertionError(f"expected one FROM {table} in a summary's SQL")
    return sql.replace(needle, f"FROM {ROWS}\n")


_SPLIT = _from_rows(SPLIT_VALUES, "interactions")


def _on_split(sql: str) -> str:
    """A view on ``interaction_values`` (a Null table) as a query of the raw rows."""
    return sql.replace("FROM interaction_values\n", f"FROM ({_SPLIT})\n")


SUMMARIES: tuple[Summary, ...] = (
    Summary(
        "claims_minute",
        "turn_claims",
        f"""SELECT space_id, source, agent, category, class, nature, verdict, action,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS claims, countIf(evidenced) AS evidenced
FROM {ROWS}
GROUP BY space_id, source, agent, category, class, nature, verdict, action, minute""",
        _cols(
            "space_id, source, agent, category, class, nature, verdict, action, minute, "
            "claims, evidenced"
        ),
        ("claims", "evidenced"),
        "toDate(minute)",
    ),
    Summary(
        "turns_minute",
        "turns",
        f"""SELECT space_id, source, agent, contract_version,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS turns, countIf(guard_acted) AS guard_acted,
    countIf(guard_budget_exceeded) AS guard_budget_exceeded,
    countIf(internal_text_found > 0) AS internal_text_found, sum(claims) AS claims
FROM {ROWS}
GROUP BY space_id, source, agent, contract_version, minute""",
        _cols(
            "space_id, source, agent, contract_version, minute, turns, guard_acted, "
            "guard_budget_exceeded, internal_text_found, claims"
        ),
        ("turns", "guard_acted", "guard_budget_exceeded", "internal_text_found", "claims"),
        "toDate(minute)",
    ),
    Summary(
        "constraints_minute",
        "turn_constraints",
        f"""SELECT space_id, source, agent, tool,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS calls, sum(sent) AS sent, sum(results_checked) AS results_checked,
    sum(violations) AS violations, sum(unverifiable) AS unverifiable,
    countIf(relaxed) AS relaxed
FROM {ROWS}
GROUP BY space_id, source, agent, tool, minute""",
        _cols(
            "space_id, source, agent, tool, minute, calls, sent, results_checked, "
            "violations, unverifiable, relaxed"
        ),
        ("calls", "sent", "results_checked", "violations", "unverifiable", "relaxed"),
        "toDate(minute)",
    ),
    Summary(
        "interactions_daily",
        "interactions",
        f"""SELECT space_id, toDate(occurred_at) AS day, kind, count() AS rows
FROM {ROWS}
GROUP BY space_id, day, kind""",
        _cols("space_id, day, kind, rows"),
        ("rows",),
        "day",
    ),
    Summary(
        "value_daily",
        "interactions",
        _on_split(VALUES_FROM_STAGE),
        _cols("space_id, attr, value, day, level, people, exposure_micro, events, signal_micro"),
        ("exposure_micro", "events", "signal_micro"),
        "day",
        people="people",
    ),
    Summary(
        "ref_values_daily",
        "interactions",
        _on_split(REF_VALUES_FROM_STAGE),
        _cols("space_id, ref, attr, value, day, presentations"),
        ("presentations",),
        "day",
    ),
    Summary(
        "sensitive_daily",
        "interactions",
        _on_split(SENSITIVE_FROM_STAGE),
        _cols("space_id, name, day, presented, engaged"),
        ("presented", "engaged"),
        "day",
    ),
    Summary(
        "value_weekly",
        "interactions",
        _from_rows(VALUE_WEEKS, "value_daily"),
        _cols("space_id, attr, value, week, level, people, exposure_micro, events, signal_micro"),
        ("exposure_micro", "events", "signal_micro"),
        "week",
        people="people",
        chained_on="value_daily",
    ),
    Summary(
        "ref_values_weekly",
        "interactions",
        _from_rows(REF_VALUES_WEEKS, "ref_values_daily"),
        _cols("space_id, attr, ref, value, week, presentations"),
        ("presentations",),
        "week",
        chained_on="ref_values_daily",
    ),
    Summary(
        "stated",
        "interactions",
        f"""SELECT concat(idempotency_key, '#', toString(item_index)) AS id, space_id, profile_id,
    `for`, kind, attr, payload, session_id,
    if(turn_id != '', turn_id, idempotency_key) AS origin, occurred_at
FROM {ROWS}
WHERE kind IN ('preference', 'attribute')""",
        _cols(
            "id, space_id, profile_id, `for`, kind, attr, payload, session_id, origin, occurred_at"
        ),
        (),
        None,
    ),
    Summary(
        "stated",
        "commands",
        f"""SELECT idempotency_key AS id, space_id, profile_id,
    if(JSONExtractString(replacement, 'for') != '', JSONExtractString(replacement, 'for'),
        'self') AS `for`,
    JSONExtractString(replacement, 'kind') AS kind,
    JSONExtractString(replacement, 'attr') AS attr, replacement AS payload, session_id,
    idempotency_key AS origin, occurred_at
FROM {ROWS}
WHERE command = 'correct' AND replacement != ''""",
        _cols(
            "id, space_id, profile_id, `for`, kind, attr, payload, session_id, origin, occurred_at"
        ),
        (),
        None,
    ),
)


def summaries_of(source: str) -> tuple[Summary, ...]:
    """The summaries of raw table ``source``, a chained roll-up after what it rolls up."""
    return tuple(s for s in SUMMARIES if s.source == source)


_PAIRS = "SELECT space_id, day FROM summary_repairs WHERE repair = {repair:String}"
_WEEKS = "SELECT space_id, toMonday(day) FROM summary_repairs WHERE repair = {repair:String}"
_INSERTS = "SELECT insert FROM summary_repairs WHERE repair = {repair:String}"


def _day_filter(source: str) -> str:
    """The repair's (space, day) pairs that ``source`` still holds whole."""
    days = RAW_RETENTION_DAYS.get(source)
    if days is None:
        return _PAIRS
    return f"{_PAIRS} AND day > today() - {int(days)}"


def repair(store: Store, source: str, behind: dict[tuple[str, int], int]) -> int:
    """Replace, in every summary of raw table ``source``, what its rows above ``behind``
    (per (topic, partition), the highest confirmed offset, -1 for none) can have touched
    with its recomputation from the raw rows. Idempotent; returns the (space, day) pairs
    repaired."""
    summaries = summaries_of(source)
    if not summaries or not behind:
        return 0
    ident = uuid.uuid4().hex
    for (topic, partition), done in sorted(behind.items()):
        store.command(
            "INSERT INTO summary_repairs (repair, source, space_id, day, insert) "
            "SELECT DISTINCT {repair:String}, {source:String}, space_id, "
            f"toDate(occurred_at), _insert FROM {source} WHERE _topic = {{topic:String}} "
            "AND _partition = {partition:UInt16} AND _offset > {done:Int64}",
            parameters={
                "repair": ident,
                "source": source,
                "topic": topic,
                "partition": partition,
                "done": done,
            },
        )
    params = {"repair": ident}
    pairs = int(
        store.scalar(
            "SELECT count() FROM (SELECT DISTINCT space_id, day FROM summary_repairs "
            "WHERE repair = {repair:String})",
            params,
        )
    )
    if not pairs:
        return 0
    days = _day_filter(source)
    for summary in summaries:
        if summary.day is None:
            # Keyed by the raw row (a ReplacingMergeTree): the inserts' rows again.
            rows = f"(SELECT * FROM {source} WHERE _insert IN ({_INSERTS}))"
            _insert_select(store, summary, rows, params)
            continue
        if summary.chained_on is not None:
            where = f"(space_id, {summary.day}) IN ({_WEEKS})"
            rows = (
                f"(SELECT * FROM {summary.chained_on} "
                f"WHERE (space_id, toMonday(day)) IN ({_WEEKS}))"
            )
        else:
            where = f"(space_id, {summary.day}) IN ({days})"
            rows = f"(SELECT * FROM {source} WHERE (space_id, toDate(occurred_at)) IN ({days}))"
        store.command(
            f"ALTER TABLE {summary.table} DELETE WHERE {where}",
            settings={"mutations_sync": 2},
            parameters=params,
        )
        _insert_select(store, summary, rows, params)
    log.warning("repaired the summaries of %s on %d (space, day) pairs", source, pairs)
    return pairs


def _insert_select(store: Store, summary: Summary, rows: str, params: dict[str, str]) -> None:
    store.command(
        f"INSERT INTO {summary.table} ({', '.join(summary.columns)}) "
        + summary.select.replace(ROWS, rows),
        settings=insert_settings(),
        parameters=params,
    )


def _normalized(summary: Summary, rows: str, table: str | None = None) -> str:
    """``summary``'s rows, one per key, from ``table`` as stored or, without it,
    recomputed from ``rows``: sums summed; people as their sorted keys below the cap,
    else the cap (which keys a capped set keeps depends on the order of merges)."""
    keys = ", ".join(summary.keys)
    source = table if table is not None else f"({summary.select.replace(ROWS, rows)})"
    if summary.day is None:  # keyed by the raw row: distinct rows
        return f"SELECT DISTINCT {', '.join(summary.columns)} FROM {source}"
    parts = [keys, *(f"sum({c}) AS {c}" for c in summary.sums)]
    if summary.people is not None:
        merged = merged_people(summary.people)
        parts.append(
            f"if(length({merged}) < {CAP}, arraySort({merged}), [toUInt64({CAP})]) AS people"
        )
    return f"SELECT {', '.join(parts)} FROM {source} GROUP BY {keys}"


def _retained(source: str) -> str:
    days = RAW_RETENTION_DAYS.get(source)
    return f"toDate(occurred_at) > today() - {int(days)}" if days is not None else "1"


def _all_rows(source: str) -> str:
    return f"(SELECT * FROM {source} WHERE {_retained(source)})"


def comparison_sql(table: str) -> tuple[str, str]:
    """Two queries of summary ``table``'s rows, one per key: as stored, and recomputed
    from the raw tables, over the days the raw tables still hold whole."""
    summaries = [s for s in SUMMARIES if s.table == table]
    summary = summaries[0]
    if summary.day is None:
        # Keyed by the raw row, from several sources: the union of their rows, distinct
        # (the gift bucket's rows leave after 7 days by the table's TTL).
        columns = ", ".join(summary.columns)
        want = " UNION DISTINCT ".join(
            f"SELECT {columns} FROM ({s.select.replace(ROWS, _all_rows(s.source))})"
            for s in summaries
        )
        want = (
            f"SELECT * FROM ({want}) WHERE NOT (`for` = 'gift' "
            "AND occurred_at < now() - INTERVAL 7 DAY)"
        )
        have = f"SELECT DISTINCT {columns} FROM {table} FINAL"
    else:
        rows = _all_rows(summary.source)
        if summary.chained_on is not None:
            daily = next(s for s in SUMMARIES if s.table == summary.chained_on)
            rows = f"({daily.select.replace(ROWS, rows)})"
        stored = table
        days = RAW_RETENTION_DAYS.get(summary.source)
        if days is not None and summary.chained_on is not None:  # whole weeks only
            cut = f"toMonday(today() - {int(days)}) + 7"
            stored = f"(SELECT * FROM {table} WHERE {summary.day} >= {cut})"
            rows = f"(SELECT * FROM {rows} WHERE toMonday(day) >= {cut})"
        elif days is not None:
            stored = f"(SELECT * FROM {table} WHERE {summary.day} > today() - {int(days)})"
        have = _normalized(summary, rows, stored)
        want = _normalized(summary, rows)
    return have, want


def differences(query: Callable[[str], Iterable[tuple[object, ...]]]) -> dict[str, int]:
    """Per summary table, how many rows differ from its recomputation from the raw tables
    (0 everywhere: exact). ``query`` runs a read-only query and returns its rows."""
    out: dict[str, int] = {}
    for table in dict.fromkeys(s.table for s in SUMMARIES):
        have, want = (Counter(map(_plain, query(sql))) for sql in comparison_sql(table))
        out[table] = sum(((have - want) + (want - have)).values())
    return out


def _plain(row: Iterable[object]) -> tuple[object, ...]:
    """A row as hashable values (arrays as tuples)."""
    return tuple(tuple(v) if isinstance(v, list) else v for v in row)
