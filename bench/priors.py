"""Priors at a tenant's scale: 90 days of presented lists and engagements into a
throw-away chDB store, then the nightly job, timed, with its peak memory, the rows of each
aggregate, the store's size, and the 10-person floor checked at its edges.

    .venv/bin/python bench/priors.py [--people N] [--catalogue N] [--items N] [--spaces N]

Defaults: 20,000 people, 50,000 objects per space, 2,000,000 presented items, 3 spaces.
Pages of 10 items, 4 visible, spread over 90 days; people and spaces drawn uniformly;
objects by popularity (log-uniform ranks: Zipf with exponent 1), each showing colour,
brand, price (10% of showings at a sale price) and size; ~5% of visible items engaged.
The rows are generated inside the store (INSERT ... SELECT, one per day), so the views
fill the aggregates as they would from the worker's inserts; rows older than 45 days
never stay in the raw table (its TTL), so the job reads the aggregates alone for them.

Planted among them, in the first space: colours seen by exactly 9 and 10 people (with
people on the window's first and last day, and one person on many days), and 10 people
of whom one is a day before the window or on the as-of day: the floor line says whether
each got a prior as it should. The same again (``midweek-``, and ten people seen only on
the first and last day) for the window as of the Thursday before, which starts and ends
mid-week (its edge days read from the daily rows, the weeks between from the roll-ups),
planted in a kept store that lacks them.

The job runs in a fresh process on the generated store (chDB runs in-process: its peak
RSS is the job's memory), twice (the second finds the same content). Prints figures;
asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.adapters.clickhouse.exposure_weight import weight_micro_sql
from turnstream.adapters.clickhouse.people_sets import people_keys
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.jobs.priors import (
    MIN_FLOOR,
    PriorsLimits,
    people_query,
    query_settings,
    recompute_priors,
    shares_query,
    version_of,
    window_of,
    window_parameters,
)

PAGE = 10
VISIBLE = 4
DAYS = 90
ENGAGE_ONE_IN = 20
COLORS = ("black", "white", "red", "blue", "green", "grey", "navy", "beige", "pink", "brown")
SIZES = ("XS", "S", "M", "L", "XL", "XXL", "36", "38", "40", "42")
AGGREGATES = (
    "interactions",
    "value_daily",
    "ref_values_daily",
    "value_weekly",
    "ref_values_weekly",
    "interactions_daily",
)

#: One day's pages: page g of the run, its space, person, time and items, as JSON.
_PAGES = """
INSERT INTO interactions (space_id, profile_id, source, conversation_id, session_id,
    idempotency_key, occurred_at, `for`, kind, exposure_id, list_id, payload, ingested_at,
    _topic, _partition, _offset)
SELECT space, person, 'web', person, person, concat('k', toString(g)), at, 'self',
    'presented', concat('x', toString(g)), 'results',
    concat('{"kind":"presented","exposure_id":"x', toString(g),
        '","list_id":"results","list_kind":"search_products","page":1,"delivered_at":"',
        formatDateTime(at, '%Y-%m-%dT%H:%i:%SZ'),
        '","visible_k":{visible},"method":"bridge","items":[', items, ']}'),
    now64(3), 'turnstream.interactions', 0, g
