"""The priors rules without a store: the floor, the formula, the version, the spellings."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from turnstream.jobs.priors import (
    MAX_FLOOR,
    MIN_FLOOR,
    PriorsLimits,
    ValueAggregate,
    check_floor,
    is_object_attr,
    passes_floor,
    people_query,
    prior_of,
    priors_from,
    query_settings,
    reads_weeks,
    run_parameters,
    runs_for,
    shares_query,
    version_of,
    whole_weeks,
    window_of,
    window_parameters,
    with_shares,
)
from turnstream.jobs.retention import DayCounts, coverage, expired_window, ttl_of

AS_OF = date(2026, 11, 29)


def _agg(value: str, people: int, exposure_micro: int, signal_micro: int) -> ValueAggregate:
    return ValueAggregate(
        "acme", "item_variant.color", value, people, 2, exposure_micro, signal_micro
    )


def test_the_floor_is_ten_people_at_its_edge() -> None:
    assert MIN_FLOOR == 10
    assert not passes_floor(9)
    assert passes_floor(10)
    assert not passes_floor(11, floor=12)
    assert passes_floor(12, floor=12)


@pytest.mark.parametrize("floor", [9, 1, 0, -3])
def test_a_floor_below_ten_is_refused(floor: int) -> None:
    with pytest.raises(ValueError, match="at least 10"):
        check_floor(floor)
    with pytest.raises(ValueError, match="at least 10"):
        priors_from([], AS_OF, floor=floor)
    with pytest.raises(ValueError, match="at least 10"):
        people_query(floor=floor)


@pytest.mark.parametrize("floor", [65, 100])
def test_a_floor_above_what_the_aggregates_count_exactly_is_refused(floor: int) -> None:
    assert MAX_FLOOR == 64
    assert check_floor(64) == 64
    with pytest.raises(ValueError, match="at most 64"):
        check_floor(floor)


def test_an_estimated_count_stands_above_the_floor() -> None:
    estimated = ValueAggregate(
        "acme", "item_variant.color", "grey", 5_000, 40, 9_000_000, 1_000_000, people_exact=False
    )
    [row] = priors_from([estimated], AS_OF, floor=64)
    assert (row.value, row.people) == ("grey", 5_000)


def test_a_space_runs_whole_until_it_passes_the_split_then_by_attribute() -> None:
    rows = {"item_variant.ref": 900, "item_variant.color": 50, "item_variant.brand": 50}
    assert runs_for(rows, split_rows=1_000) == [None]
    assert runs_for(rows, split_rows=999) == [
        "item_variant.ref",
        "item_variant.brand",
        "item_variant.color",
    ]


def test_an_attribute_run_reads_its_own_rows_and_its_type_s_objects() -> None:
    # A field's run shares the engagements of its type's objects, read by key range.
    assert run_parameters("item_variant.color") == {
        "attr": "item_variant.color",
        "objects": "item_variant.ref",
    }
    assert run_parameters("garment.size") == {"attr": "garment.size", "objects": "garment.ref"}
    assert run_parameters(None) == {}
    field = shares_query(by_attr=True)
    assert "attr = {objects:String}" in field and "attr = {attr:String}" in field
    assert "{attr:String}" in people_query(by_attr=True)
    assert "{attr:String}" not in shares_query() + people_query()
    assert is_object_attr("item_variant.ref") and not is_object_attr("item_variant.color")


def test_field_values_take_their_share_and_objects_their_own_signal() -> None:
    people = [
        # (attr, value, levels, events, exposure, signal): a field's own sums are zero.
        ("item_variant.color", "black", [(0, 8), (1, 2)], 0, 10_000_000, 0),
        ("item_variant.color", "teal", [(0, 64), (2, 30)], 0, 5_000_000, 0),
        ("item_variant.ref", "item_variant:acme:1", [(0, 10)], 3, 10_000_000, 4_000_000),
    ]
    shares = [
        ("item_variant.color", "black", 2, 3_000_000),
        ("item_variant.color", "navy", 1, 1_000_000),  # below the floor: no people row
    ]
    black, teal, ref = with_shares("acme", people, shares)
    assert black == ValueAggregate(
        "acme", "item_variant.color", "black", 10, 2, 10_000_000, 3_000_000
    )
    # No object of teal engaged: no share, no signal. Level 0 is full (64): an estimate,
    # the levels above it a sample of 1 in 4.
    assert (teal.events, teal.signal_micro, teal.people_exact) == (0, 0, False)
    assert teal.people == 30 * 4
    assert (ref.events, ref.signal_micro, ref.people) == (3, 4_000_000, 10)


def test_the_job_sets_the_store_memory_and_spill_limits() -> None:
    settings = query_settings(PriorsLimits(max_memory=1 << 30))
    assert settings["max_memory_usage"] == 1 << 30
    assert settings["max_bytes_before_external_group_by"] == 1 << 29
    assert settings["max_bytes_before_external_sort"] == 1 << 29


def test_the_prior_is_signal_per_unit_of_effective_exposure() -> None:
    # 3 engagement points over 10 pos-1 exposures; 1 point over 10 pos-2 exposures
    assert prior_of(3_000_000, 10_000_000) == 0.3
    assert prior_of(1_000_000, 6_309_300) == pytest.approx(1 / 6.3093, abs=1e-6)
    assert prior_of(0, 5_000_000) == 0.0
    assert prior_of(2_000_000, 0) is None


def test_priors_keep_the_values_at_the_floor_with_exposure() -> None:
    rows = priors_from(
        [
            _agg("red", 10, 6_309_300, 1_000_000),
            _agg("blue", 9, 9_000_000, 9_000_000),  # under the floor
            _agg("black", 10, 10_000_000, 3_000_000),
            _agg("green", 40, 0, 0),  # never exposed: no prior
        ],
        AS_OF,
    )
    assert [(r.value, r.people, r.exposure, r.signal, r.prior) for r in rows] == [
        ("black", 10, 10.0, 3.0, 0.3),
        ("red", 10, 6.3093, 1.0, 0.158496),
    ]
    assert {(r.window_start, r.window_end, r.version) for r in rows} == {
        (date(2026, 8, 31), AS_OF, 20261129)
    }


def test_the_version_and_the_window_follow_the_as_of_date_only() -> None:
    assert version_of(AS_OF) == 20261129
    assert version_of(date(2027, 1, 5)) == 20270105
    assert window_of(AS_OF) == (date(2026, 8, 31), AS_OF)
    assert window_of(AS_OF, 30) == (date(2026, 10, 30), AS_OF)
    with pytest.raises(ValueError, match="window_days"):
        window_of(AS_OF, 101)  # the aggregates are kept 100 days
    aggregates = [_agg("black", 10, 10_000_000, 3_000_000), _agg("red", 12, 7_000_000, 0)]
    assert priors_from(aggregates, AS_OF) == priors_from(list(reversed(aggregates)), AS_OF)


def test_retention_rules() -> None:
    assert expired_window(AS_OF) == (date(2026, 8, 31), date(2026, 10, 15))
    create = (
        "CREATE TABLE t.interactions (`x` UInt8) ENGINE = MergeTree ORDER BY x "
        "TTL toDateTime(occurred_at) + toIntervalDay(45) SETTINGS index_granularity = 8192"
    )
    assert ttl_of(create) == "toDateTime(occurred_at) + toIntervalDay(45)"
    assert ttl_of("CREATE TABLE t.x (`x` UInt8) ENGINE = MergeTree ORDER BY x") is None
    days = coverage(
        {
            ("acme", date(2026, 9, 2)): DayCounts(presented=5, engaged=1, exposed_values=4),
            ("acme", date(2026, 9, 1)): DayCounts(presented=5, exposed_values=4),
            ("acme", date(2026, 9, 3)): DayCounts(),  # nothing that feeds the aggregates
        }
    )
    assert [(d.day.day, d.covered) for d in days] == [(1, True), (2, False)]


def test_whole_weeks_are_the_mondays_to_sundays_inside_the_window() -> None:
    # 2026-11-29 is a Sunday: the 90-day window starts Monday 2026-08-31.
    assert whole_weeks(date(2026, 8, 31), AS_OF) == (date(2026, 8, 31), date(2026, 11, 23))
    # Starting a Tuesday and ending (exclusive) a Thursday: Monday 1 Sep 2026 is the
    # first whole week's, Monday 23 Nov the first day past the last whole week.
    assert whole_weeks(date(2026, 9, 1), date(2026, 11, 26)) == (
        date(2026, 9, 7),
        date(2026, 11, 23),
    )
    # No whole week fits: every day is read from the daily rows.
    assert whole_weeks(date(2026, 11, 24), date(2026, 11, 30)) == (
        date(2026, 11, 30),
        date(2026, 11, 30),
    )
    assert whole_weeks(date(2026, 11, 23), date(2026, 11, 30)) == (
        date(2026, 11, 23),
        date(2026, 11, 30),
    )


@pytest.mark.parametrize("window_days", [1, 6, 7, 8, 13, 14, 30, 90, 100])
def test_the_edges_and_the_weeks_cover_the_window_once(window_days: int) -> None:
    # Every as-of weekday: each day of the window is in exactly one whole week or one
    # edge, and no day outside it is in either.
    for k in range(7):
        start, end = window_of(AS_OF + timedelta(days=k), window_days)
        p = window_parameters(start, end)
        weeks_start, weeks_end = p["weeks_start"], p["weeks_end"]
        assert weeks_start.weekday() == 0 or weeks_start == weeks_end == end
        assert (weeks_end - weeks_start).days % 7 == 0
        covered = []
        day = start - timedelta(days=3)
        while day < end + timedelta(days=3):
            in_edges = start <= day < weeks_start or weeks_end <= day < end
            in_weeks = weeks_start <= day < weeks_end
            assert not (in_edges and in_weeks)
            if in_edges or in_weeks:
                covered.append(day)
            day += timedelta(days=1)
        assert covered == [start + timedelta(days=i) for i in range(window_days)]
        # Fewer than 7 edge days on each side.
        assert (weeks_start - start).days < 7 or weeks_start == end
        assert (end - weeks_end).days < 7 or weeks_start == end


def test_the_weeks_are_read_when_they_hold_enough_times_fewer_rows() -> None:
    default = PriorsLimits().weeks_ratio  # 1.5: weeks paid at 1.7 times fewer rows
    assert reads_weeks(1_500, 1_000, default) and not reads_weeks(1_499, 1_000, default)
    assert reads_weeks(3_000, 1_000, 3.0) and not reads_weeks(2_999, 1_000, 3.0)
    assert not reads_weeks(5_000, 0, 3.0)  # no roll-up rows (yet): every day
    p = window_parameters(date(2026, 9, 1), date(2026, 11, 26), weeks=False)
    assert p["weeks_start"] == p["weeks_end"] == date(2026, 11, 26)
