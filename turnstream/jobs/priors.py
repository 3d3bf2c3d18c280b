"""Nightly priors: each space's signal rate per attribute value over 90 days.

The prior of a value is the space's signal rate for it: engagements on items showing the
value per unit of effective exposure, over the 90 days before the as-of date, only for
values seen by at least 10 people (``MIN_FLOOR``; configurable upwards, never below).
Lift (``turnstream/core/derivation``) divides a person's rate by it.

What feeds what (migrations 4, 11, 12, 23 and 24 in
``turnstream/adapters/clickhouse/migrations/``)::

    interactions ──presented──► interaction_values_mv ─► interaction_values (Null: rows
       (raw, 45 days) ─engaged─► one parse of the pages:   pass through, none stored)
                                 per item, a row per shown field (type.field) and per
                                 object (type.ref), visible or not, weight; per
                                 engagement, its object (type.ref), signal; sensitive
                                 types and fields by name only
    interaction_values ─► value_daily_mv ──────────► value_daily
                          presented, visible items' rows:     (space, attr, value,
                          people (capped key sets by level),  day, level; kept
                          exposure; engagements: events,      100 days)
                          signal (click, detail, mention,
                          compare, share 1; cart 2); sensitive names left out
                       ─► ref_values_daily_mv ─────► ref_values_daily
                          every presented item's fields: which (space, attr, ref,
                          values each object showed, how often value, day)
                       ─► sensitive_daily_mv ──────► sensitive_daily
                          sensitive types and fields: by name, a count
    interactions ──every row──► interactions_daily_mv ───► interactions_daily (ledger)
    value_daily, ref_values_daily ─► value_weekly_mv, ref_values_weekly_mv ─► the weekly
                                     roll-ups (migration 20)

    recompute_priors: erased keys out of value_daily (purge_erased); sensitive names
        written and their rows deleted; then per space (per attribute when large):
        value_daily (people) + ref_values_daily (shares) over [as_of - 90, as_of)
        ─► priors
      then per space with folded states: signal_state (the people's own counts per
        field, with those priors) ─► field_priors (each field's share of people with a
        favourite and its lift weights; :mod:`turnstream.jobs.field_priors`)

Why this shape:

- The views run at insert time, so the aggregates hold every day the raw table held and
  outlive its TTL (ClickHouse 26 even drops already-expired rows at insert; the views
  still see them). Nothing has to run before the raw rows expire.
- **Exact at the floor, bounded above it.** ``people`` keeps, per value, day and level,
  at most 64 person keys (:mod:`turnstream.adapters.clickhouse.people_sets`): below 64 people every
  key is there and merging 90 days counts them exactly, so a value seen by 9 people
  never passes as 10 (the floor may be 10 to 64); above, the levels are a sample and the
  count an estimate. The old ``uniqExact`` sets grew with every person: 7.1 GiB of job
  memory at 60M presented items, 30-50 GiB projected at 1B (issue 20). ClickHouse's
  ``uniqCombined`` is exact-ish for small sets too, but no statement can take one key
  out of its state, and an erasure must (issue 15); ``bench/priors_counters.py``.
- **Per space, within limits.** Each space runs on its own, and one attribute at a time
  past ``split_rows`` value-day rows, with the store's memory limit and spill thresholds
  set on every query (:class:`PriorsLimits`): one tenant's size never sets another's
  memory, and a run past the limit fails with :class:`PriorsMemoryError`, not the
  process.
- **Privacy.** Erased people's keys are taken out before anything is counted; sensitive
  types and fields never reach the by-value aggregates and never get a prior.
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
  visible_k``) with the exposure weight (``WEIGHT_FORMULA``); a ``seen`` event cannot reach the
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
(:func:`turnstream.adapters.clickhouse.priors.latest_priors`) therefore also answers under the
spellings
the signals rules use (``value_key``: ``200.0``, ``1e-05``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from turnstream.adapters.clickhouse.erasure import purge_erased
from turnstream.adapters.clickhouse.people_sets import CAP, LEVELS, count_people, merged_size
from turnstream.adapters.clickhouse.priors import priors_by_key
from turnstream.adapters.clickhouse.sensitivity import is_sensitive_name, write_sensitive
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.errors import StoreError
from turnstream.jobs.field_priors import fit_space, write_field_priors
from turnstream.models.object_types import ObjectTypes

__all__ = [
    "KEPT_DAYS",
    "MAX_FLOOR",
    "MIN_FLOOR",
    "WINDOW_DAYS",
    "PriorRow",
    "PriorsLimits",
    "PriorsMemoryError",
    "PriorsReport",
    "ValueAggregate",
    "check_floor",
    "is_object_attr",
    "passes_floor",
    "people_query",
    "prior_of",
    "priors_from",
    "query_settings",
    "reads_weeks",
    "recompute_priors",
    "run_parameters",
    "runs_for",
    "shares_query",
    "version_of",
    "whole_weeks",
    "window_of",
    "window_parameters",
    "window_rows",
    "with_shares",
]

log = logging.getLogger(__name__)

#: No prior rests on fewer people than this, whatever the configuration says.
MIN_FLOOR = 10
#: The aggregates count people exactly below this many (:data:`people_sets.CAP`), so a
#: floor up to it is decided exactly.
MAX_FLOOR = CAP
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
    """``floor`` when it is :data:`MIN_FLOOR` to :data:`MAX_FLOOR`; else ValueError."""
    if floor < MIN_FLOOR:
        raise ValueError(f"the priors floor is at least {MIN_FLOOR} people (got {floor})")
    if floor > MAX_FLOOR:
        raise ValueError(
            f"the priors floor is at most {MAX_FLOOR} people, the most the daily aggregates "
            f"count exactly (got {floor})"
        )
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
    """One value's figures over a window, as the aggregates give them. ``people`` is
    exact when ``people_exact`` (always below :data:`MAX_FLOOR`), else an estimate."""

    space_id: str
    attr: str
    value: str
    people: int
    events: int
    exposure_micro: int
    signal_micro: int
    people_exact: bool = True


@dataclass(frozen=True)
class PriorsLimits:
    """What one query of the job may use: ``max_memory`` bytes (the store fails the query
    past it, with :class:`PriorsMemoryError`), of which a GROUP BY or a sort holds
    ``spill_fraction`` before spilling to disk; a space with more than ``split_rows``
    value-day rows in the window runs one attribute at a time; the whole weeks are read
    from the weekly roll-ups when they hold ``weeks_ratio`` times fewer rows than the
    daily tables."""

    max_memory: int = 2 << 30
    spill_fraction: float = 0.5
    split_rows: int = 2_000_000
    #: The roll-ups are read when the daily tables hold this many times their rows
    #: (:func:`reads_weeks`). With the daily tables partitioned by week (migration 21),
    #: the weeks cost 1.2 to 1.9 times less CPU than every day at 2M, 10M and 30M
    #: presented items, where the daily tables hold 1.7, 2.2 and 2.8 times the roll-ups'
    #: rows; a weekly row costs ~1.3 times a daily one, so below ~1.3 every day is read.
    weeks_ratio: float = 1.5


def query_settings(limits: PriorsLimits) -> dict[str, Any]:
    """The store's settings for each query of the job."""
    spill = int(limits.max_memory * limits.spill_fraction)
    return {
        "max_memory_usage": limits.max_memory,
        "max_bytes_before_external_group_by": spill,
        "max_bytes_before_external_sort": spill,
        # No join setting: the split's join builds on the engaged objects (bounded by the
        # catalogue) and streams the rest; join_algorithm 'auto' doubled its CPU (0.47 to
        # 0.93 s per space at 2M items), and max_memory_usage bounds it anyway.
    }