FROM (
    SELECT {first:UInt64} + number AS g, g % {spaces:UInt32} AS s,
        concat('space', toString(s)) AS space,
        concat('p', toString(intDiv(cityHash64(g, 1) % {people:UInt64}, {spaces:UInt32})
            * {spaces:UInt32} + s)) AS person,
        toDateTime64({day:Date}, 3, 'UTC') + toIntervalSecond(cityHash64(g, 2) % 86400) AS at,
        arrayStringConcat(arrayMap(pos -> {item}, range(1, {page} + 1)), ',') AS items
    FROM numbers({pages:UInt64})
)"""

#: The object at ``pos`` of page ``g`` (log-uniform rank), and what it shows.
_RANK = "toUInt64(pow({catalogue:UInt64}, cityHash64(g, pos, 3) / 18446744073709551616.0))"
_ITEM = (
    "concat('{\"pos\":', toString(pos), ',\"ref\":\"item_variant:', space, ':', "
    f'toString({_RANK}), \'","shown":{{"color":"\', '
    f"arrayElement({list(COLORS)}, cityHash64(s, {_RANK}, 4) % 10 + 1), "
    f'\'","brand":"brand-\', toString(cityHash64(s, {_RANK}, 5) % 200), '
    f'\'","price":\', toString(if(cityHash64(g, pos, 7) % 10 = 0, '
    f"round((19 + cityHash64(s, {_RANK}, 6) % 981 + 0.9) * 0.8, 1), "
    f"19 + cityHash64(s, {_RANK}, 6) % 981 + 0.9)), "
    f'\',"size":"\', arrayElement({list(SIZES)}, cityHash64(s, {_RANK}, 8) % 10 + 1), '
    "'\"}}')"
)

#: One day's engagements: visible items of the day's pages, one in 20.
_ENGAGED = (
    """
INSERT INTO interactions (space_id, profile_id, source, conversation_id, session_id,
    idempotency_key, occurred_at, `for`, kind, exposure_id, ref, payload, ingested_at,
    _topic, _partition, _offset)
SELECT space, person, 'web', person, person, concat('e', toString(g), '-', toString(pos)), at,
    'self', 'engaged', concat('x', toString(g)), ref,
    concat('{"kind":"engaged","exposure_id":"x', toString(g), '","ref":"', ref,
        '","action":"', arrayElement(['click', 'click', 'detail', 'cart'],
        cityHash64(g, pos, 10) % 4 + 1), '"}'),
    now64(3), 'turnstream.interactions', 1, g * 16 + pos
FROM (
    SELECT {first:UInt64} + number AS g, g % {spaces:UInt32} AS s,
        concat('space', toString(s)) AS space,
        concat('p', toString(intDiv(cityHash64(g, 1) % {people:UInt64}, {spaces:UInt32})
            * {spaces:UInt32} + s)) AS person,
        toDateTime64({day:Date}, 3, 'UTC') + toIntervalSecond(cityHash64(g, 2) % 86400) AS at,
        arrayJoin(range(1, {visible} + 1)) AS pos,
        concat('item_variant:', space, ':', toString("""
    + _RANK
    + """)) AS ref
    FROM numbers({pages:UInt64})
)
WHERE cityHash64(g, pos, 9) % {one_in} = 0"""
)


#: ``--direct``: the same pages, straight into the aggregates (no raw rows, no JSON), as
#: the views would fill them; the floor edges still go through the views.
_PAGE_ITEMS = """
    SELECT {first:UInt64} + number AS g, g % {spaces:UInt32} AS s,
        concat('space', toString(s)) AS space_id,
        concat('p', toString(intDiv(cityHash64(g, 1) % {people:UInt64}, {spaces:UInt32})
            * {spaces:UInt32} + s)) AS person,
        arrayJoin(range(1, {last_pos} + 1)) AS pos,
        RANK AS rank, concat('item_variant:', space_id, ':', toString(rank)) AS ref,
        [('item_variant.color', arrayElement(COLORS, cityHash64(s, rank, 4) % 10 + 1)),
         ('item_variant.brand', concat('brand-', toString(cityHash64(s, rank, 5) % 200))),
         ('item_variant.price', toString(if(cityHash64(g, pos, 7) % 10 = 0,
             round((19 + cityHash64(s, rank, 6) % 981 + 0.9) * 0.8, 1),
             19 + cityHash64(s, rank, 6) % 981 + 0.9))),
         ('item_variant.size', arrayElement(SIZES, cityHash64(s, rank, 8) % 10 + 1))] AS fields
    FROM numbers({pages:UInt64})"""
_DIRECT = (
    """
INSERT INTO value_daily (space_id, attr, value, day, level, people, exposure_micro)
SELECT space_id, pair.1 AS attr, pair.2 AS value, {day:Date} AS day, LEVEL AS level,
    PEOPLE_KEYS AS people,
    sum(WEIGHT_MICRO) AS exposure_micro
