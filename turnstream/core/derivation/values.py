"""Names of the evidence: a ref's type, an attribute, the key of a shown value and the
key of a size."""

from __future__ import annotations

import json
import math
import re

from turnstream.core.digits import plain_number, read_decimal
from turnstream.core.value_ids import Scalar

__all__ = ["Scalar", "attr_of", "ref_type", "size_key", "value_key"]


def ref_type(ref: str) -> str:
    """The type of an object: the part of its ref before the first ``:``."""
    return ref.split(":", 1)[0]


def attr_of(ref: str, field: str) -> str:
    """The attribute ``type.field`` of a field shown for ``ref``."""
    return f"{ref_type(ref)}.{field}"


def value_key(value: Scalar) -> str:
    """A value as the string that keys evidence and priors.

    Strings stay as they are; booleans and numbers are written as in JSON
    (``true``, ``42``, ``199.9``), so a value keys the same after a JSON round trip.
    """
    if isinstance(value, str):
        return value
    return json.dumps(value)


#: A letter size in any case (``m``, ``XL``, ``xxs``, ``2XL``, ``PP``, ``gg``, ``XG``,
#: ``EGG``); ASCII letters only.
_LETTER_SIZE = re.compile(
    r"(?:[2-9]X|X{0,4})[SL]|M|P{1,2}|G{1,3}|[EX]{1,2}G{1,2}", re.IGNORECASE | re.ASCII
)


def size_key(value: Scalar) -> str:
    """A size as the one value its spellings name, the key it is counted and inferred by.

    White space trimmed and each run of it one space; a decimal number, written as text
    or sent as one, as plain text (``40``, ``40.0``, ``40,0`` and 40 -> ``40``; ``40,5``
    -> ``40.5``: :func:`~turnstream.core.digits.read_decimal`); a letter size in capitals
    (`` m `` -> ``M``, ``xl`` -> ``XL``); anything else as it is (``38-40``, ``00``,
    ``one size``). A flag or a number that is not finite keys as :func:`value_key`.
    """
    if isinstance(value, bool):
        return value_key(value)
    if not isinstance(value, str):
        return plain_number(value) if math.isfinite(value) else value_key(value)
    text = " ".join(value.split())
    number = read_decimal(text)
    if number is not None:
        return plain_number(number)
    return text.upper() if _LETTER_SIZE.fullmatch(text) else text
