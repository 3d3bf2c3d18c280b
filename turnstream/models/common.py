"""Shared field types and the envelope every item carries (see docs/wire.md)."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterable
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    JsonValue,
    StringConstraints,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

__all__ = [
    "SPACE_ID_PATTERN",
    "UINT16_MAX",
    "UINT32_MAX",
    "AttrRef",
    "Envelope",
    "ExposureId",
    "ForWhom",
    "Handle",
    "HandleType",
    "Id",
    "JsonObject",
    "Scalar",
    "Text",
    "Timestamp",
    "WireModel",
    "field_of",
]

#: The largest counts and positions the store's columns hold (``UInt16``, ``UInt32``). A
#: larger number is refused here, with its field path: past validation, clickhouse-connect
#: could not encode it and the store would refuse the batch (a page of 70,000 halted the
#: signals loop's writes; a ``sent`` of 5,000,000,000, the ingest loop's).
UINT16_MAX = 2**16 - 1
UINT32_MAX = 2**32 - 1

#: A space's id: what ``space_id`` takes.
SPACE_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
#: Ids are non-empty strings of bounded size (hostile producers send megabytes).
Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
#: Free text (reasons, labels).
Text = Annotated[str, StringConstraints(max_length=4096)]
#: A field of a declared type: ``type.field`` (``item_variant.color``).
AttrRef = Annotated[
    str,
    StringConstraints(pattern=r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$", max_length=128),
]
#: Whose signal it is: ``self``, ``gift`` or ``beneficiary:<id>``.
ForWhom = Annotated[
    str, StringConstraints(pattern=r"^(self|gift|beneficiary:[A-Za-z0-9_.:@-]{1,128})$")
]
_RFC3339 = re.compile(
    r"^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?\Z",
    re.ASCII,  # digits 0-9 only: "٢٠٢٦" is not a year here
)


def _timestamp(value: object) -> datetime:
    if not isinstance(value, str):
        raise PydanticCustomError("datetime_type", "Input should be a valid datetime string")
    match = _RFC3339.match(value)
    if match is None:
        raise PydanticCustomError(
            "datetime_format", "Input should be an RFC 3339 time, like 2026-09-29T14:02:11Z"
        )
    zone = match[4]
    if zone is None:
        raise PydanticCustomError("timezone_aware", "Input should have timezone info (Z or +hh:mm)")
    if len(zone) > 1 and (zone[1:3] > "23" or zone[4:] > "59"):
        # Python reads +00:60 as +01:00 (and +05:75 as +06:15): another instant.
        raise PydanticCustomError(
            "timezone_range", "Input has a zone offset out of range (+hh:mm: hh to 23, mm to 59)"
        )
    try:
        # The shape is checked: Python 3.11 reads it as it is (a separator of T or a
        # space, Z, up to 9 digits of fraction, truncated to 6), 0.4 µs against 3.3 for
        # the groups spelled again (a lower-case t or z, which it refuses, is read below).
        return datetime.fromisoformat(value)
    except ValueError:
        pass
    day, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in "Zz" else zone
    try:
        return datetime.fromisoformat(f"{day}T{clock}{(fraction or '')[:7]}{zone}")
    except ValueError:
        raise PydanticCustomError("datetime_range", "Input is not a real date and time") from None


#: A time with its zone (RFC 3339). Naive times, epochs and other shapes are refused.
Timestamp = Annotated[datetime, BeforeValidator(_timestamp, json_schema_input_type=str)]


#: An integer of at most this many bits is a finite double (``2**1023`` and up may not be).
_DOUBLE_BITS = 1023


def _huge(value: int) -> bool:
    """Whether no finite double holds the integer ``value`` (``10**400``: JSON allows
    it, and it was accepted; the read side compares values as doubles, and ``float()``
    of it raised ``OverflowError``, for every block of the person)."""
    if value.bit_length() <= _DOUBLE_BITS:
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False


def _not_finite() -> PydanticCustomError:
    return PydanticCustomError("finite_number", "Input should be a finite number")


def _scalar(value: object) -> str | int | float | bool:
    kind = type(value)
    # The exact types JSON gives first: one type() against isinstance's three (~1.1
    # calls per item); a subclass (from Python input) takes the checks below.
    if kind is str or kind is bool:
        return value  # type: ignore[return-value]
    if kind is int and value.bit_length() <= _DOUBLE_BITS:  # type: ignore[attr-defined]
        return value  # type: ignore[return-value]
    if isinstance(value, float) and not math.isfinite(value):
        raise _not_finite()
    if isinstance(value, int) and _huge(value):
        raise _not_finite()
    if isinstance(value, str | int | float | bool):
        return value
    raise PydanticCustomError("scalar_type", "Input should be a string, a number or a boolean")


class _ScalarSchema:
    """``PlainValidator(_scalar)`` without its serializer: pydantic wraps a plain
    validator's serialization in a Python function (``lambda v, h: h(v)``), called for
    every value an item is dumped with, 61,416 times for 10,000 mixed_items (~8% of
    prepare under cProfile); a validator function with no serializer of its own is
    serialized by pydantic-core's inference instead (the same JSON for these types)."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            _scalar, json_schema_input_schema=handler.generate_schema(Any)
        )


