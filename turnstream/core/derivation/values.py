"""Names of the evidence: a ref's type, an attribute and the key of a shown value."""

from __future__ import annotations

import json

__all__ = ["Scalar", "attr_of", "ref_type", "value_key"]

#: A shown value as it travels on the wire.
Scalar = str | int | float | bool


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