def runs_for(rows_per_attr: dict[str, int], split_rows: int) -> list[str | None]:
    """The runs of one space: ``[None]`` (every attribute at once) when its rows are at
    most ``split_rows``, else one per attribute, largest first."""
    if sum(rows_per_attr.values()) <= split_rows:
        return [None]
    return sorted(rows_per_attr, key=lambda a: (-rows_per_attr[a], a))


class PriorsMemoryError(StoreError):
    """A run of the priors job needed more memory than its limit."""


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
        # An estimate stands for more people than the floor can be (MAX_FLOOR or more).
        if prior is None or (agg.people_exact and not passes_floor(agg.people, floor)):
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


#: The days at the window's edges, ``[start, weeks_start)`` and ``[weeks_end, end)``,
#: read from the daily tables; the whole weeks between from the weekly roll-ups
#: (:func:`window_parameters`).
_EDGE_DAYS = (
    "((day >= {start:Date} AND day < {weeks_start:Date}) "
    "OR (day >= {weeks_end:Date} AND day < {end:Date}))"
)
_WEEKS = "week >= {weeks_start:Date} AND week < {weeks_end:Date}"
#: One space (``{space:String}``), and names that are not sensitive (``{hidden:...}``).
_SPACE = (
    "space_id = {space:String} AND NOT has({hidden:Array(String)}, attr) "
    "AND NOT has({hidden:Array(String)}, splitByChar('.', attr)[1])"
)
#: The daily aggregates and their weekly roll-ups (migration 20).
_WEEKLY = {"value_daily": "value_weekly", "ref_values_daily": "ref_values_weekly"}


