"""When two conditions on one field cannot both hold, and the records' own checks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from tests.unit.core.constraints.builders import COLOR, NOW, pref, rule
from turnstream.core.constraints import BlockRequest, CompanyRule, InvalidViewInput, clashes


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (("in", ["black"]), ("not_in", ["black"]), True),
        (("in", ["black", "navy"]), ("not_in", ["black"]), False),
        (("in", ["black"]), ("in", ["navy"]), True),
        (("eq", ["M"]), ("ne", ["M"]), True),
        (("eq", [700]), ("in", ["700"]), False),  # "700" and 700 are one value
        (("lte", [100]), ("gte", [200]), True),
        (("lt", [100]), ("gte", [100]), True),
        (("lte", [100]), ("gte", [100]), False),
        (("between", [1, 5]), ("gt", [5]), True),
        (("between", [5, 1]), ("lt", [2]), False),  # the range is read low to high
        (("eq", [50]), ("lte", [40]), True),
        (("in", [30, 50]), ("lte", [40]), False),
        (("not_between", [1, 10]), ("between", [2, 3]), True),
        (("not_between", [1, 10]), ("eq", [11]), False),
        (("ne", [5]), ("between", [5, 5]), True),
        (("not_in", ["a"]), ("not_in", ["b"]), False),
        (("lte", ["M"]), ("gte", [10]), False),  # a string and a number do not compare
        (("lte", ["2026-01-01"]), ("gte", ["2026-02-01"]), True),
    ],
)
def test_clashes(a: tuple[str, list[Any]], b: tuple[str, list[Any]], expected: bool) -> None:
    assert clashes(a[0], a[1], b[0], b[1]) is expected
    assert clashes(b[0], b[1], a[0], a[1]) is expected


@pytest.mark.parametrize(
    "kwargs",
    [
        {"op": "like"},
        {"op": "between", "values": (1,)},
        {"op": "eq", "values": ("a", "b")},
        {"strength": "maybe"},
        {"scope": "forever"},
        {"for_": "friend"},
    ],
)
def test_a_preference_off_the_wire_vocabulary_is_refused(kwargs: dict[str, Any]) -> None:
    args: dict[str, Any] = {"op": "in", "values": ("black",), "strength": "must"}
    args.update(kwargs)
    with pytest.raises(InvalidViewInput):
        pref("p1", COLOR, args.pop("op"), args.pop("values"), args.pop("strength"), **args)


def test_records_refuse_naive_times_bad_origins_and_bad_buckets() -> None:
    with pytest.raises(InvalidViewInput):
        replace(pref("p1", COLOR, "in", ("x",), "must"), occurred_at=NOW.replace(tzinfo=None))
    with pytest.raises(InvalidViewInput):
        CompanyRule("r1", 1, "wiki:page", None, None, (), "text")
    with pytest.raises(InvalidViewInput):
        rule("r1", 1, "half a rule", COLOR)
    with pytest.raises(InvalidViewInput):
        BlockRequest(space_id="acme", profile_id="p1", for_="everyone")
    assert CompanyRule("r1", 1, "db:rules", None, None, (), "text").origin == "db:rules"
