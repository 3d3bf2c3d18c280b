"""The priors read without a store: every spelling of a stored value answers."""

from __future__ import annotations

import pytest

from turnstream.adapters.clickhouse.priors import engine_keys, priors_by_key
from turnstream.core.derivation.values import value_key


@pytest.mark.parametrize("number", [200.0, 200, 199.9, 1.5e-07, 1e-05, 1e20, 0.1, True])
def test_stored_numbers_answer_under_the_signals_spelling(number: float | bool) -> None:
    # ClickHouse writes a JSON number its own way: 200.0 → "200", 1.5e-07 → "1.5e-7"
    stored = {200.0: "200", 1.5e-07: "1.5e-7", 1e-05: "0.00001", 1e20: "100000000000000000000"}
    clickhouse = stored.get(number, value_key(number)) if number is not True else "true"
    assert value_key(number) in engine_keys(clickhouse)
    assert engine_keys("black") == ("black",)


def test_an_exact_spelling_wins_over_a_derived_one() -> None:
    priors = priors_by_key([("t.price", "200", 0.5), ("t.price", "200.0", 0.7)])
    assert priors == {("t.price", "200"): 0.5, ("t.price", "200.0"): 0.7}
    assert priors_by_key([("t.price", "200", 0.5)]) == {
        ("t.price", "200"): 0.5,
        ("t.price", "200.0"): 0.5,
    }