def whole_weeks(start: date, end: date) -> tuple[date, date]:
    """The whole ISO weeks (Monday to Sunday) inside ``[start, end)``, as
    ``[weeks_start, weeks_end)`` (Mondays); ``(end, end)`` when none fits."""
    first = start + timedelta(days=-start.weekday() % 7)
    last = end - timedelta(days=end.weekday())
    return (first, last) if first < last else (end, end)


def window_parameters(start: date, end: date, weeks: bool = True) -> dict[str, date]:
    """The query parameters of a window ``[start, end)``: ``start`` and ``end``, and the
    whole weeks inside it read from the roll-ups, ``weeks_start`` and ``weeks_end``
    (:func:`whole_weeks`; none without ``weeks``: every day from the daily rows)."""
    weeks_start, weeks_end = whole_weeks(start, end) if weeks else (end, end)
    return {"start": start, "end": end, "weeks_start": weeks_start, "weeks_end": weeks_end}


def reads_weeks(daily_rows: int, weekly_rows: int, ratio: float) -> bool:
    """Whether the job reads the weekly roll-ups: when the daily tables hold at least
    ``ratio`` times their rows. The days at the window's edges are read from the daily
    tables' two edge weeks' partitions (migration 21; unpartitioned, they cost a scan
    of every daily row and the weeks cost 1.3 to 1.5 times more CPU than every day:
    docs/performance.md, Priors, fourth and fifth rounds)."""
    return weekly_rows > 0 and daily_rows >= ratio * weekly_rows


def window_rows(table: str, columns: str, where: str = "") -> str:
    """The SQL of the rows of the daily aggregate ``table`` over the window: its edge days
    and its weekly roll-up's whole weeks (``columns`` read from both, with the extra
    condition ``where``), for one space and its names that are not sensitive."""
    extra = f" AND {where}" if where else ""
    return (
        f"SELECT {columns} FROM {table} WHERE {_SPACE} AND {_EDGE_DAYS}{extra}\n"
        f"        UNION ALL\n"
        f"        SELECT {columns} FROM {_WEEKLY[table]} WHERE {_SPACE} AND {_WEEKS}{extra}"
    )


def people_query(floor: int = MIN_FLOOR, by_attr: bool = False) -> str:
    """Per value of one space over the window, for the values of ``floor`` people or
    more: the sizes of its people's levels (``levels``: ``(level, size)`` pairs,
    :mod:`turnstream.adapters.clickhouse.people_sets`), events, exposure and signal (millionths; an
    object's own, nothing yet for a field value: :func:`shares_query`).

    Parameters: ``space``, ``hidden`` (sensitive names), ``start``, ``end``,
    ``weeks_start``, ``weeks_end`` (:func:`window_parameters`), and ``attr`` when
    ``by_attr`` (:func:`run_parameters`).
    """
    check_floor(floor)
    one_attr = "attr = {attr:String}" if by_attr else ""
    rows = window_rows(
        "value_daily", "attr, value, level, people, exposure_micro, events, signal_micro", one_attr
    )
    # A full level holds CAP >= floor people, so the sum decides the floor exactly.
    return f"""SELECT attr, value, groupArray((level, n)) AS levels, sum(events) AS events,
    sum(exposure_micro) AS exposure_micro, sum(signal_micro) AS signal_micro
FROM (
    SELECT attr, value, level, {merged_size("people")} AS n,
        sum(exposure_micro) AS exposure_micro, sum(events) AS events,
        sum(signal_micro) AS signal_micro
    FROM (
        {rows}
    )
    GROUP BY attr, value, level
)
GROUP BY attr, value
HAVING sum(n) >= {floor}"""


