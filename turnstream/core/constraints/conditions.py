"""Conditions on one field: their operators, the values they refuse, and when two clash.

A condition is an operator and its values (``in [black]``, ``lte 700``). Values compare
as numbers when both read as numbers (``"700"`` and ``700`` are the same value), as
strings when both are strings, and not at all otherwise: a pair whose clash cannot be
decided is never reported as one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from turnstream.core.constraints.inputs import Scalar
from turnstream.core.value_ids import as_number, canonical

__all__ = [
    "BlockOp",
    "bound_within",
    "clashes",
    "holds",
    "refusing",
    "signs",
]

#: The operators of a block entry: the wire's, and ``not_between`` for a refused range.
BlockOp = Literal["in", "not_in", "eq", "ne", "lt", "lte", "gt", "gte", "between", "not_between"]

# A refusal (must_not) of each operator: the values it names are refused. not_in and ne
# already say a refusal, so they stay; a refused comparison is the opposite comparison.
_REFUSING: dict[str, BlockOp] = {
    "in": "not_in",
    "eq": "ne",
    "not_in": "not_in",
    "ne": "ne",
    "lt": "gte",
    "lte": "gt",
    "gt": "lte",
    "gte": "lt",
    "between": "not_between",
}
_ALLOWED = ("in", "eq")
_EXCLUDED = ("not_in", "ne")
_RANGES = ("lt", "lte", "gt", "gte", "between")

# (low, low included, high, high included); None is unbounded.
_Interval = tuple[Scalar | None, bool, Scalar | None, bool]


def refusing(op: str) -> BlockOp:
    """The operator of a ``must_not``: ``in`` → ``not_in``, ``eq`` → ``ne``, ``lte`` → ``gt``."""
    return _REFUSING[op]


def _compare(a: Scalar, b: Scalar) -> int | None:
    """-1, 0 or 1; ``None`` when the two values do not compare."""
    x, y = as_number(a), as_number(b)
    if x is not None and y is not None:
        return (x > y) - (x < y)
    if isinstance(a, str) and isinstance(b, str) and x is None and y is None:
        return (a > b) - (a < b)
    return None


def _interval(op: str, values: Sequence[Scalar]) -> _Interval:
    if op == "lt":
        return (None, False, values[0], False)
    if op == "lte":
        return (None, False, values[0], True)
    if op == "gt":
        return (values[0], False, None, False)
    if op == "gte":
        return (values[0], True, None, False)
    low, high = values[0], values[1]
    if _compare(low, high) == 1:
        low, high = high, low
    return (low, True, high, True)


def _inside(value: Scalar, interval: _Interval) -> bool | None:
    low, low_in, high, high_in = interval
    if low is not None:
        order = _compare(value, low)
        if order is None:
            return None
        if order < 0 or (order == 0 and not low_in):
            return False
    if high is not None:
        order = _compare(value, high)
        if order is None:
            return None
        if order > 0 or (order == 0 and not high_in):
            return False
    return True


def _disjoint(a: _Interval, b: _Interval) -> bool:
    """Whether two intervals surely share no value."""
    lows = [(v, inc) for v, inc in ((a[0], a[1]), (b[0], b[1])) if v is not None]
    highs = [(v, inc) for v, inc in ((a[2], a[3]), (b[2], b[3])) if v is not None]
    for low, low_in in lows:
        for high, high_in in highs:
            order = _compare(low, high)
            if order is not None and (order > 0 or (order == 0 and not (low_in and high_in))):
                return True
    return False


def _within(a: _Interval, outer: _Interval) -> bool:
    """Whether interval ``a`` surely lies inside the closed interval ``outer``."""
    if a[0] is None or a[2] is None:
        return False
    return _inside(a[0], outer) is True and _inside(a[2], outer) is True


def _kind(op: str) -> int:
    if op in _ALLOWED:
        return 0
    if op in _EXCLUDED:
        return 1
    if op in _RANGES:
        return 2
    return 3  # not_between


def clashes(op_a: str, values_a: Sequence[Scalar], op_b: str, values_b: Sequence[Scalar]) -> bool:
    """Whether no value can meet both conditions (on the same field)."""
    if _kind(op_a) > _kind(op_b):
        op_a, values_a, op_b, values_b = op_b, values_b, op_a, values_a
    a, b = _kind(op_a), _kind(op_b)
    keys_a = {canonical(v) for v in values_a}
    keys_b = {canonical(v) for v in values_b}
    if (a, b) == (0, 0):
        return not keys_a & keys_b
    if (a, b) == (0, 1):
        return keys_a <= keys_b
    if (a, b) == (0, 2):
        interval = _interval(op_b, values_b)
        return all(_inside(v, interval) is False for v in values_a)
    if (a, b) == (0, 3):
        interval = _interval("between", values_b)
        return all(_inside(v, interval) is True for v in values_a)
    if (a, b) == (1, 2):
        low, low_in, high, high_in = _interval(op_b, values_b)
        point = low is not None and high is not None and low_in and high_in
        return point and _compare(low, high) == 0 and canonical(low) in keys_a
    if (a, b) == (2, 2):
        return _disjoint(_interval(op_a, values_a), _interval(op_b, values_b))
    if (a, b) == (2, 3):
        return _within(_interval(op_a, values_a), _interval("between", values_b))
    return False  # two refusals can always both hold


def signs(op: str, values: Sequence[Scalar], polarity: str) -> dict[str, int]:
    """Each named value and which way the entry leans on it: +1 towards, -1 away.

    ``polarity`` is ``prefer`` (or a hard requirement) or ``avoid``. Comparisons name
    no single value and lean on none.
    """
    if op in _ALLOWED:
        sign = 1
    elif op in _EXCLUDED:
        sign = -1
    else:
        return {}
    if polarity == "avoid":
        sign = -sign
    return {canonical(v): sign for v in values}


def holds(op: str, values: Sequence[Scalar], value: Scalar) -> bool | None:
    """Whether ``value`` meets the condition; ``None`` when that cannot be decided (a
    comparison of values that do not compare, ``"M"`` against ``lte 700``)."""
    key = canonical(value)
    if op in _ALLOWED:
        return key in {canonical(v) for v in values}
    if op in _EXCLUDED:
        return key not in {canonical(v) for v in values}
    inside = _inside(value, _interval("between" if op == "not_between" else op, values))
    if inside is None or op != "not_between":
        return inside
    return not inside


def bound_within(
    op: str, values: Sequence[Scalar], bound: Scalar | Sequence[Scalar]
) -> bool | None:
    """Whether a tool's bound argument (``max_price=700``; ``[100, 700]`` for ``between``)
    asks for no more than the comparison allows: an upper bound at or under the limit, a
    lower one at or over it, a range inside the range. A bound is where the tool cuts,
    so ``lt 700`` is carried by ``max_price=700``. ``None`` when the values do not compare."""
    if op == "between":
        if not isinstance(bound, list | tuple) or len(bound) != 2:
            return False
        inside = [_inside(b, _interval("between", values)) for b in bound]
        return None if None in inside else all(inside)
    if isinstance(bound, list | tuple):
        return False
    order = _compare(bound, values[0])
    if order is None:
        return None
    return order <= 0 if op in ("lt", "lte") else order >= 0
