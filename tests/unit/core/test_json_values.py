"""Non-finite numbers in an answer: valid JSON, read back by the names they carry."""

from __future__ import annotations

import json
import math
from datetime import date
from decimal import Decimal

import numpy as np
import pytest

from turnstream.core.json_values import dumps, json_safe

NAN, INF = float("nan"), float("inf")


def _strict_loads(raw: bytes) -> object:
    """JSON as RFC 8259 has it: a bare NaN or Infinity is an error."""

    def refuse(name: str) -> None:
        raise ValueError(f"not JSON: {name}")

    return json.loads(raw, parse_constant=refuse)


def test_a_query_answer_with_every_non_finite_value_is_json() -> None:
    payload = {
        "columns": ["n", "i", "m", "arr", "mp", "t", "ok", "null"],
        "rows": [(NAN, INF, -INF, [NAN, 1.5], {"k": INF, NAN: 1}, (NAN, 1), 0.1, None)],
    }
    assert b"NaN" in json.dumps(payload).encode()  # what Python writes: not JSON
    with pytest.raises(ValueError, match="not JSON"):
        _strict_loads(json.dumps(payload).encode())
    data = _strict_loads(dumps(payload))
    assert data["rows"] == [
        ["NaN", "Infinity", "-Infinity", ["NaN", 1.5], {"k": "Infinity", "NaN": 1}, ["NaN", 1],
         0.1, None]
    ]  # fmt: skip
    # Read back by name, as a client converting a Float64 column would.
    back = [float(v) for v in data["rows"][0][:3]]
    assert math.isnan(back[0]) and back[1] == INF and back[2] == -INF


def test_numpy_floats_and_values_json_cannot_write_are_handled() -> None:
    payload = [np.float64("nan"), np.float64("-inf"), Decimal("1.10"), date(2026, 1, 2), b"a\0"]
    assert _strict_loads(dumps(payload)) == ["NaN", "-Infinity", "1.10", "2026-01-02", "b'a\\x00'"]


@pytest.mark.parametrize("value", [0.0, -0.0, 1e308, -1e-308, 5e-324])
def test_finite_floats_at_the_limits_are_unchanged(value: float) -> None:
    assert json_safe(value) == value
    assert _strict_loads(dumps([value])) == [value]


def test_an_answer_without_non_finite_numbers_is_written_as_before() -> None:
    payload = {"columns": ["a"], "types": ["Float64"], "rows": [(1.5,), (None,)]}
    assert dumps(payload) == json.dumps(payload, default=str).encode()