FROM (SELECT *, arrayJoin(arrayPushFront(fields, ('item_variant.ref', ref))) AS pair
      FROM (ITEMS_VISIBLE))
GROUP BY space_id, attr, value, level""",
    # Per object first (its fields follow from it), then one row per field value.
    """
INSERT INTO ref_values_daily (space_id, ref, attr, value, day, presentations)
SELECT space_id, ref, pair.1 AS attr, pair.2 AS value, {day:Date} AS day, pair.3
FROM (
    SELECT concat('space', toString(s)) AS space_id,
        concat('item_variant:', space_id, ':', toString(rank)) AS ref,
        19 + cityHash64(s, rank, 6) % 981 + 0.9 AS price,
        arrayJoin(arrayFilter(f -> f.3 > 0, [
            ('item_variant.color', arrayElement(COLORS, cityHash64(s, rank, 4) % 10 + 1), n),
            ('item_variant.brand', concat('brand-', toString(cityHash64(s, rank, 5) % 200)), n),
            ('item_variant.size', arrayElement(SIZES, cityHash64(s, rank, 8) % 10 + 1), n),
            ('item_variant.price', toString(price), toUInt64(n - sales)),
            ('item_variant.price', toString(round(price * 0.8, 1)), sales)])) AS pair
    FROM (
        SELECT s, rank, count() AS n, countIf(cityHash64(g, pos, 7) % 10 = 0) AS sales
        FROM (
            SELECT {first:UInt64} + number AS g, g % {spaces:UInt32} AS s,
                arrayJoin(range(1, PAGE_ITEMS + 1)) AS pos, RANK AS rank
            FROM numbers({pages:UInt64})
        )
        GROUP BY s, rank
    )
)""",
    """
INSERT INTO value_daily (space_id, attr, value, day, events, signal_micro)
SELECT space_id, 'item_variant.ref', ref, {day:Date}, count(),
    sum(if(cityHash64(g, pos, 10) % 4 = 3, 2000000, 1000000))
FROM (ITEMS_VISIBLE)
WHERE cityHash64(g, pos, 9) % ONE_IN = 0
GROUP BY space_id, ref""",
    """
