"""The two constraint rates named apart (real chDB): the violation rate over the calls that
sent constraints, and the share of calls that sent any; the old rate, diluted, beside."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.adapters.clickhouse.store import Store

pytestmark = pytest.mark.integration

DAY = datetime(2026, 11, 29, 10, tzinfo=UTC)
COLUMNS = ["space_id", "source", "agent", "turn_id", "call_index", "tool", "sent",
           "results_checked", "violations", "unverifiable", "relaxed", "occurred_at",
           "ingested_at", "_topic", "_partition", "_offset"]  # fmt: skip


def _call(n: int, sent: int, checked: int, violations: int, unverifiable: int = 0) -> list:
    return ["acme", "web", "sales", f"t{n}", 0, "search_products", sent, checked, violations,
            unverifiable, False, DAY, DAY, "t", 0, n]  # fmt: skip


def test_the_rate_over_constrained_calls_is_not_diluted(store: Store) -> None:
    # acme's search_products as the issue found it: 665 calls, 590 sent no constraint and
    # their 665 - 75 = 590 results were "checked" against nothing; 75 sent some.
    rows = [_call(n, 0, 1, 0) for n in range(590)]
    rows += [_call(590 + n, 2, 3 if n < 61 else 2, int(n < 2), int(n == 5)) for n in range(75)]
    store.insert("turn_constraints", rows, COLUMNS)
    [old] = store.query(
        "SELECT verifiable, violations, violation_rate FROM context_use_constraints"
    ).as_dicts()
    [new] = store.query("SELECT * FROM context_use_constraint_rates").as_dicts()
    checked_constrained = 61 * 3 + 14 * 2 - 1  # one unverifiable
    assert (old["verifiable"], old["violations"]) == (590 + checked_constrained, 2)
    assert old["violation_rate"] == round(2 / (590 + checked_constrained), 4)
    assert (new["calls"], new["calls_with_constraints"]) == (665, 75)
    assert new["share_of_calls_with_constraints"] == round(75 / 665, 4)
    assert new["verifiable_in_calls_with_constraints"] == checked_constrained
    assert new["violation_rate_in_calls_with_constraints"] == round(2 / checked_constrained, 4)
    assert new["violation_rate_in_calls_with_constraints"] > 3 * old["violation_rate"]


def test_no_verifiable_result_gives_no_rate(store: Store) -> None:
    store.insert("turn_constraints", [_call(1, 0, 4, 0), _call(2, 3, 2, 0, 2)], COLUMNS)
    [row] = store.query("SELECT * FROM context_use_constraint_rates").as_dicts()
    assert row["violation_rate_in_calls_with_constraints"] is None
    assert row["share_of_calls_with_constraints"] == 0.5
