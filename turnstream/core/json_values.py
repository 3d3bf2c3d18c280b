"""JSON that any parser reads: non-finite numbers as strings. Pure.

Python's ``json`` writes ``NaN``, ``Infinity`` and ``-Infinity`` bare, which is not JSON
(RFC 8259): JavaScript's ``JSON.parse`` and most other parsers refuse the whole answer. A
float that is not finite is written as the string ``"NaN"``, ``"Infinity"`` or
``"-Infinity"`` instead, the names ``float()`` in Python and ``Number()`` in JavaScript
read back; the column's type (``Float64``...) tells a client to convert. ``null`` stays
for SQL's NULL, so a NULL and a NaN do not read the same.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["NON_FINITE", "dumps", "json_safe"]

#: How a non-finite float is written.
NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def json_safe(value: Any) -> Any:
    """``value`` with every non-finite float (in lists, tuples, sets and mappings, keys
    included) replaced by its string; tuples and sets become lists."""
    if isinstance(value, float):  # numpy's float64 too
        if math.isfinite(value):
            return value
        return NON_FINITE["nan" if math.isnan(value) else "inf" if value > 0 else "-inf"]
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [json_safe(v) for v in value]
    return value


def dumps(payload: Any) -> bytes:
    """``payload`` as JSON bytes (what ``json`` cannot write, as ``str``), never a bare
    ``NaN``: the common case costs one pass; one with a non-finite float, two."""
    try:
        return json.dumps(payload, default=str, allow_nan=False).encode()
    except ValueError:  # a non-finite float somewhere
        return json.dumps(json_safe(payload), default=str, allow_nan=False).encode()