#: One value: a string, a number or a boolean.
Scalar = Annotated[str | int | float | bool, _ScalarSchema()]


def _finite(value: object) -> object:
    _all_finite((value,))
    return value


def _all_finite(values: Iterable[object]) -> None:
    """Refuse a non-finite number anywhere in ``values`` (an integer no double holds
    included): one call per container, not per value (``_finite`` was called 39,163
    times for 20,000 mixed_items)."""
    for value in values:
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _not_finite()
        elif isinstance(value, int):
            if _huge(value):
                raise _not_finite()
        elif isinstance(value, dict):
            _all_finite(value.values())
        elif isinstance(value, list):
            _all_finite(value)


#: A free-form JSON object (a watch condition, a claim's evidence): finite numbers only.
JsonObject = Annotated[dict[str, JsonValue], AfterValidator(_finite)]


#: A UUIDv7 already in its canonical spelling (lower case, hyphens; version 7, RFC 4122
#: variant): what the SDK mints. ``uuid.UUID`` took ~40 µs per exposure id (cProfile).
_CANONICAL_UUID7 = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
)


def _uuid7(value: str) -> str:
    if _CANONICAL_UUID7.fullmatch(value):
        return value
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        raise ValueError("must be a UUID") from None
    if parsed.version != 7:
        raise ValueError(f"must be a UUIDv7 (got version {parsed.version})")
    return str(parsed)


#: An exposure id: a UUIDv7 minted by the SDK at delivery.
ExposureId = Annotated[str, StringConstraints(max_length=64), AfterValidator(_uuid7)]


class WireModel(BaseModel):
    """Base of every wire model: unknown fields are accepted and ignored, the rest is strict."""

    model_config = ConfigDict(
        extra="ignore", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


def field_of(model: BaseModel, name: str, default: object = None) -> Any:
    """The value of ``model``'s field ``name``, or ``default`` when its class has no such
    field (interactions of different kinds share a row). ``getattr(model, name, default)``
    does the same, but a missing name goes through pydantic's ``__getattr__`` and an
    ``AttributeError``: 17.5 µs against 0.6 here, up to five times per interaction on
    the ingest path."""
    return model.__dict__.get(name, default)


class HandleType(StrEnum):
    phone_e164 = "phone_e164"
    email = "email"
    external_id = "external_id"


_E164 = re.compile(r"^\+[1-9][0-9]{6,14}\Z")
#: The members, looked up once: ``HandleType.email`` goes through the enum's descriptor
#: (~0.4 µs under cProfile, twice per handle).
_PHONE, _MAIL = HandleType.phone_e164, HandleType.email
#: No space, control or invisible format character (a zero-width space or a byte order
#: mark pasted with an address made it another person's, by its hash).
_NOT_IN_EMAIL = r"@\s\x00-\x1f\x7f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff"
_EMAIL = re.compile(rf"^[^{_NOT_IN_EMAIL}]{{1,64}}@[^{_NOT_IN_EMAIL}]+\.[^{_NOT_IN_EMAIL}]+\Z")


class Handle(WireModel):
    """Who the person is, as the producer knows them. Never stored raw."""

    type: HandleType
    value: Annotated[str, StringConstraints(min_length=1, max_length=320)]

    @model_validator(mode="after")
    def _check_shape(self) -> Handle:
        # The messages never repeat the value: it is personal data.
        if self.type is _PHONE and not _E164.match(self.value):
            raise ValueError("value: not an E.164 phone number (+ and 7 to 15 digits)")
        if self.type is _MAIL and not _EMAIL.match(self.value):
            raise ValueError("value: not an e-mail address")
        return self


class Envelope(WireModel):
    """Fields common to every item."""

    type: str
    space_id: Annotated[str, StringConstraints(pattern=SPACE_ID_PATTERN)]
    idempotency_key: Id
    handle: Handle | None = None
    profile_id: Id | None = None
    source: Id
    conversation_id: Id | None = None
    session_id: Id | None = None
    occurred_at: Timestamp

    @model_validator(mode="after")
    def _one_identity(self) -> Envelope:
        if (self.handle is None) == (self.profile_id is None):
            which = "neither" if self.handle is None else "both"
            raise ValueError(
                f"handle: exactly one of handle and profile_id is required ({which} given)"
            )
        return self

    @property
    def session(self) -> str | None:
        """The session: ``session_id``, or the conversation when none is given."""
        return self.session_id or self.conversation_id
