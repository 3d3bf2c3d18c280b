"""When a number the agent wrote equals a value of the turn's evidence: its class, its unit
and its value (money to the cent, other numbers to a relative 1e-9), and how a claim
record writes a value back."""

from __future__ import annotations

import math
from typing import Any

from turnstream.sdk.claims.detect import NumberMention
from turnstream.sdk.claims.evidence import EvidenceValue

__all__ = [
    "CENT",
    "approximately",
    "mention_value_of",
    "number_of",
    "same_unit",
    "same_value",
    "same_value_items",
]

#: Money is equal to the cent; other numbers to a relative 1e-9 (they were parsed, not computed).
CENT = 0.005
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "MXN", "ARS", "CLP", "COP", "UYU", "SGD", "HKD"})


def number_of(value: Any) -> float | None:
    """A finite number from a value of the evidence or a mention (a numeric string too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _close(a: float, b: float, cls: str) -> bool:
    if cls == "money":
        return abs(a - b) < CENT
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def same_unit(mention: NumberMention, item: EvidenceValue) -> bool:
    """Whether the units agree (either missing agrees; a bare "$" is any dollar or peso)."""
    a, b = mention.unit, item.unit
    if a is None or b is None or a.lower() == b.lower():
        return True
    if mention.cls == "money" and "$" in (a, b):
        return (b if a == "$" else a).upper() in _DOLLARS
    return False


def _date(value: Any) -> str | None:
    if isinstance(value, str) and len(value) >= 10 and value[4] == "-":
        return value[:10]
    return None


def same_value(mention: NumberMention, item: EvidenceValue) -> bool:
    """Whether a value of the evidence equals the number (its class, unit and value)."""
    if item.class_ != mention.cls or mention.cls == "label" or not same_unit(mention, item):
        return False
    mv, iv = mention.value, item.value
    if mention.cls == "date":
        ev = _date(iv)
        if not isinstance(mv, str) or ev is None:
            return False
        return mv[2:] == ev[5:] if mv.startswith("--") else mv == ev
    if isinstance(mv, tuple | list):
        return (
            isinstance(iv, tuple | list)
            and len(iv) == 2
            and all(
                (x := number_of(p)) is not None
                and (y := number_of(q)) is not None
                and _close(x, y, mention.cls)
                for p, q in zip(mv, iv, strict=True)
            )
        )
    a, b = number_of(mv), number_of(iv)
    return a is not None and b is not None and _close(a, b, mention.cls)


def approximately(m: NumberMention, item: EvidenceValue, tolerance: float) -> bool:
    """Whether the value is within ``tolerance`` (relative) of the number, in its class and unit."""
    a, b = number_of(m.value), number_of(item.value)
    if a is None or b is None or item.class_ != m.cls or not same_unit(m, item):
        return False
    return abs(a - b) <= tolerance * max(abs(b), 1e-9) + 1e-9


def same_value_items(a: EvidenceValue, b: EvidenceValue) -> bool:
    """Whether two values of the evidence hold the same value."""
    return a.class_ == b.class_ and a.value == b.value and (a.unit or "") == (b.unit or "")


def mention_value_of(item: EvidenceValue) -> str:
    """A value of the evidence written as a claim record writes a number ("129.99")."""
    value = item.value
    if isinstance(value, tuple | list):
        return "..".join(mention_value_of(item.model_copy(update={"value": v})) for v in value)
    number = number_of(value) if not isinstance(value, str) else None
    if number is None:
        return str(value)
    if item.class_ == "money":
        return f"{number:.2f}"
    return str(int(number)) if number.is_integer() else f"{number:f}".rstrip("0").rstrip(".")