def shares_query(by_attr: bool = False) -> str:
    """Per field value of one space over the window: the events and signal (millionths)
    of the objects that showed it, each object's split by how often it showed each value
    of the field.

    Parameters: ``space``, ``hidden``, ``start``, ``end``, ``weeks_start``,
    ``weeks_end``; with ``by_attr``, ``attr`` and ``objects`` (its type's ``type.ref``:
    the engaged objects are then a key range of ``value_daily``, not the space's every
    row; :func:`run_parameters`).
    """
    one_attr = "attr = {attr:String}" if by_attr else ""
    objects = "attr = {objects:String}" if by_attr else "endsWith(attr, '.ref')"
    shown = window_rows("ref_values_daily", "attr, ref, value, presentations", one_attr)
    engaged = window_rows("value_daily", "value, events, signal_micro", objects)
    return f"""SELECT s.attr AS attr, s.value AS value, sum(r.ref_events) AS events,
    toInt64(sum(intDiv(toInt128(r.ref_signal) * s.n, s.total))) AS signal_micro
FROM (
    SELECT attr, ref, value, n, sum(n) OVER (PARTITION BY attr, ref) AS total
    FROM (
        SELECT attr, ref, value, sum(presentations) AS n
        FROM (
        {shown}
        )
        GROUP BY attr, ref, value
    )
) AS s
INNER JOIN (
    SELECT value AS ref, sum(events) AS ref_events, sum(signal_micro) AS ref_signal
    FROM (
        {engaged}
    )
    GROUP BY ref
    HAVING ref_events > 0
) AS r ON s.ref = r.ref
GROUP BY s.attr, s.value"""


def with_shares(
    space_id: str,
    people: Iterable[tuple[Any, ...]],
    shares: Iterable[tuple[Any, ...]],
) -> list[ValueAggregate]:
    """The values of ``people`` (rows of :func:`people_query`) as aggregates, each field
    value with its share of its objects' events and signal (rows of
    :func:`shares_query`; none when it has no row there), each object with its own."""
    credited = {(attr, value): (int(e), int(s)) for attr, value, e, s in shares}
    found = []
    for attr, value, levels, events, exposure, signal in people:
        sizes = [0] * LEVELS
        for level, n in levels:
            sizes[int(level)] = int(n)
        count, exact = count_people(sizes)
        if not is_object_attr(attr):
            events, signal = credited.get((attr, value), (0, 0))
        found.append(
            ValueAggregate(
                space_id, attr, value, count, int(events), int(exposure), int(signal), exact
            )
        )
    return found


def is_object_attr(attr: str) -> bool:
    """Whether ``attr`` names objects themselves (``type.ref``), not a field of theirs."""
    return attr.endswith(".ref")


def run_parameters(attr: str | None) -> dict[str, str]:
    """The parameters one run adds to the space's: its ``attr`` and the ``objects``
    (``type.ref``) whose engagements its values share; none for a whole-space run."""
    if attr is None:
        return {}
    return {"attr": attr, "objects": f"{attr.split('.', 1)[0]}.ref"}


# --------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class PriorsReport:
    """What one recompute found and wrote. ``runs``: per space, the attributes it ran
    one at a time (``["*"]`` for all at once); ``purged``: erased people taken out of the
    aggregates first, per space; ``sensitive_rows``: rows of sensitive names deleted;
    ``weeks``: whether the whole weeks were read from the weekly roll-ups."""

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
    runs: dict[str, list[str]] = field(default_factory=dict)
    purged: dict[str, int] = field(default_factory=dict)
    sensitive_rows: dict[str, int] = field(default_factory=dict)
    weeks: bool = False
    #: Per space, the fields given a fitted prior (:mod:`turnstream.jobs.field_priors`).
    field_priors: dict[str, int] = field(default_factory=dict)

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
            "runs": {k: list(v) for k, v in self.runs.items()},
            "purged": dict(self.purged),
            "sensitive_rows": dict(self.sensitive_rows),
            "weeks": self.weeks,
            "field_priors": dict(self.field_priors),
        }


def _space_rows(
    store: Store, space_id: str, window: dict[str, Any], hidden: list[str]
) -> tuple[dict[str, int], int]:
    """The space's value-day rows in the window per attribute (a primary-key range), and
    its distinct values: one scan for both (a second cost ~0.1 s per space at 2M items)."""
    rows = store.query(
        f"SELECT attr, count(), uniqExact(value) FROM ({window_rows('value_daily', 'attr, value')})"
        " GROUP BY attr",
        {**window, "space": space_id, "hidden": hidden},
    ).rows
    return {attr: int(n) for attr, n, _ in rows}, sum(int(v) for *_, v in rows)


