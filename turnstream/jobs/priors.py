"""Nightly priors: each space's signal rate per attribute value over 90 days.

The prior of a value is the space's signal rate for it: engagements on items showing the
value per unit of effective exposure, over the 90 days before the as-of date, only for
values seen by at least 10 people (``MIN_FLOOR``; configurable upwards, never below).
Lift (``turnstream/core/derivation``) divides a person's rate by it.

What feeds what (migration 4 in ``turnstream/sinks/schema.py``)::

    interactions ──presented──► value_daily_presented_mv ─► value_daily
       (raw, 45 days)            visible items: one row per shown field      (space, attr,
                                 (type.field) and per object (type.ref):     value, day;
                                 people (uniqExact), exposure                kept 100 days)
                 ──engaged────► value_daily_engaged_mv ──► value_daily
                                 the engaged object (type.ref): events,
                                 signal (click, detail, mention, compare,
                                 share 1; cart 2)
                 ──presented──► ref_values_daily_mv ─────► ref_values_daily
                                 every presented item: which values each     (space, ref,
                                 object showed, how often                    attr, value, day)
                 ──every row──► interactions_daily_mv ───► interactions_daily (ledger)

    recompute_priors: value_daily + ref_values_daily over [as_of - 90, as_of) ─► priors

Why this shape:

- The views run at insert time, so the aggregates hold every day the raw table held and
  outlive its TTL (ClickHouse 26 even drops already-expired rows at insert; the views
  still see them). Nothing has to run before the raw rows expire.
- **Exact at the floor.** ``people`` is a ``uniqExact`` state per value and day; merging
  the states of 90 days is the exact count of distinct people (128-bit hashes), so a
  value seen by 9 people never passes as 10, which an approximate ``uniq`` could allow.
- **Engagements credit values without a join in a view.** An ``engaged`` event names only
  the object; a view cannot look up what that object showed (a join would read the
  whole raw table on every insert and depend on arrival order). So the engaged view
  credits the object (``type.ref``), and the job splits each object's signal over the
  values it showed in the window, in proportion to how often it showed each (per
  field). For a stable field (colour, brand) that is the whole signal, as in the
  person-level rules; for a field that changed (a price), the split is an estimate of
  "the values of the latest presentation" that the person-level rules use. ``events``
  of a field value counts the engagements on objects that showed it (not split).
- **Exposure** counts an item when it was visible on its page (``pos - first pos <
  visible_k``) with weight ``1 / log2(pos + 1)``; a ``seen`` event cannot reach the
  page's items in a view, so items exposed only by scrolling are left out (a slight
  under-count of exposure, so a slight over-estimate of the rate). ``people`` are the
  people exposed. Feedback and outcomes do not enter the prior.
- **Deterministic.** Weights and signals are summed as integer millionths (as the
  evidence counters do), so the order of merges changes nothing; a version is the as-of
  date (``yyyymmdd``); rewriting a version replaces it whole, and rewriting it with the
  same content writes nothing.

Value spelling: strings as they are; numbers and booleans as ClickHouse writes the JSON
literal, which drops a float's ``.0`` (``200.0`` → ``200``) and may write exponents
differently from Python. The read that derivation uses
(:func:`turnstream.sinks.priors.latest_priors`) therefore also answers under the spellings
the signals rules use (``value_key``: ``200.0``, ``1e-05``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from turnstream.sinks.store import Store

__all__ = [
    "KEPT_DAYS",
    "MIN_FLOOR",
    "WINDOW_DAYS",
    "PriorRow",
    "PriorsReport",
    "ValueAggregate",
    "check_floor",
    "passes_floor",
    "prior_of",
    "priors_from",
    "priors_query",
    "recompute_priors",
    "version_of",
    "window_of",
    "window_parameters",
]

#: No prior rests on fewer people than this, whatever the configuration says.
MIN_FLOOR = 10
#: The window of a prior, in days before the as-of date.
WINDOW_DAYS = 90
#: How long the daily aggregates are kept (their TTL): the longest window possible.
KEPT_DAYS = 100

_MICRO = 1_000_000
_DIGITS = 6
_COLUMNS = (
    "space_id",
    "attr",
    "value",
    "people",
    "events",
    "exposure",
    "signal",
    "prior",
    "window_start",
    "window_end",
    "version",
)


# --------------------------------------------------------------------------- rules


def check_floor(floor: int) -> int:
    """``floor`` when it is at least :data:`MIN_FLOOR`; else ValueError."""
    if floor < MIN_FLOOR:
        raise ValueError(f"the priors floor is at least {MIN_FLOOR} people (got {floor})")
    return floor


def passes_floor(people: int, floor: int = MIN_FLOOR) -> bool:
    """Whether a value seen by ``people`` distinct people may have a prior."""
    return people >= check_floor(floor)


def prior_of(signal_micro: int, exposure_micro: int) -> float | None:
    """Signal per unit of effective exposure (both in millionths); None without exposure."""
    if exposure_micro <= 0:
        return None
    return round(signal_micro / exposure_micro, _DIGITS)


def version_of(as_of: date) -> int:
    """The version of the priors computed as of ``as_of``: ``yyyymmdd``."""
    return as_of.year * 10_000 + as_of.month * 100 + as_of.day


def window_of(as_of: date, window_days: int = WINDOW_DAYS) -> tuple[date, date]:
    """The days a prior covers: ``[as_of - window_days, as_of)``."""
    if not 1 <= window_days <= KEPT_DAYS:
        raise ValueError(f"window_days must be 1 to {KEPT_DAYS} (got {window_days})")
    return as_of - timedelta(days=window_days), as_of


@dataclass(frozen=True)
class ValueAggregate:
    """One value's figures over a window, as the aggregates give them."""

    space_id: str
    attr: str
    value: str
    people: int
    events: int
    exposure_micro: int
    signal_micro: int


