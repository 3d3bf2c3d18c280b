"""The daily aggregates and privacy, on real ClickHouse (chDB): an erased person leaves no
trace in any table or view once the priors job has run (found by scanning every column
of the database), sensitive types and fields are counted by name only, and migration 11
rebuilds the aggregates from what the old ones and the raw table hold."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest

from tests.integration.jobs.test_priors import (
    EXPIRED,
    RECENT,
    TODAY,
    _engaged,
    _insert,
    _presented,
    _priors,
)
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.sensitivity import write_sensitive
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import Settings
from turnstream.jobs.priors import recompute_priors
from turnstream.jobs.registry import JOBS

pytestmark = pytest.mark.integration


def _profile(name: str) -> str:
    """A profile id as the worker makes them: 64 hex digits."""
    return hashlib.sha256(name.encode()).hexdigest()


def _traces(store: Store, needles: list[str]) -> dict[str, int]:
    """Rows holding any of ``needles``, per ``table.column``, over every column of every
    table and view of the database (system.columns); aggregate states finalized."""
    columns = store.query(
        "SELECT table, name, type FROM system.columns WHERE database = {db:String} "
        "ORDER BY table, name",
        {"db": store.database},
    ).rows
    assert len({t for t, _, _ in columns}) > 30  # every table and view, not a hand list
    found = {}
    for table, column, kind in columns:
        value = f"`{column}`"
        if kind.startswith("AggregateFunction"):
            value = f"finalizeAggregation({value})"
        n = store.scalar(
            f"SELECT count() FROM `{table}` "
            f"WHERE multiSearchAny(toString({value}), {{needles:Array(String)}})",
            {"needles": needles},
        )
        if n:
            found[f"{table}.{column}"] = int(n)
    return found


BLACK = ("item_variant:acme:1", {"color": "black"})
WHITE = ("item_variant:acme:5", {"color": "white"})


def test_an_erased_person_is_in_no_table_or_view_after_the_priors_job(store: Store) -> None:
    gone = _profile("the erased one")
    others = [_profile(f"other {i}") for i in range(9)]
    # Ten people saw black recently and white 80 days ago (raw rows long gone for that
    # day: only the aggregates hold it); the erased one is one of the ten each time.
    _insert(
        store,
        [_presented(p, RECENT, [BLACK], 1) for p in [gone, *others]]
        + [
            _engaged(gone, RECENT, BLACK[0], "click"),
            _engaged(others[0], RECENT, BLACK[0], "cart"),
        ],
    )
    _insert(
        store,
        [_presented(p, EXPIRED, [WHITE], 1) for p in [gone, *others]]
        + [_engaged(others[1], EXPIRED, WHITE[0], "click")],
    )
    store.command(
        "ALTER TABLE interactions DELETE WHERE occurred_at < now() - INTERVAL 45 DAY",
        settings={"mutations_sync": 2},
    )
    key = int(store.scalar("SELECT sipHash64({p:String})", {"p": gone}))
    needles = [gone, str(key), f"{key:016x}", f"{key:016X}"]
    before = _traces(store, needles)
    assert {"interactions.profile_id", "value_daily.people"} <= set(before)
    recompute_priors(store, TODAY)
    colors = {v: n for a, v, n, *_ in _priors(store) if a == "item_variant.color"}
    assert colors == {"black": 10, "white": 10}

    erase_subjects(store, [("acme", gone)])
    # The raw rows go at once; the aggregates' key (read through its view too) waits for
    # the job.
    assert set(_traces(store, needles)) == {
        "value_daily.people",
        "value_daily_mv.people",
        "value_weekly.people",
        "value_weekly_mv.people",
        "erased_people.person",
    }
    report = recompute_priors(store, TODAY + timedelta(days=1))

    assert report.purged == {"acme": 1}
    assert _traces(store, needles) == {}
    # The arrays (migration 17) kept everyone else: nine of each ten.
    for table in ("value_daily", "value_weekly"):
        assert store.query(
            f"SELECT value, length(groupUniqArrayArray(64)(people)) FROM {table} "
            "WHERE attr = 'item_variant.color' GROUP BY value ORDER BY value"
        ).rows == [("black", 9), ("white", 9)], table
    mutations = store.query(
        "SELECT command FROM system.mutations WHERE database = {db:String}",
        {"db": store.database},
    ).rows
    assert not [c for (c,) in mutations if any(n in c for n in needles)]
    # Nine people are left of each ten: the job counts the erased one no more.
    later = int((TODAY + timedelta(days=1)).strftime("%Y%m%d"))
    assert [r for r in _priors(store) if r[7] == later and r[0] == "item_variant.color"] == []
    # Everyone else is still counted: one more person brings black back to ten.
    _insert(store, [_presented(_profile("a newcomer"), RECENT, [BLACK], 1)])
    recompute_priors(store, TODAY + timedelta(days=2))
    colors = {v: n for a, v, n, *_, version in _priors(store) if version > later}
    assert colors.get("black") == 10


HEALTH = ("health_plan:acme:gold", {"tier": "gold"})
BAG = ("item_variant:acme:9", {"color": "teal", "material": "leather"})


def test_sensitive_types_and_fields_are_counted_by_name_only(store: Store) -> None:
    settings = Settings.model_validate(
        {"signals": {"sensitive": ["health_plan", "item_variant.material"]}}
    )
    write_sensitive(store, settings.sensitive_names())
    people = [_profile(f"s{i}") for i in range(12)]
    _insert(
        store,
        [_presented(p, RECENT, [HEALTH, BAG], 2) for p in people]
        + [_engaged(p, RECENT, HEALTH[0], "click") for p in people[:3]]
        + [_engaged(people[0], RECENT, BAG[0], "click")],
    )
    aggregated = {
        a
        for (a,) in store.query(
            "SELECT DISTINCT attr FROM value_daily UNION DISTINCT "
            "SELECT DISTINCT attr FROM ref_values_daily UNION DISTINCT "
            "SELECT DISTINCT attr FROM value_weekly UNION DISTINCT "
            "SELECT DISTINCT attr FROM ref_values_weekly"
        ).rows
    }
    assert aggregated == {"item_variant.color", "item_variant.ref"}
    assert not store.scalar("SELECT count() FROM ref_values_daily WHERE startsWith(ref, 'health')")
    assert store.query(
        "SELECT name, sum(presented), sum(engaged) FROM sensitive_daily GROUP BY name ORDER BY name"
    ).rows == [("health_plan", 12, 3), ("item_variant.material", 12, 0)]

    report = JOBS["priors"](store, settings, {"as_of": TODAY.isoformat()})
    assert report["sensitive_rows"] == {}
    assert {a for a, *_ in _priors(store)} == {"item_variant.color", "item_variant.ref"}

    # A name made sensitive later: its rows leave the aggregates, and its priors go.
    settings = Settings.model_validate(
        {"signals": {"sensitive": ["health_plan", "item_variant.material", "item_variant.color"]}}
    )
    report = JOBS["priors"](store, settings, {"as_of": TODAY.isoformat()})
    # teal: one row per level its people fall in; one showing in ref_values_daily
    assert set(report["sensitive_rows"]) == {
        "value_daily",
        "ref_values_daily",
        "value_weekly",
        "ref_values_weekly",
    }
    assert report["sensitive_rows"]["ref_values_daily"] == 1
    assert report["sensitive_rows"]["ref_values_weekly"] == 1
    assert {a for a, *_ in _priors(store)} == {"item_variant.ref"}
    for table in ("value_daily", "value_weekly", "ref_values_daily", "ref_values_weekly"):
        assert not store.scalar(f"SELECT count() FROM {table} WHERE attr = 'item_variant.color'")


def test_migration_11_rebuilds_the_aggregates_from_the_raw_days_and_keeps_older_sums(
    chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(store, until=10) == list(range(1, 11))
        _insert(
            store,
            [_presented(f"p{i}", RECENT, [BLACK], 1) for i in range(10)]
            + [_engaged("p0", RECENT, BLACK[0], "cart")],
        )
        # A day past the raw TTL, which only the old aggregate holds.
        store.command(
            "INSERT INTO value_daily SELECT 'acme', 'item_variant.color', 'white', "
            "{day:Date}, uniqExactState(toString(number)), 3000000, 0, 0 FROM numbers(12)",
            parameters={"day": EXPIRED},
        )
        assert store.scalar("SELECT uniqExactMerge(people) FROM value_daily") == 22

        assert apply_migrations(store, until=11) == [11]
        # Today's job needs the later migrations too (17: value_daily.people_bound).
        apply_migrations(store)

        recompute_priors(store, TODAY)
        assert [(a, v, n) for a, v, n, *_ in _priors(store)] == [
            ("item_variant.color", "black", 10),
            ("item_variant.ref", "item_variant:acme:1", 10),
        ]
        # White's sums came over, its people could not (uniqExact keeps no readable key).
        assert store.query(
            "SELECT sum(exposure_micro), countIf(notEmpty(people)) "
            "FROM value_daily WHERE value = 'white'"
        ).rows == [(3_000_000, 0)]
        views = {
            n
            for (n,) in store.query(
                "SELECT name FROM system.tables WHERE database = currentDatabase() "
                "AND engine = 'MaterializedView' AND name LIKE 'value_daily%'"
            ).rows
        }
        # Migration 23's: one view writes value_daily from pages and engagements alike.
        assert views == {"value_daily_mv"}
        # New rows feed the new aggregate.
        _insert(store, [_presented("p10", RECENT, [BLACK], 1)])
        recompute_priors(store, TODAY)
        assert dict((v, n) for _, v, n, *_ in _priors(store))["black"] == 11
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()


def test_migration_12_keys_ref_values_by_attribute_and_keeps_every_row(
    chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(store, until=11)[-1] == 11
        _insert(
            store,
            [_presented(f"p{i}", RECENT, [BLACK, WHITE], 2) for i in range(10)]
            + [_engaged("p0", RECENT, WHITE[0], "cart")],
        )
        # A day past the raw TTL: only the aggregate holds it, and it must come over.
        store.command(
            "INSERT INTO ref_values_daily VALUES "
            "('acme', 'item_variant:acme:5', 'item_variant.color', 'grey', {day:Date}, 3)",
            parameters={"day": EXPIRED},
        )
        rows = "SELECT space_id, ref, attr, value, day, presentations FROM ref_values_daily "
        rows += "ORDER BY ALL"
        before = store.query(rows).rows

        assert apply_migrations(store, until=12) == [12]

        assert store.query(rows).rows == before
        assert (
            store.scalar(
                "SELECT sorting_key FROM system.tables WHERE database = currentDatabase() "
                "AND name = 'ref_values_daily'"
            )
            == "space_id, attr, ref, value, day"
        )
        # Today's job needs the later migrations too (17: value_daily.people_bound); none
        # of them touches ref_values_daily.
        apply_migrations(store)
        assert store.query(rows).rows == before
        recompute_priors(store, TODAY)
        # White's cart (2) is split with the grey showing of the expired day: 10 of 13,
        # in whole millionths.
        white = [r for r in _priors(store) if r[:2] == ("item_variant.color", "white")]
        assert white and white[0][5] == 2_000_000 * 10 // 13 / 1_000_000
        # The view feeds the new table.
        _insert(store, [_presented("p10", RECENT, [WHITE], 1)])
        assert (
            store.scalar("SELECT sum(presentations) FROM ref_values_daily WHERE value = 'white'")
            == 11
        )
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()


def test_migration_17_turns_the_people_states_into_arrays_of_the_same_keys(
    chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(store, until=16)[-1] == 16
        _insert(
            store,
            [_presented(f"p{i}", RECENT, [BLACK], 1) for i in range(10)]
            + [_presented(f"q{i}", EXPIRED, [WHITE], 1) for i in range(9)]
            + [_engaged("p0", RECENT, BLACK[0], "cart")],
        )
        # p0 again in another insert: a second state of its level until a merge.
        _insert(store, [_presented("p0", RECENT, [BLACK], 1)])
        keys = (
            "SELECT attr, value, day, level, arraySort(MERGED), sum(exposure_micro), "
            "sum(events), sum(signal_micro) FROM value_daily GROUP BY ALL ORDER BY ALL"
        )
        before = store.query(keys.replace("MERGED", "groupUniqArrayMerge(64)(people)")).rows
        assert sum(len(r[4]) for r in before if r[1] == "black") == 10

        assert apply_migrations(store, until=17) == [17]

        assert (
            store.scalar(
                "SELECT type FROM system.columns WHERE database = currentDatabase() "
                "AND table = 'value_daily' AND name = 'people'"
            )
            == "SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64))"
        )
        assert store.query(keys.replace("MERGED", "groupUniqArrayArray(64)(people)")).rows == before
        # Today's job needs the later migrations too (21: the weekly roll-ups).
        apply_migrations(store)
        recompute_priors(store, TODAY)
        assert [(a, v, n) for a, v, n, *_ in _priors(store)] == [
            ("item_variant.color", "black", 10),
            ("item_variant.ref", "item_variant:acme:1", 10),
        ]
        # Both views feed the new table: white's tenth person, a click on it.
        _insert(
            store,
            [_presented("q9", RECENT, [WHITE], 1), _engaged("q9", RECENT, WHITE[0], "click")],
        )
        recompute_priors(store, TODAY)
        rows = {(a, v): (n, e) for a, v, n, e, *_ in _priors(store)}
        assert rows[("item_variant.color", "white")] == (10, 1)
        assert rows[("item_variant.color", "black")] == (10, 1)
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()


def test_migration_20_builds_the_weekly_roll_ups_from_the_stored_days(
    chdb_path: Path, store_factory: Callable[[], Store]
) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(store, until=19)[-1] == 19
        _insert(
            store,
            [_presented(f"p{i}", RECENT - timedelta(days=i), [BLACK, WHITE], 2) for i in range(10)]
            + [_engaged("p0", RECENT, WHITE[0], "cart"), _engaged("p1", RECENT, BLACK[0], "click")],
        )
        # Days past the raw TTL: only the daily aggregates hold them, and they must come over.
        store.command(
            "INSERT INTO value_daily (space_id, attr, value, day, level, people, exposure_micro) "
            "SELECT 'acme', 'item_variant.color', 'grey', {day:Date} + number % 3, 0, "
            "[sipHash64(toString(number))], 1000000 FROM numbers(12)",
            parameters={"day": EXPIRED},
        )
        store.command(
            "INSERT INTO ref_values_daily VALUES "
            "('acme', 'item_variant.color', 'item_variant:acme:5', 'grey', {day:Date}, 3)",
            parameters={"day": EXPIRED},
        )
        weekly = (
            "SELECT attr, value, toMonday(day) AS week, level, "
            "arraySort(groupUniqArrayArray(64)(people)), sum(exposure_micro), sum(events), "
            "sum(signal_micro) FROM value_daily GROUP BY ALL ORDER BY ALL"
        )
        refs = (
            "SELECT attr, ref, value, toMonday(day) AS week, sum(presentations) "
            "FROM ref_values_daily GROUP BY ALL ORDER BY ALL"
        )
        days, ref_days = store.query(weekly).rows, store.query(refs).rows

        assert apply_migrations(store, until=21)[-1] == 21

        rolled = weekly.replace("toMonday(day) AS week", "week").replace(
            "value_daily", "value_weekly"
        )
        assert store.query(rolled).rows == days
        assert store.query(refs.replace("toMonday(day) AS week", "week").replace(
            "ref_values_daily", "ref_values_weekly")).rows == ref_days  # fmt: skip
        assert sum(len(r[4]) for r in days if r[1] == "grey") == 12
        # The job reads the weeks and the edge days: grey's expired days count.
        recompute_priors(store, TODAY)
        colors = {v: n for a, v, n, *_ in _priors(store) if a == "item_variant.color"}
        assert colors == {"black": 10, "white": 10, "grey": 12}
        # The views feed the roll-ups: an eleventh person for white, yesterday.
        _insert(store, [_presented("q0", TODAY - timedelta(days=1), [WHITE], 1)])
        assert store.query(rolled).rows == store.query(weekly).rows
        recompute_priors(store, TODAY)
        assert {v: n for a, v, n, *_ in _priors(store) if a == "item_variant.color"} == {
            **colors,
            "white": 11,
        }
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()