def _stored_rows(store: Store) -> tuple[int, int]:
    """The rows of the daily aggregates and of their weekly roll-ups, from the parts'
    counts (no scan; rows not merged yet count, so the roll-ups read as larger)."""
    rows = dict(
        store.query(
            "SELECT table, sum(rows) FROM system.parts WHERE database = currentDatabase() "
            "AND active AND table IN ({tables:Array(String)}) GROUP BY table",
            {"tables": [*_WEEKLY, *_WEEKLY.values()]},
        ).rows
    )
    return (
        sum(int(rows.get(t, 0)) for t in _WEEKLY),
        sum(int(rows.get(t, 0)) for t in _WEEKLY.values()),
    )


def _run(
    store: Store,
    sql: str,
    parameters: dict[str, Any],
    limits: PriorsLimits,
    what: str,
) -> list[tuple[Any, ...]]:
    try:
        return store.query(sql, parameters, settings=query_settings(limits)).rows
    except StoreError as exc:
        if exc.code != 241 and "MEMORY_LIMIT_EXCEEDED" not in str(exc):
            raise
        raise PriorsMemoryError(
            f"the priors of {what} needed more than jobs.priors_max_memory "
            f"({limits.max_memory:,} bytes) even spilling to disk: raise it, or lower "
            f"jobs.priors_split_rows ({limits.split_rows:,}) so that the space runs one "
            "attribute at a time",
            code=241,
            driver=exc.driver,
        ) from exc


def _aggregates(
    store: Store,
    space_id: str,
    window: dict[str, Any],
    floor: int,
    limits: PriorsLimits,
    hidden: frozenset[str],
) -> tuple[list[ValueAggregate], int, list[str]]:
    """One space's values at the floor (all attributes at once, or one at a time), its
    values in the window, and the runs."""
    names = sorted(hidden)
    per_attr, values = _space_rows(store, space_id, window, names)
    runs = runs_for(per_attr, limits.split_rows) if per_attr else []
    found: list[ValueAggregate] = []
    for attr in runs:
        parameters = {**window, "space": space_id, "hidden": names, **run_parameters(attr)}
        what = f"space {space_id!r}" + (f", attribute {attr!r}" if attr else "")
        by_attr = attr is not None
        people = _run(store, people_query(floor, by_attr), parameters, limits, what)
        # Two queries, joined here on the few values at the floor: one query joining
        # both sides cost ~40% more CPU (1.2 s against 0.8 s per space at 2M items).
        # An object's own run has nothing to split.
        shares = (
            []
            if attr is not None and is_object_attr(attr)
            else _run(store, shares_query(by_attr), parameters, limits, what)
        )
        found.extend(with_shares(space_id, people, shares))
    return found, values, ["*" if a is None else a for a in runs]