@dataclass(frozen=True)
class PriorRow:
    """One row of the ``priors`` table."""

    space_id: str
    attr: str
    value: str
    people: int
    events: int
    exposure: float
    signal: float
    prior: float
    window_start: date
    window_end: date
    version: int

    def as_tuple(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _COLUMNS)


def priors_from(
    aggregates: Iterable[ValueAggregate],
    as_of: date,
    floor: int = MIN_FLOOR,
    window_days: int = WINDOW_DAYS,
) -> list[PriorRow]:
    """The priors rows of ``aggregates``: values at the floor or above, with exposure."""
    check_floor(floor)
    start, end = window_of(as_of, window_days)
    version = version_of(as_of)
    rows = []
    for agg in aggregates:
        prior = prior_of(agg.signal_micro, agg.exposure_micro)
        if prior is None or not passes_floor(agg.people, floor):
            continue
        rows.append(
            PriorRow(
                agg.space_id,
                agg.attr,
                agg.value,
                agg.people,
                agg.events,
                agg.exposure_micro / _MICRO,
                agg.signal_micro / _MICRO,
                prior,
                start,
                end,
                version,
            )
        )
    rows.sort(key=lambda r: (r.space_id, r.attr, r.value))
    return rows


# --------------------------------------------------------------------------- SQL


#: The window's days, ``[start, end)``, as query parameters (:func:`window_parameters`).
_DAYS = "day >= {start:Date} AND day < {end:Date}"


def window_parameters(start: date, end: date) -> dict[str, date]:
    """The query parameters of a window ``[start, end)``: ``start`` and ``end``."""
    return {"start": start, "end": end}


