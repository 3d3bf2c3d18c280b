"""The report's SQL builder: breakdowns are checked, filters travel as parameters."""

from __future__ import annotations

from datetime import date

import pytest

from turnstream.adapters.clickhouse.context_use import ReportQuery


def test_unknown_breakdowns_are_refused() -> None:
    with pytest.raises(ValueError, match="--by takes some of space_id, source, agent"):
        ReportQuery(by=("source", "price; DROP TABLE turns"))
    with pytest.raises(ValueError):
        ReportQuery(by=())


def test_filters_are_parameters_never_sql_text() -> None:
    hostile = "x' OR 1=1 --"
    query = ReportQuery(space=hostile, since=date(2026, 11, 21))
    for sql in (query.claims(), query.verdicts(), query.turns(), query.constraints()):
        assert hostile not in sql and "2026-11-21" not in sql
        assert "space_id = {space:String}" in sql and "day >= {since:Date}" in sql
    assert query.parameters() == {"space": hostile, "since": "2026-11-21"}
    assert ReportQuery().parameters() == {}
    assert "WHERE" not in ReportQuery().claims()