def recompute_priors(
    store: Store,
    as_of: date,
    floor: int = MIN_FLOOR,
    window_days: int = WINDOW_DAYS,
    *,
    sensitive: frozenset[str] = frozenset(),
    limits: PriorsLimits | None = None,
    signals: SignalsConfig | None = None,
    types_for: Callable[[str], ObjectTypes | None] | None = None,
    only: Collection[str] | None = None,
) -> PriorsReport:
    """Compute the priors as of ``as_of`` from the daily aggregates and write them.

    Blocking. First the erased people's keys are taken out of the aggregates and the
    ``sensitive`` names made sure of (left out by the views, their rows deleted); then
    each space runs on its own (one attribute at a time when large), within ``limits``.
    The version is ``as_of`` as ``yyyymmdd``: a second run for the same date writes
    nothing for a space whose content is the same, and otherwise replaces that space's
    version. Then each space with folded states gets its fields' priors fitted
    (``signals``: the derivation settings the counts are taken with), same version:
    the taste fields of its types document (``types_for``; a space without one has no
    taste, so no fit; no ``types_for``: every field). ``only``: these spaces alone (a
    new space's first fit, :mod:`turnstream.core.derivation.first_fit`); none: all.
    """
    check_floor(floor)
    limits = limits or PriorsLimits()
    start, end = window_of(as_of, window_days)
    version = version_of(as_of)
    daily, weekly = _stored_rows(store)
    weeks = reads_weeks(daily, weekly, limits.weeks_ratio)
    window = window_parameters(start, end, weeks)
    purged = purge_erased(store)
    sensitive_rows = write_sensitive(store, sensitive)
    spaces = [
        s
        for (s,) in store.query(
            "SELECT DISTINCT space_id FROM value_daily "
            "WHERE day >= {start:Date} AND day < {end:Date} ORDER BY space_id",
            window,
        ).rows
    ]
    old_spaces = [
        s
        for (s,) in store.query(
            "SELECT DISTINCT space_id FROM priors WHERE version = {version:UInt32}",
            {"version": version},
        ).rows
    ]
    per_space: dict[str, int] = {}
    runs: dict[str, list[str]] = {}
    values = found_total = written = 0
    unchanged = True
    every = sorted(_among(set(spaces) | set(old_spaces), only))
    value_priors: dict[str, dict[tuple[str, str], float]] = {}
    for n, space_id in enumerate(every, 1):
        started = time.monotonic()
        found, space_values, space_runs = _aggregates(
            store, space_id, window, floor, limits, sensitive
        )
        # Belt and braces: a name that is sensitive now never gets a prior.
        kept = [a for a in found if not is_sensitive_name(a.attr, sensitive)]
        rows = priors_from(kept, as_of, floor, window_days)
        same = _write_space(store, space_id, version, [row.as_tuple() for row in rows])
        unchanged = unchanged and same
        value_priors[space_id] = priors_by_key((r.attr, r.value, r.prior) for r in rows)
        values += space_values
        found_total += len(found)
        written += len(rows)
        if rows:
            per_space[space_id] = len(rows)
        if space_runs:
            runs[space_id] = space_runs
        log.info(
            "priors %d/%d: space %s, %d values, %d priors, %d run(s), %.1f s",
            n,
            len(every),
            space_id,
            space_values,
            len(rows),
            len(space_runs),
            time.monotonic() - started,
        )
    config = (signals or SignalsConfig()).with_sensitive(sensitive)
    fitted_fields: dict[str, int] = {}
    # A store not yet migrated to field_priors (migration 30) gets none.
    fitted_table = bool(store.query("EXISTS TABLE field_priors").rows[0][0])
    fit_spaces = (
        set()
        if not fitted_table
        else {
            s
            for (s,) in store.query(
                "SELECT DISTINCT space_id FROM signal_state UNION DISTINCT "
                "SELECT DISTINCT space_id FROM field_priors WHERE version = {version:UInt32}",
                {"version": version},
            ).rows
        }
    )
    for space_id in sorted(_among(fit_spaces, only)):
        types = None if types_for is None else types_for(space_id)
        fitted = (
            {}
            if types_for is not None and types is None
            else fit_space(
                store,
                space_id,
                value_priors.get(space_id, {}),
                config.for_space(types),
                types=types,
            )
        )
        same = write_field_priors(store, space_id, as_of, version, fitted)
        unchanged = unchanged and same
        if fitted:
            fitted_fields[space_id] = len(fitted)
        log.info("field priors: space %s, %d fields", space_id, len(fitted))
    return PriorsReport(
        as_of=as_of,
        version=version,
        window_start=start,
        window_end=end,
        floor=floor,
        values=values,
        below_floor=values - found_total,
        no_exposure=found_total - written,
        priors=written,
        per_space=per_space,
        unchanged=unchanged,
        runs=runs,
        purged=purged,
        sensitive_rows=sensitive_rows,
        weeks=weeks,
        field_priors=fitted_fields,
    )


def _among(spaces: set[str], only: Collection[str] | None) -> set[str]:
    """``spaces``, those of ``only`` alone when given."""
    return spaces if only is None else spaces & set(only)


def _write_space(store: Store, space_id: str, version: int, new: list[tuple[Any, ...]]) -> bool:
    """Replace the space's rows of ``version`` with ``new``; whether they were the same."""
    parameters = {"space": space_id, "version": version}
    old = store.query(
        f"SELECT {', '.join(f'`{c}`' for c in _COLUMNS)} FROM priors FINAL "
        "WHERE space_id = {space:String} AND version = {version:UInt32} "
        "ORDER BY space_id, attr, value",
        parameters,
    ).rows
    if [tuple(r) for r in old] == new:
        return True
    if old:
        store.command(
            "ALTER TABLE priors DELETE WHERE space_id = {space:String} "
            "AND version = {version:UInt32}",
            settings={"mutations_sync": 2},
            parameters=parameters,
        )
    if new:
        # No deduplication token (and no dedup window on the table): after the delete,
        # the same block must land again.
        store.insert("priors", new, _COLUMNS)
    return False
