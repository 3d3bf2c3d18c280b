"""store_time: the one reading of a time from the store (every time column is UTC)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

from turnstream.adapters.clickhouse.store import store_time


def test_a_naive_time_from_chdb_is_read_as_utc() -> None:
    naive = datetime(2026, 11, 30, 19, 45, 1, 123456)
    got = store_time(naive)
    assert got.tzinfo is UTC
    assert got.replace(tzinfo=None) == naive


def test_an_aware_time_from_a_server_comes_back_in_utc_at_the_same_instant() -> None:
    lisbon_summer = timezone(timedelta(hours=1))
    aware = datetime(2026, 7, 1, 12, 0, tzinfo=lisbon_summer)
    got = store_time(aware)
    assert got == aware
    assert got.utcoffset() == timedelta(0)
    assert got.hour == 11


def test_dates_and_none_pass_through() -> None:
    day = date(2026, 11, 30)
    assert store_time(day) is day
    assert store_time(None) is None