INSERT INTO interactions_daily (space_id, day, kind, rows)
SELECT space_id, {day:Date}, 'presented', uniqExact(g) FROM (ITEMS_VISIBLE) GROUP BY space_id""",
)


def generate_direct(store: Store, args: argparse.Namespace, today: date) -> int:
    """``--direct``: the 90 days straight into the aggregates; the pages written."""
    from turnstream.adapters.clickhouse.people_sets import level_of

    pages = args.items // PAGE // DAYS
    items = _PAGE_ITEMS.replace("RANK", _RANK.replace("{catalogue:UInt64}", "{catalogue:UInt64}"))
    items = items.replace("COLORS", str(list(COLORS))).replace("SIZES", str(list(SIZES)))
    statements = [
        sql.replace("ITEMS_VISIBLE", items.replace("{last_pos}", str(VISIBLE)))
        .replace("PAGE_ITEMS", str(PAGE))
        .replace("RANK", _RANK)
        .replace("COLORS", str(list(COLORS)))
        .replace("SIZES", str(list(SIZES)))
        .replace("LEVEL", level_of("sipHash64(person)"))
        .replace("PEOPLE_KEYS", people_keys("sipHash64(person)"))
        .replace("WEIGHT_MICRO", weight_micro_sql("pos"))
        .replace("ONE_IN", str(ENGAGE_ONE_IN))
        for sql in _DIRECT
    ]
    started = time.perf_counter()
    for n, back in enumerate(range(DAYS, 0, -1)):
        parameters = {
            "first": n * pages,
            "pages": pages,
            "people": args.people,
            "spaces": args.spaces,
            "catalogue": args.catalogue,
            "day": today - timedelta(days=back),
        }
        for sql in statements:
            store.command(sql, parameters=parameters)
        if (n + 1) % 15 == 0:
            print(f"  day {n + 1}/{DAYS}: {time.perf_counter() - started:.0f} s", flush=True)
    return pages * DAYS


def generate(store: Store, args: argparse.Namespace, today: date) -> int:
    """Insert the 90 days; the pages written."""
    pages = args.items // PAGE // DAYS
    presented = _PAGES.replace("{item}", _ITEM).replace("{page}", str(PAGE))
    presented = presented.replace("{visible}", str(VISIBLE))
    engaged = _ENGAGED.replace("{visible}", str(VISIBLE)).replace("{one_in}", str(ENGAGE_ONE_IN))
    started = time.perf_counter()
    for n, back in enumerate(range(DAYS, 0, -1)):
        parameters = {
            "first": n * pages,
            "pages": pages,
            "people": args.people,
            "spaces": args.spaces,
            "catalogue": args.catalogue,
            "day": today - timedelta(days=back),
        }
        store.command(presented, parameters=parameters)
        store.command(engaged, parameters=parameters)
        if (n + 1) % 15 == 0:
            print(f"  day {n + 1}/{DAYS}: {time.perf_counter() - started:.0f} s", flush=True)
    return pages * DAYS


def midweek_as_of(as_of: date) -> date:
    """The Thursday before ``as_of``: its 90-day window starts on a Friday and ends on a
    Wednesday, so both ends are days read from the daily rows, not whole weeks."""
    return as_of - timedelta(days=(as_of.weekday() - 3) % 7 or 7)


def plant_floor_edges(store: Store, today: date, prefix: str = "edge") -> None:
    """Colours at the floor's edges in ``space0`` (see the module's docstring), named
    ``prefix``-9 and so on, for the window as of ``today``."""
    start, end = window_of(today)
    first, last, before = start, end - timedelta(days=1), start - timedelta(days=1)
    mid = today - timedelta(days=40)
    plans = {
        # 9 people; p0 on 20 days
        f"{prefix}-9": [(f"p{3 * i}", d) for i, d in enumerate([first, last, *[mid] * 7])]
        + [("p0", today - timedelta(days=k)) for k in range(2, 22)],
        f"{prefix}-10": [(f"p{3 * i}", d) for i, d in enumerate([first, last, *[mid] * 8])],
        f"{prefix}-10-before": [(f"p{3 * i}", d) for i, d in enumerate([before, last, *[mid] * 8])],
        f"{prefix}-10-as-of": [(f"p{3 * i}", d) for i, d in enumerate([first, today, *[mid] * 8])],
        # ten people on the two edge weeks' days only (none in a whole week)
        f"{prefix}-10-edges": [(f"p{3 * i}", d) for i, d in enumerate([first, last] * 5)],
    }
    rows = []
    for color, seen in plans.items():
        for k, (person, day) in enumerate(seen):
            at = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
            payload = {
                "kind": "presented",
                "exposure_id": f"{color}-{k}",
                "list_id": "results",
                "page": 1,
                "delivered_at": at.isoformat(),
                "visible_k": 1,
                "items": [
                    {"pos": 1, "ref": f"item_variant:space0:{color}", "shown": {"color": color}}
                ],
            }
            ref = f"item_variant:space0:{color}"
            click = {"kind": "engaged", "ref": ref, "action": "click"}
            rows.append((person, at, "presented", "", json.dumps(payload), len(rows)))
            rows.append((person, at, "engaged", ref, json.dumps(click), len(rows)))
    store.insert(
        "interactions",
        [("space0", "web", *row, 2) for row in rows],
        [
            *("space_id", "source", "profile_id", "occurred_at", "kind", "ref", "payload"),
            *("_offset", "_partition"),
        ],
    )


def sizes(store: Store) -> list[tuple[str, int, int]]:
    return [
        (t, int(r), int(b))
        for t, r, b in store.query(
            "SELECT table, sum(rows), sum(bytes_on_disk) FROM system.parts "
            "WHERE database = currentDatabase() AND active GROUP BY table ORDER BY table"
        ).rows
    ]


def time_statements(store: Store) -> list[tuple[float, float, str]]:
    """Record each statement the store runs from now on: (wall s, CPU s, its first words).
    chDB keeps no ``system.query_log``, so the job's statements are timed here."""
    timed: list[tuple[float, float, str]] = []
    for name in ("query", "command", "insert"):
        method = getattr(store, name)

        def timing(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return _method(*args, **kwargs)
            finally:
                what = " ".join(str(args[0]).split())[:60] if args else _name
                timed.append((time.perf_counter() - started, time.process_time() - cpu, what))

        setattr(store, name, timing)
    return timed


def compare_weeks(store: Store, as_of: date, limits: PriorsLimits, repeats: int) -> dict[str, Any]:
    """The job's two queries per space as a whole (no sensitive names) two ways,
    alternating (A B, B A, ...): ``days``, every day of the window from the daily
    aggregates (the job before migration 20: the same queries with no whole week), and
    ``weeks``, the whole weeks from the roll-ups and the edge days from the daily rows
    (the job now). CPU seconds of each side, and whether both find the same rows."""
    start, end = window_of(as_of)
    ways = {
        "days": {"start": start, "end": end, "weeks_start": end, "weeks_end": end},
        "weeks": window_parameters(start, end),
    }
    spaces = [s for (s,) in store.query("SELECT DISTINCT space_id FROM value_daily").rows]
    sides = {"people": people_query(MIN_FLOOR), "shares": shares_query()}
    cpu: dict[str, dict[str, list[float]]] = {w: {side: [] for side in sides} for w in ways}
    found: dict[str, list[Any]] = {}
    for rep in range(repeats):
        for way in list(ways) if rep % 2 == 0 else list(ways)[::-1]:
            rows = []
            for side, sql in sides.items():
                started = time.process_time()
                for space in spaces:
                    got = store.query(
                        sql,
                        {**ways[way], "space": space, "hidden": []},
                        settings=query_settings(limits),
                    ).rows
                    rows += [(side, space, *r) for r in got]
                cpu[way][side].append(time.process_time() - started)
            found[way] = sorted(
                (side, sp, a, v, sorted(lv) if side == "people" else lv, *rest)
                for side, sp, a, v, lv, *rest in rows
            )
    read = {
        table: int(
            store.scalar(
                f"SELECT count() FROM {table} WHERE {column} >= {{start:Date}} "
                f"AND {column} < {{end:Date}}",
                {"start": ways["weeks"][lo], "end": ways["weeks"][hi]},
            )
        )
        for table, column, lo, hi in [
            ("value_daily", "day", "start", "end"),
            ("ref_values_daily", "day", "start", "end"),
            ("value_weekly", "week", "weeks_start", "weeks_end"),
            ("ref_values_weekly", "week", "weeks_start", "weeks_end"),
        ]
    }
    edges = {
        table: int(
            store.scalar(
                f"SELECT count() FROM {table} WHERE (day >= {{start:Date}} AND day < "
                "{weeks_start:Date}) OR (day >= {weeks_end:Date} AND day < {end:Date})",
                ways["weeks"],
            )
        )
        for table in ("value_daily", "ref_values_daily")
    }
    return {
        "cpu": cpu,
        "found": {w: len(f) for w, f in found.items()},
        "same": found["days"] == found["weeks"],
        "rows": read,
        "edge_rows": edges,
        "window": {k: v.isoformat() for k, v in ways["weeks"].items()},
    }


def run_job(
    path: str,
    database: str,
    as_of: date,
    max_memory: int,
    split_rows: int,
    weeks_ratio: float,
    compare: int,
) -> None:
    """The job, twice, in this (fresh) process; its figures as JSON on the last line."""
    store = Store(f"chdb://{path}", database)
    statements = time_statements(store)
    rss_open = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    limits = PriorsLimits(max_memory=max_memory, split_rows=split_rows, weeks_ratio=weeks_ratio)
    timings = []
    cpu = []
    reports = []
    for run in range(2):
        if run == 1:
            first_run = list(statements)
        started, cpu_started = time.perf_counter(), time.process_time()
        report = recompute_priors(store, as_of, limits=limits)
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - cpu_started)
        reports.append(report.as_dict())
    edges = dict(
        store.query(
            "SELECT value, people FROM priors_latest WHERE space_id = 'space0' "
            "AND attr = 'item_variant.color' AND startsWith(value, 'edge-')"
        ).rows
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    # The floor again for a window that starts and ends mid-week (after the peak: a
    # third run of the job, its own version).
    midweek = midweek_as_of(as_of)
    recompute_priors(store, midweek, limits=limits)
    edges.update(
        store.query(
            "SELECT value, people FROM priors FINAL WHERE space_id = 'space0' "
            "AND attr = 'item_variant.color' AND startsWith(value, 'midweek-') "
            "AND version = {version:UInt32}",
            {"version": version_of(midweek)},
        ).rows
    )
    people = compare_weeks(store, as_of, limits, compare) if compare else None
    store.close()
    print(
        json.dumps(
            {
                "seconds": timings,
                "cpu_seconds": cpu,
                "peak_rss": peak,
                "rss_after_open": rss_open,
                "report": reports[0],
                "second_unchanged": reports[1]["unchanged"],
                "edges": edges,
                "statements": sorted(first_run, key=lambda t: -t[1]),
                "people": people,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=20_000)
    parser.add_argument("--catalogue", type=int, default=50_000, help="objects per space")
    parser.add_argument("--items", type=int, default=2_000_000, help="presented items")
    parser.add_argument("--spaces", type=int, default=3)
    parser.add_argument("--max-memory", type=int, default=PriorsLimits().max_memory)
    parser.add_argument("--split-rows", type=int, default=PriorsLimits().split_rows)
    parser.add_argument(
        "--weeks-ratio",
        type=float,
        default=PriorsLimits().weeks_ratio,
        help="read the weekly roll-ups past this ratio of daily to weekly rows (0: always)",
    )
    parser.add_argument("--store", help="keep the store here (reused when it exists)")
    parser.add_argument(
        "--direct",
        action="store_true",
        help="write the aggregates as the views would, without raw rows (large volumes)",
    )
    parser.add_argument(
        "--compare-weeks",
        type=int,
        default=0,
        metavar="N",
        help="after the job, its two queries reading every day, then the weeks: N times each",
    )
    parser.add_argument("--job-only", nargs=2, metavar=("PATH", "AS_OF"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job_only:
        path, as_of = args.job_only
        run_job(
            path,
            "bench",
            date.fromisoformat(as_of),
            args.max_memory,
            args.split_rows,
            args.weeks_ratio,
            args.compare_weeks,
        )
        return
    today = datetime.now(UTC).date()
    print(
        f"volume: {args.spaces} spaces, {args.people:,} people, {args.items:,} presented items "
        f"(pages of {PAGE}, {VISIBLE} visible) over {DAYS} days, {args.catalogue:,} objects "
        f"per space (Zipf), 4 shown fields, 1 in {ENGAGE_ONE_IN} visible items engaged",
        flush=True,
    )
    var = Path(__file__).resolve().parents[1] / "var"
    var.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=var) as tmp:
        path = args.store or f"{tmp}/store"
        reuse = Path(path).exists()
        store = Store(f"chdb://{path}", "bench")
        if not reuse:
            apply_migrations(store)
            started = time.perf_counter()
            pages = (generate_direct if args.direct else generate)(store, args, today)
            plant_floor_edges(store, today)
            plant_floor_edges(store, midweek_as_of(today), "midweek")
            print(
                f"generated {pages * PAGE:,} presented items in "
                f"{time.perf_counter() - started:.0f} s "
                f"({'straight into the aggregates' if args.direct else 'views included'})",
                flush=True,
            )
            started = time.perf_counter()
            for table in ("value_daily", "ref_values_daily", "value_weekly", "ref_values_weekly"):
                store.command(f"OPTIMIZE TABLE {table} FINAL")
            print(f"merged the aggregates in {time.perf_counter() - started:.0f} s")
        else:
            # A store kept from an older schema: its migrations now, timed.
            started, cpu = time.perf_counter(), time.process_time()
            applied = apply_migrations(store)
            if applied:
                print(
                    f"migrations {applied} on the kept store: "
                    f"{time.perf_counter() - started:.1f} s ({time.process_time() - cpu:.1f} s "
                    f"of CPU)",
                    flush=True,
                )
            if not store.scalar(
                "SELECT count() FROM value_daily WHERE space_id = 'space0' "
                "AND startsWith(value, 'midweek-')"
            ):
                plant_floor_edges(store, midweek_as_of(today), "midweek")
        for table, rows, size in sizes(store):
            if table in AGGREGATES or rows:
                print(f"  {table:<22} {rows:>13,} rows  {size / 2**20:>10,.1f} MiB on disk")
        total = sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())
        print(f"  store on disk: {total / 2**30:.2f} GiB")
        store.close()
        child = subprocess.run(
            [
                sys.executable,
                __file__,
                "--job-only",
                path,
                today.isoformat(),
                "--max-memory",
                str(args.max_memory),
                "--split-rows",
                str(args.split_rows),
                "--weeks-ratio",
                str(args.weeks_ratio),
                "--compare-weeks",
                str(args.compare_weeks),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode != 0:
            print(child.stderr[-4000:])
            raise SystemExit(child.returncode)
        result = json.loads(child.stdout.strip().splitlines()[-1])
        first, second = result["seconds"]
        report = result["report"]
        cpu_first, cpu_second = result["cpu_seconds"]
        load = Path("/proc/loadavg").read_text().split()[0]
        print(
            f"priors job: {first:.2f} s, {cpu_first:.2f} s of CPU (second run {second:.2f} s, "
            f"{cpu_second:.2f} s of CPU, unchanged: {result['second_unchanged']}), peak RSS "
            f"{result['peak_rss'] / 2**30:.2f} GiB (after opening the store: "
            f"{result['rss_after_open'] / 2**30:.2f} GiB); load average {load}"
        )
        print(
            f"  {report['values']:,} values, {report['priors']:,} priors, runs: "
            f"{ {s: len(r) for s, r in report['runs'].items()} }, whole weeks from the "
            f"roll-ups: {report['weeks']}"
        )
        edges = result["edges"]
        expected = {
            f"{prefix}-{k}": v
            for prefix in ("edge", "midweek")
            for k, v in {"9": None, "10": 10, "10-before": None, "10-as-of": None}.items()
        }
        expected["midweek-10-edges"] = 10
        got = {k: edges.get(k) for k in expected}
        print(f"floor line: {got} -> {'exact' if got == expected else 'WRONG'}")
        # Where the first run's CPU went, by statement shape (scalar() goes through query()).
        shapes: dict[str, list[float]] = {}
        for wall, cpu_s, what in result["statements"]:
            shapes.setdefault(what, [0, 0.0, 0.0])
            shapes[what][0] += 1
            shapes[what][1] += cpu_s
            shapes[what][2] += wall
        if result["people"]:
            p = result["people"]
            load = Path("/proc/loadavg").read_text().split()[0]
            for side in ("people", "shares"):
                days = sorted(p["cpu"]["days"][side])
                weeks = sorted(p["cpu"]["weeks"][side])
                d, w = days[len(days) // 2], weeks[len(weeks) // 2]
                print(
                    f"{side} side, whole spaces, CPU s (median of {len(days)}): every day "
                    f"{d:.2f}, weeks {w:.2f} ({d / w:.2f}x less); load average {load}"
                )
            print(
                f"  rows found {p['found']} ({'same rows' if p['same'] else 'DIFFERENT'}); "
                f"window {p['window']}; rows in it: {p['rows']}; edge days: {p['edge_rows']}"
            )
        print("first run's statements, by CPU:")
        for what, (n, cpu_s, wall) in sorted(shapes.items(), key=lambda kv: -kv[1][1])[:8]:
            print(f"  {cpu_s:7.2f} s CPU {wall:7.2f} s wall  x{n:<3} {what}")


if __name__ == "__main__":
    main()
