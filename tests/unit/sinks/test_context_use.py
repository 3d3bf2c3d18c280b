"""The report's SQL builder: breakdowns are checked, literals are quoted."""

from __future__ import annotations

import pytest

from turnstream.sinks.context_use import ReportQuery, quote


def test_unknown_breakdowns_are_refused() -> None:
    with pytest.raises(ValueError, match="--by takes some of space_id, source, agent"):
        ReportQuery(by=("source", "price; DROP TABLE turns"))
    with pytest.raises(ValueError):
        ReportQuery(by=())


def test_literals_are_quoted() -> None:
    assert quote("it's") == "'it\\'s'"
    assert quote("a\\b") == "'a\\\\b'"
    sql = ReportQuery(space="x' OR 1=1 --").claims()
    assert "space_id = 'x\\' OR 1=1 --'" in sql
