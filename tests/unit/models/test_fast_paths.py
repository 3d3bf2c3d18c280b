"""The validators' fast paths decide as the slow ones: exposure ids, scalar values, times."""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum

import pytest
from pydantic import TypeAdapter, ValidationError

from turnstream.models.common import _RFC3339, ExposureId, JsonObject, Scalar, Timestamp

_EXPOSURE: TypeAdapter[str] = TypeAdapter(ExposureId)
_SCALARS: TypeAdapter[dict[str, Scalar]] = TypeAdapter(dict[str, Scalar])

V7 = "01a22820-8a98-7adb-8682-3c496b728dca"


@pytest.mark.parametrize(
    "spelling",
    [V7, V7.upper(), "{" + V7 + "}", "urn:uuid:" + V7, V7.replace("-", "")],
)
def test_every_spelling_of_a_uuid7_becomes_the_canonical_one(spelling: str) -> None:
    assert _EXPOSURE.validate_python(spelling) == V7


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("f046c87c-b7a3-4a70-a7ba-a4eda2e8679e", "UUIDv7"),  # a v4: fixed, so xdist workers agree
        # Version 7, but not the RFC 4122 variant: uuid.UUID gives it no version.
        (V7[:19] + "c" + V7[20:], "UUIDv7"),
        (V7 + "\n", "must be a UUID"),
        (V7[:-1], "must be a UUID"),
    ],
)
def test_what_is_not_a_uuid7_is_refused(value: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why):
        _EXPOSURE.validate_python(value)


def test_scalars_serialize_as_json_does() -> None:
    values = {"s": "açaí ñandú", "i": 2**40, "f": 0.1, "neg": -3, "t": True, "b": False}
    parsed = _SCALARS.validate_json(json.dumps(values))
    assert json.loads(_SCALARS.dump_json(parsed)) == values
    assert _SCALARS.dump_python(parsed, mode="json") == values
    with pytest.raises(ValidationError, match="a string, a number or a boolean"):
        _SCALARS.validate_json('{"x": [1]}')
    with pytest.raises(ValidationError, match="finite"):
        _SCALARS.validate_python({"x": float("inf")})


_TIMES: TypeAdapter[datetime] = TypeAdapter(Timestamp)


def _spelled_again(value: str) -> datetime:
    """What the timestamp validator returned before its fast path: the groups of its
    pattern spelled again for ``datetime.fromisoformat``."""
    match = _RFC3339.match(value)
    assert match is not None and match[4] is not None
    day, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in "Zz" else zone
    return datetime.fromisoformat(f"{day}T{clock}{(fraction or '')[:7]}{zone}")


@pytest.mark.parametrize(
    "value",
    [
        "2026-09-29T14:02:11Z",
        "2026-09-29T14:02:11.123Z",
        "2026-09-29t14:02:11.1z",
        "2026-09-29 14:02:11.12+00:00",
        "2026-09-29T14:02:11.9999999Z",
        "2026-09-29T14:02:11.123456789-03:00",
        "2026-09-29T23:59:59.999999+14:00",
        "2026-09-29T00:00:00-12:30",
        "0001-01-01T00:00:00+00:00",
        "9999-12-31T23:59:59.999999Z",
        "2024-02-29T12:00:00-00:00",
    ],
)
def test_a_time_reads_as_it_did_before_the_fast_path(value: str) -> None:
    got = _TIMES.validate_python(value)
    want = _spelled_again(value)
    assert (got, got.utcoffset(), got.microsecond) == (want, want.utcoffset(), want.microsecond)


@pytest.mark.parametrize(
    "value",
    [
        "2026-02-30T14:02:11Z",
        "2026-09-29T24:00:00Z",
        "2026-09-29T14:02:60Z",
    ],
)
def test_a_time_that_is_not_real_is_still_refused_as_such(value: str) -> None:
    with pytest.raises(ValidationError, match="not a real date and time"):
        _TIMES.validate_python(value)


@pytest.mark.parametrize("value", ["2026-09-29T14:02:11+24:00", "2026-09-29T14:02:11+00:60"])
def test_a_zone_out_of_range_is_refused_as_such(value: str) -> None:
    with pytest.raises(ValidationError, match="zone offset out of range"):
        _TIMES.validate_python(value)


_OBJECTS: TypeAdapter[dict[str, object]] = TypeAdapter(JsonObject)


@pytest.mark.parametrize(
    "text",
    [
        '{"a": NaN}',
        '{"a": {"b": [1, 2, {"c": [Infinity]}]}}',
        '{"a": [[[-Infinity]]]}',
        '{"a": {"b": 1e400}}',
        '{"a": [1.5, "x", null, true, {"b": -1e999}]}',
    ],
)
def test_a_number_that_is_not_finite_is_refused_at_any_depth(text: str) -> None:
    with pytest.raises(ValidationError, match="Input should be a finite number"):
        _OBJECTS.validate_json(text)
    with pytest.raises(ValidationError, match="Input should be a finite number"):
        _OBJECTS.validate_python(json.loads(text))


def test_finite_objects_pass_as_they_are() -> None:
    value = {"a": {"b": [1, 2.5, -1e308, "ñ", None, True, {"c": []}]}, "d": {}}
    assert _OBJECTS.validate_json(json.dumps(value)) == value
    assert _OBJECTS.validate_python(value) == value


class _Kind(StrEnum):
    x = "x"


@pytest.mark.parametrize("value", [_Kind.x, True, False, 0, -(2**63), 1.0, "", "語"])
def test_scalars_of_every_type_pass_as_they_are(value: object) -> None:
    got = _SCALARS.validate_python({"v": value})["v"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_scalar_that_is_not_finite_is_refused(value: float) -> None:
    with pytest.raises(ValidationError, match="Input should be a finite number"):
        _SCALARS.validate_python({"v": value})
