"""The validators' fast paths decide as the slow ones: exposure ids and scalar values."""

from __future__ import annotations

import json
import uuid

import pytest
from pydantic import TypeAdapter, ValidationError

from turnstream.models.common import ExposureId, Scalar

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
        (str(uuid.UUID(int=uuid.uuid4().int)), "UUIDv7"),
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
