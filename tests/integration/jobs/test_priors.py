"""Priors and retention on real ClickHouse (chDB): raw interactions in, the daily
aggregates filled by the views, priors at the 10-person floor with hand-computed values,
and days past the raw TTL still counted."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from itertools import count
from typing import Any

import pytest

from turnstream.adapters.clickhouse.priors import latest_priors
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.rows import COLUMNS
from turnstream.jobs.priors import (
    PriorsLimits,
    PriorsMemoryError,
    recompute_priors,
    whole_weeks,
    window_of,
)
from turnstream.jobs.retention import retention_check

pytestmark = pytest.mark.integration

TODAY = datetime.now(UTC).date()
RECENT = TODAY - timedelta(days=10)  # still in the raw table
EXPIRED = TODAY - timedelta(days=80)  # past the 45-day raw TTL, inside the 90-day window

_offsets = count()
DAY = timedelta(days=1)


def _row(person: str, day: date, kind: str, payload: dict[str, Any], ref: str = "") -> tuple:
    at = datetime.combine(day, time(12), tzinfo=UTC)
    offset = next(_offsets)
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True)
    return (
        "acme",
        person,
        "web",
        f"c-{person}",
        f"c-{person}",
        f"k{offset}",
        at,
        "self",
        "",
        0,
        kind,
        payload.get("exposure_id", ""),
        payload.get("list_id", ""),
        ref,
        "",
        text,
        datetime.now(UTC),
        "turnstream.interactions",
        0,
        offset,
    )


def _presented(person: str, day: date, items: Sequence[tuple[str, dict]], visible_k: int) -> tuple:
    payload = {
        "kind": "presented",
        "exposure_id": f"x-{person}-{day}",
        "list_id": "results",
        "list_kind": "search_products",
        "page": 1,
        "delivered_at": f"{day}T12:00:00+00:00",
        "visible_k": visible_k,
        "method": "bridge",
        "items": [
            {"pos": pos, "ref": ref, "shown": shown} for pos, (ref, shown) in enumerate(items, 1)
        ],
    }
    return _row(person, day, "presented", payload)


def _engaged(person: str, day: date, ref: str, action: str) -> tuple:
    payload = {"kind": "engaged", "exposure_id": f"x-{person}-{day}", "ref": ref, "action": action}
    return _row(person, day, "engaged", payload, ref=ref)


def _insert(store: Store, rows: list[tuple]) -> None:
    store.insert("interactions", rows, COLUMNS["interactions"])


def _priors(store: Store) -> list[tuple]:
    return store.query(
        "SELECT attr, value, people, events, exposure, signal, prior, version FROM priors "
        "ORDER BY attr, value, version"
    ).rows


BLACK = ("item_variant:acme:1", {"color": "black", "price": 200.0})
RED = ("item_variant:acme:2", {"color": "red", "size": None})
GREEN = ("item_variant:acme:3", {"color": "green"})  # pos 3 of visible_k 2: never exposed
BLUE = ("item_variant:acme:4", {"color": "blue"})
WHITE = ("item_variant:acme:5", {"color": "white"})


@pytest.fixture
def acme(store: Store) -> Store:
    """Ten people shown black, red, green; nine shown blue; white seen by five people 80
    days ago and five 10 days ago; a few engagements."""
    rows = [_presented(f"p{i}", RECENT, [BLACK, RED, GREEN], visible_k=2) for i in range(10)]
    rows += [_presented(f"q{i}", RECENT, [BLUE], visible_k=3) for i in range(9)]
    rows += [_presented(f"w{i}", RECENT, [WHITE], visible_k=1) for i in range(5)]
    rows += [
        _engaged("p0", RECENT, BLACK[0], "cart"),
        _engaged("p1", RECENT, BLACK[0], "click"),
        _engaged("p2", RECENT, RED[0], "detail"),
        _engaged("q0", RECENT, BLUE[0], "click"),
    ]
    _insert(store, rows)
    _insert(
        store,
        [_presented(f"v{i}", EXPIRED, [WHITE], visible_k=1) for i in range(5)]
        + [_engaged("v0", EXPIRED, WHITE[0], "click")],
    )
    return store


def test_priors_at_the_floor_with_hand_computed_values(acme: Store) -> None:
    report = recompute_priors(acme, TODAY)
    assert (report.priors, report.per_space) == (7, {"acme": 7})
    version = int(TODAY.strftime("%Y%m%d"))
    # black: 10 people at pos 1 (weight 1) → exposure 10; cart 2 + click 1 → prior 0.3.
    # red: pos 2 weighs 1 / log2(3) = 0.630930 → exposure 6.3093; detail 1 → 0.158496.
    # white: 5 people 80 days ago + 5 people 10 days ago = 10 at pos 1; one click → 0.1.
    # blue: 9 people → no prior; green: never visible → no exposure, no prior.
    assert _priors(acme) == [
        ("item_variant.color", "black", 10, 2, 10.0, 3.0, 0.3, version),
        ("item_variant.color", "red", 10, 1, 6.3093, 1.0, 0.158496, version),
        ("item_variant.color", "white", 10, 1, 10.0, 1.0, 0.1, version),
        ("item_variant.price", "200", 10, 2, 10.0, 3.0, 0.3, version),
        ("item_variant.ref", "item_variant:acme:1", 10, 2, 10.0, 3.0, 0.3, version),
        ("item_variant.ref", "item_variant:acme:2", 10, 1, 6.3093, 1.0, 0.158496, version),
        ("item_variant.ref", "item_variant:acme:5", 10, 1, 10.0, 1.0, 0.1, version),
    ]
    priors = latest_priors(acme, "acme")
    assert priors[("item_variant.color", "black")] == 0.3
    assert priors[("item_variant.price", "200.0")] == 0.3  # as the signals rules key 200.0
    assert ("item_variant.color", "blue") not in priors
    assert ("item_variant.color", "green") not in priors
    assert latest_priors(acme, "lumen") == {}


def test_a_value_seen_past_the_raw_ttl_still_counts(acme: Store) -> None:
    day = f"toDate('{EXPIRED}')"
    # The views captured the expired day when it was inserted ...
    assert (
        acme.scalar(
            "SELECT sum(n) FROM (SELECT level, length(groupUniqArrayArray(64)(people)) AS n "
            "FROM value_daily WHERE attr = 'item_variant.color' AND value = 'white' "
            f"AND day = {day} GROUP BY level)"
        )
        == 5
    )
    # ... and the raw rows are gone (ClickHouse drops already-expired rows at insert;
    # the delete applies the 45-day TTL where it would wait for a merge).
    acme.command(
        "ALTER TABLE interactions DELETE WHERE occurred_at < now() - INTERVAL 45 DAY",
        settings={"mutations_sync": 2},
    )
    assert acme.scalar(f"SELECT count() FROM interactions WHERE toDate(occurred_at) = {day}") == 0
    assert acme.scalar("SELECT count() FROM interactions") == 28
    recompute_priors(acme, TODAY)
    assert latest_priors(acme, "acme")[("item_variant.color", "white")] == 0.1
    # Without the expired day, white is 5 people short of the floor.
    recompute_priors(acme, TODAY, window_days=30)
    assert ("item_variant.color", "white") not in latest_priors(acme, "acme")


def test_recomputing_gives_the_same_content_without_duplicates(acme: Store) -> None:
    first = recompute_priors(acme, TODAY)
    rows = _priors(acme)
    second = recompute_priors(acme, TODAY)
    assert (first.unchanged, second.unchanged) == (False, True)
    assert _priors(acme) == rows
    assert acme.scalar("SELECT count() FROM priors") == 7
    # New evidence for the same as-of date replaces that version, still without duplicates.
    _insert(acme, [_engaged("p3", RECENT, RED[0], "cart")])
    third = recompute_priors(acme, TODAY)
    assert not third.unchanged
    assert acme.scalar("SELECT count() FROM priors") == 7
    assert latest_priors(acme, "acme")[("item_variant.color", "red")] == pytest.approx(3 / 6.3093)
    # A later as-of date is a new version; the latest is what priors_latest serves.
    recompute_priors(acme, TODAY + timedelta(days=1))
    assert acme.scalar("SELECT count() FROM priors") == 14
    assert acme.scalar("SELECT count() FROM priors_latest") == 7


def test_a_floor_below_ten_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="at least 10"):
        recompute_priors(store, TODAY, floor=9)


def test_retention_reports_the_expired_days_as_covered(acme: Store) -> None:
    report = retention_check(acme, TODAY)
    assert (report.window_start, report.window_end) == (
        TODAY - timedelta(days=90),
        TODAY - timedelta(days=45),
    )
    assert [(d.space_id, d.day, d.presented, d.engaged, d.covered) for d in report.days] == [
        ("acme", EXPIRED, 5, 1, True)
    ]
    assert report.gaps == []
    tables = {t.table: t for t in report.tables}
    assert tables["interactions"].ttl == "toDateTime(occurred_at) + toIntervalDay(45)"
    assert tables["interactions"].rows == 28
    assert tables["interactions"].oldest == datetime.combine(RECENT, time(12), tzinfo=UTC)
    assert tables["value_daily"].oldest == EXPIRED
    assert tables["value_daily"].ttl == "day + toIntervalDay(100)"
    assert tables["turns"].rows == 0 and tables["turns"].ttl is None
    # A day the ledger saw but the aggregates lack is a gap.
    gap_day = TODAY - timedelta(days=60)
    acme.insert(
        "interactions_daily",
        [("acme", gap_day, "presented", 3)],
        ["space_id", "day", "kind", "rows"],
    )
    gaps = retention_check(acme, TODAY).gaps
    assert [(g.day, g.presented, g.exposed_values) for g in gaps] == [(gap_day, 3, 0)]
    assert retention_check(acme, TODAY).as_dict()["gaps"][0]["covered"] is False


def _shown_to(people: list[str], days: list[date], item: tuple[str, dict]) -> list[tuple]:
    return [_presented(p, d, [item], visible_k=1) for p, d in zip(people, days, strict=True)]


def test_the_floor_is_exact_at_the_window_edges(store: Store) -> None:
    start, last = TODAY - timedelta(days=90), TODAY - timedelta(days=1)
    mid = TODAY - timedelta(days=30)
    edges = {
        # 9 people, one of them on 20 days: still 9
        "nine": (["a0", "a1", *[f"a{i}" for i in range(2, 9)]], [start, last, *[mid] * 7]),
        "ten": ([f"b{i}" for i in range(10)], [start, last, *[mid] * 8]),
        # one of the ten the day before the window, one on the as-of day: 9 in the window
        "ten-before": ([f"c{i}" for i in range(10)], [start - timedelta(days=1), *[mid] * 9]),
        "ten-as-of": ([f"d{i}" for i in range(10)], [TODAY, *[mid] * 9]),
    }
    rows = []
    for n, (color, (people, days)) in enumerate(edges.items()):
        item = (f"item_variant:acme:{100 + n}", {"color": color})
        rows += [*_shown_to(people, days, item), _engaged(people[1], mid, item[0], "click")]
    rows += [
        _presented(
            "a0", TODAY - timedelta(days=k), [("item_variant:acme:100", {"color": "nine"})], 1
        )
        for k in range(2, 22)
    ]
    _insert(store, rows)
    recompute_priors(store, TODAY)
    people = {value: n for attr, value, n, *_ in _priors(store) if attr == "item_variant.color"}
    assert people == {"ten": 10}


@pytest.mark.parametrize("weeks_ratio", [0.0, float("inf")], ids=["weeks", "days"])
def test_the_floor_is_exact_when_the_window_starts_and_ends_mid_week(
    store: Store, weeks_ratio: float
) -> None:
    # Seven as-of days, so the window starts and ends on every weekday: the whole weeks
    # come from the weekly roll-ups, the days at the edges from the daily rows.
    rows, as_ofs = [], [TODAY - timedelta(days=k) for k in range(7)]
    for k, as_of in enumerate(as_ofs):
        start, end = window_of(as_of)
        weeks_start, weeks_end = whole_weeks(start, end)
        first, last = start, end - timedelta(days=1)
        mid = weeks_start + timedelta(days=17)  # inside a whole week
        edges = {
            # 9 people; e0 on the first day, in a whole week and on the last day
            "nine": ([f"e{i}" for i in range(9)], [first, last, *[mid] * 7]),
            "ten": ([f"f{i}" for i in range(10)], [first, last, *[mid] * 8]),
            # both edges' neighbours outside: 9 in the window each
            "ten-before": ([f"g{i}" for i in range(10)], [first - timedelta(days=1), *[mid] * 9]),
            "ten-as-of": ([f"h{i}" for i in range(10)], [end, *[mid] * 9]),
            # ten only at the edges (no whole week), and ten only in whole weeks
            "ten-edges": ([f"i{i}" for i in range(10)], [first, last] * 5),
            "ten-weeks": ([f"j{i}" for i in range(10)], [weeks_start, weeks_end - DAY] * 5),
        }
        for n, (color, (people, days)) in enumerate(edges.items()):
            item = (f"item_variant:acme:{1000 + 10 * k + n}", {"color": f"{color}-{k}"})
            people = [f"{p}-{k}" for p in people]
            rows += [*_shown_to(people, days, item), _engaged(people[1], mid, item[0], "click")]
        nine = (f"item_variant:acme:{1000 + 10 * k}", {"color": f"nine-{k}"})
        rows += [_presented(f"e0-{k}", day, [nine], 1) for day in (first, mid, last)]
    _insert(store, rows)
    for k, as_of in enumerate(as_ofs):
        report = recompute_priors(store, as_of, limits=PriorsLimits(weeks_ratio=weeks_ratio))
        assert report.weeks == (weeks_ratio == 0)
        version = int(as_of.strftime("%Y%m%d"))
        people = {
            value: n
            for attr, value, n, *_, v in _priors(store)
            if attr == "item_variant.color" and v == version and value.endswith(f"-{k}")
        }
        assert people == {f"ten-{k}": 10, f"ten-edges-{k}": 10, f"ten-weeks-{k}": 10}, as_of


def test_the_weekly_roll_ups_hold_the_daily_rows_merged_by_week(store: Store) -> None:
    # Many inserts over many days, some of them by INSERT ... SELECT (as a landing table
    # split later fills the raw tables): each week of the roll-ups is its days merged.
    rand = random.Random(21)
    rows = []
    for _ in range(400):
        n = rand.randint(0, 11)
        item = (f"item_variant:acme:{500 + n}", {"color": f"c{n % 4}", "size": rand.choice("SML")})
        person, day = f"p{rand.randint(0, 70)}", TODAY - timedelta(days=rand.randint(0, 40))
        rows.append(_presented(person, day, [item], rand.randint(1, 2)))
        if rand.random() < 0.3:
            rows.append(_engaged(person, day, item[0], rand.choice(["click", "cart"])))
    for k in range(0, 200, 40):
        _insert(store, rows[k : k + 40])
    store.command("CREATE TABLE landing AS interactions")
    store.insert("landing", rows[200:], COLUMNS["interactions"])
    store.command("INSERT INTO interactions SELECT * FROM landing")
    for daily, weekly, keys, sums in [
        ("value_daily", "value_weekly", "attr, value, level",
         "arraySort(groupUniqArrayArray(64)(people)), sum(exposure_micro), sum(events), "
         "sum(signal_micro)"),
        ("ref_values_daily", "ref_values_weekly", "attr, ref, value", "sum(presentations)"),
    ]:  # fmt: skip
        by_day = store.query(
            f"SELECT {keys}, toMonday(day) AS week, {sums} FROM {daily} "
            f"GROUP BY {keys}, week ORDER BY ALL"
        ).rows
        by_week = store.query(
            f"SELECT {keys}, week, {sums} FROM {weekly} GROUP BY {keys}, week ORDER BY ALL"
        ).rows
        assert by_week == by_day and len(by_day) > 50, weekly
    assert store.scalar("SELECT sum(events) FROM value_weekly") == sum(
        1 for r in rows if r[COLUMNS["interactions"].index("kind")] == "engaged"
    )


def test_people_are_exact_below_64_and_estimated_above(store: Store) -> None:
    grey = ("item_variant:acme:7", {"color": "grey"})
    navy = ("item_variant:acme:8", {"color": "navy"})
    rows = [_presented(f"g{i}", RECENT - timedelta(days=i % 30), [grey], 1) for i in range(63)]
    rows += [_presented(f"n{i}", RECENT - timedelta(days=i % 30), [navy], 1) for i in range(3000)]
    rows += [_engaged("g1", RECENT, grey[0], "click"), _engaged("n1", RECENT, navy[0], "click")]
    _insert(store, rows)
    recompute_priors(store, TODAY)
    people = {v: n for a, v, n, *_ in _priors(store) if a == "item_variant.color"}
    assert people["grey"] == 63
    assert 2000 <= people["navy"] <= 4000  # 3,000 people; an estimate within a third
    kept = store.scalar(
        "SELECT max(n) FROM (SELECT length(groupUniqArrayArray(64)(people)) AS n "
        "FROM value_daily WHERE attr = 'item_variant.color' AND value = 'navy' "
        "GROUP BY day, level)"
    )
    assert kept == 64  # per value, day and level, whatever the traffic


def test_a_large_space_runs_by_attribute_with_the_same_priors(acme: Store) -> None:
    # A second type whose objects show a colour too: its colour's run shares only its own
    # objects' engagements (value_daily's `bundle.ref` rows), read by key range.
    bundle = ("bundle:acme:9", {"color": "black", "price": 99.5})
    _insert(
        acme,
        [_presented(f"b{i}", RECENT, [bundle], visible_k=1) for i in range(10)]
        + [_engaged("b0", RECENT, bundle[0], "cart")],
    )
    whole = recompute_priors(acme, TODAY)
    rows = _priors(acme)
    split = recompute_priors(acme, TODAY + timedelta(days=1), limits=PriorsLimits(split_rows=1))
    assert whole.runs == {"acme": ["*"]}
    assert sorted(split.runs["acme"]) == [
        "bundle.color",
        "bundle.price",
        "bundle.ref",
        "item_variant.color",
        "item_variant.price",
        "item_variant.ref",
    ]
    later = int((TODAY + timedelta(days=1)).strftime("%Y%m%d"))
    assert [r[:7] for r in _priors(acme) if r[7] == later] == [r[:7] for r in rows]
    # The bundle's colour has its own object's cart (2), not the item variants' signal.
    assert ("bundle.color", "black", 10, 1, 10.0, 2.0, 0.2) in [r[:7] for r in rows]


def test_a_run_past_its_memory_limit_fails_with_a_clear_message(acme: Store) -> None:
    with pytest.raises(PriorsMemoryError, match=r"space 'acme'.*jobs\.priors_max_memory"):
        recompute_priors(acme, TODAY, limits=PriorsLimits(max_memory=1 << 16))
    # The process and the store live on: the next run within its limit writes the priors.
    assert recompute_priors(acme, TODAY).priors == 7


def _colors(store: Store) -> dict[str, int]:
    return {v: n for a, v, n, *_ in _priors(store) if a == "item_variant.color"}


def test_people_merge_exactly_over_many_inserts_and_merges(store: Store) -> None:
    # Few people seen again and again, on many days, in many inserts: each array row
    # holds its own keys, and the job's union of them counts each person once.
    rand = random.Random(20)
    rows, seen = [], defaultdict(set)
    for n in range(60):
        color = f"c{n}"
        item = (f"item_variant:acme:{300 + n}", {"color": color, "size": rand.choice("SML")})
        for _ in range(rand.randint(1, 30)):
            person = f"p{rand.randint(0, 14)}"
            day = TODAY - timedelta(days=rand.randint(0, 92))
            rows.append(_presented(person, day, [item], 1))
            rows.append(_engaged(person, day, item[0], "click"))
            if window_of(TODAY)[0] <= day < TODAY:
                seen[color].add(person)
    for k in range(0, len(rows), 97):
        _insert(store, rows[k : k + 97])
    expected = {c: len(p) for c, p in seen.items() if len(p) >= 10}
    assert 0 < len(expected) < len(seen)  # both sides of the floor are tried
    recompute_priors(store, TODAY)
    assert _colors(store) == expected
    # Merged into one row per value, day and level: the same people, the same priors.
    store.command("OPTIMIZE TABLE value_daily FINAL")
    assert store.scalar("SELECT max(length(people)) FROM value_daily") <= 15
    assert recompute_priors(store, TODAY).unchanged
    assert _colors(store) == expected