def priors_query(floor: int = MIN_FLOOR) -> str:
    """Per space and value over the window ``[{start:Date}, {end:Date})`` (parameters,
    :func:`window_parameters`): people, events, exposure and signal (millionths), for the
    values at ``floor`` people or more.

    Field values get the signal of the objects that showed them, split by how often each
    object showed each value of the field; object values (``type.ref``) their own.
    """
    check_floor(floor)
    days = _DAYS
    return f"""SELECT v.space_id AS space_id, v.attr AS attr, v.value AS value, v.people AS people,
    if(endsWith(v.attr, '.ref'), v.events, ifNull(c.events, 0)) AS events,
    v.exposure_micro AS exposure_micro,
    if(endsWith(v.attr, '.ref'), v.signal_micro, ifNull(c.signal_micro, 0)) AS signal_micro
FROM (
    SELECT space_id, attr, value, uniqExactMerge(people) AS people,
        sum(exposure_micro) AS exposure_micro, sum(events) AS events,
        sum(signal_micro) AS signal_micro
    FROM value_daily
    WHERE {days}
    GROUP BY space_id, attr, value
    HAVING people >= {floor}
) AS v
LEFT JOIN (
    SELECT s.space_id AS space_id, s.attr AS attr, s.value AS value,
        sum(r.ref_events) AS events,
        toInt64(sum(intDiv(toInt128(r.ref_signal) * s.n, s.total))) AS signal_micro
    FROM (
        SELECT space_id, ref, attr, value, n,
            sum(n) OVER (PARTITION BY space_id, ref, attr) AS total
        FROM (
            SELECT space_id, ref, attr, value, sum(presentations) AS n
            FROM ref_values_daily
            WHERE {days}
            GROUP BY space_id, ref, attr, value
        )
    ) AS s
    INNER JOIN (
        SELECT space_id, value AS ref, sum(events) AS ref_events, sum(signal_micro) AS ref_signal
        FROM value_daily
        WHERE {days} AND endsWith(attr, '.ref')
        GROUP BY space_id, ref
        HAVING ref_events > 0
    ) AS r ON s.space_id = r.space_id AND s.ref = r.ref
    GROUP BY s.space_id, s.attr, s.value
) AS c ON v.space_id = c.space_id AND v.attr = c.attr AND v.value = c.value
ORDER BY space_id, attr, value"""


# --------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class PriorsReport:
    """What one recompute found and wrote."""

    as_of: date
    version: int
    window_start: date
    window_end: date
    floor: int
    values: int
    below_floor: int
    no_exposure: int
    priors: int
    per_space: dict[str, int] = field(default_factory=dict)
    unchanged: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-able values."""
        return {
            "as_of": self.as_of.isoformat(),
            "version": self.version,
            "window_start": self.window_start.isoformat(),
            "window_end": self.window_end.isoformat(),
            "floor": self.floor,
            "values": self.values,
            "below_floor": self.below_floor,
            "no_exposure": self.no_exposure,
            "priors": self.priors,
            "per_space": dict(self.per_space),
            "unchanged": self.unchanged,
        }


def recompute_priors(
    store: Store, as_of: date, floor: int = MIN_FLOOR, window_days: int = WINDOW_DAYS
) -> PriorsReport:
    """Compute the priors as of ``as_of`` from the daily aggregates and write them.

    Blocking. The version is ``as_of`` as ``yyyymmdd``: a second run for the same date
    writes nothing when the content is the same, and otherwise replaces that version.
    """
    check_floor(floor)
    start, end = window_of(as_of, window_days)
    version = version_of(as_of)
    window = window_parameters(start, end)
    found = store.query(priors_query(floor), window).rows
    aggregates = [
        ValueAggregate(s, a, v, int(p), int(e), int(x), int(g)) for s, a, v, p, e, x, g in found
    ]
    rows = priors_from(aggregates, as_of, floor, window_days)
    values = store.scalar(
        f"""SELECT count() FROM (
    SELECT 1 FROM value_daily WHERE {_DAYS} GROUP BY space_id, attr, value
)""",
        window,
    )
    new = [row.as_tuple() for row in rows]
    old = store.query(
        f"SELECT {', '.join(f'`{c}`' for c in _COLUMNS)} FROM priors FINAL "
        f"WHERE version = {version} ORDER BY space_id, attr, value"
    ).rows
    unchanged = [tuple(r) for r in old] == new
    if not unchanged:
        if old:
            store.command(
                f"ALTER TABLE priors DELETE WHERE version = {version}",
                settings={"mutations_sync": 2},
            )
        if new:
            # No deduplication token (and no dedup window on the table): after the
            # delete, the same block must land again.
            store.insert("priors", new, _COLUMNS)
    per_space: dict[str, int] = {}
    for row in rows:
        per_space[row.space_id] = per_space.get(row.space_id, 0) + 1
    return PriorsReport(
        as_of=as_of,
        version=version,
        window_start=start,
        window_end=end,
        floor=floor,
        values=int(values or 0),
        below_floor=int(values or 0) - len(found),
        no_exposure=len(found) - len(rows),
        priors=len(rows),
        per_space=per_space,
        unchanged=unchanged,
    )
