"""What changed since the person saw an object: ``shown`` (what it displayed when it was
presented) against a state read later. Pure.

Only fields whose values may change are compared: the types document's ``state`` fields
(price, stock, sizes in stock); a field the read or ``shown`` lacks is not compared (its
state is unknown, not changed). A ``money`` field went up or down; a stock flag or count
went to none (``out_of_stock``) or back (``back_in_stock``); a field of many values
(``many = true``: a list, or in ``shown`` a comma-separated text) gained or lost values
(``new_value`` and ``value_gone``, both when it did both; values compared by the value
they name, :mod:`turnstream.core.value_ids`: ``40`` and ``40.0``, ``Preto`` and
``black``; an emptied one is ``out_of_stock``); any other state field that differs
``changed``. A price may be text in the space's language
(:mod:`turnstream.core.constraints.money`). Words per language:
:mod:`turnstream.core.constraints.text`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from turnstream.core.constraints.money import UnreadableMoney, money_or_none, read_money
from turnstream.core.constraints.text import read_flag
from turnstream.core.value_ids import ValueIds, value_ids
from turnstream.errors import TurnstreamError
from turnstream.models.object_types import ObjectTypes

__all__ = ["Change", "UnreadableState", "changes_since_shown", "read_state", "state_shown"]


@dataclass(frozen=True)
class Change:
    """One field of an object that is not what the person saw."""

    field: str
    #: price_up, price_down, out_of_stock, back_in_stock, new_value, value_gone, changed
    kind: str
    shown: Any
    now: Any
    #: Values a field of many values gained or lost (``new_value``, ``value_gone``).
    values: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The change as the block's and the SDK's JSON say it."""
        found = {"field": self.field, "change": self.kind, "shown": self.shown, "now": self.now}
        return found | ({"values": list(self.values)} if self.values else {})


class UnreadableState(TurnstreamError, ValueError):
    """A state read gives a field a value it cannot have (a price that is no price):
    ``field`` names it, ``str`` says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def read_state(
    ref: str, now: Mapping[str, Any], types: ObjectTypes | None, language: str
) -> dict[str, Any]:
    """``now`` (a state read of ``ref``) with each price read as the number it is
    (:func:`~turnstream.core.constraints.money.read_money` in ``language``); a value
    left unknown (``None``) stays so. Raises :class:`UnreadableState` naming the first
    field whose price cannot be read."""
    if types is None:
        return dict(now)
    type_name = ref.split(":", 1)[0]
    read = dict(now)
    for field, value in now.items():
        declared = types.field(f"{type_name}.{field}")
        if value is None or declared is None or declared.class_ != "money":
            continue
        try:
            read[field] = read_money(value, language)
        except UnreadableMoney as exc:
            raise UnreadableState(field, str(exc)) from None
    return read


def _many(value: Any, attr: str, ids: ValueIds) -> dict[str, str]:
    """The values of ``attr``, a field of many values: the value each names
    (:meth:`~turnstream.core.value_ids.ValueIds.key`) -> the value as written."""
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    found: dict[str, str] = {}
    for item in items:
        written = str(item).strip()
        if written:
            found.setdefault(ids.key(attr, written), written)
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except (ValueError, OverflowError):
        return None
    return number if math.isfinite(number) else None


def _compared(type_name: str, types: ObjectTypes, field: str) -> bool:
    attr = f"{type_name}.{field}"
    return types.role(attr) == "state" and not types.is_sensitive(attr)


def state_shown(ref: str, shown: Mapping[str, Any], types: ObjectTypes | None) -> dict[str, Any]:
    """The values of ``shown`` a later read is compared with: its state fields."""
    if types is None:
        return {}
    type_name = ref.split(":", 1)[0]
    return {
        k: v for k, v in sorted(shown.items()) if v is not None and _compared(type_name, types, k)
    }


def _one(
    type_name: str, field: str, was: Any, now: Any, types: ObjectTypes, language: str
) -> list[Change]:
    declared = types.field(f"{type_name}.{field}")
    assert declared is not None
    if declared.many:
        attr, ids = f"{type_name}.{field}", value_ids(types)
        before, after = _many(was, attr, ids), _many(now, attr, ids)
        if before and not after:
            return [Change(field, "out_of_stock", was, now)]
        if after and not before:
            return [Change(field, "back_in_stock", was, now)]
        added = tuple(v for k, v in after.items() if k not in before)
        gone = tuple(v for k, v in before.items() if k not in after)
        return [
            *([Change(field, "new_value", was, now, added)] if added else []),
            *([Change(field, "value_gone", was, now, gone)] if gone else []),
        ]
    if declared.class_ == "money":
        a, b = money_or_none(was, language), money_or_none(now, language)
        if a is None or b is None or round(a, 6) == round(b, 6):
            return []
        return [Change(field, "price_up" if b > a else "price_down", a, b)]
    if declared.class_ in ("count", None):
        a_flag, b_flag = read_flag(was), read_flag(now)
        if a_flag is not None and b_flag is not None:
            if a_flag and not b_flag:
                return [Change(field, "out_of_stock", was, now)]
            if b_flag and not a_flag:
                return [Change(field, "back_in_stock", was, now)]
            if declared.class_ == "count" or isinstance(was, bool) or isinstance(now, bool):
                return []  # a count that stays above zero says nothing to the person
    a_num, b_num = _number(was), _number(now)
    if a_num is not None and b_num is not None:
        return [] if round(a_num, 6) == round(b_num, 6) else [Change(field, "changed", was, now)]
    return [] if str(was) == str(now) else [Change(field, "changed", was, now)]


def changes_since_shown(
    ref: str,
    shown: Mapping[str, Any],
    now: Mapping[str, Any],
    types: ObjectTypes | None,
    language: str = "en",
) -> list[Change]:
    """What differs between what ``ref`` displayed (``shown``) and its state read
    ``now``, field by field (the declared state fields both hold), in field order; a
    price as the number it is on both sides (text read in ``language``; one that cannot
    be read is not compared)."""
    if types is None:
        return []
    type_name = ref.split(":", 1)[0]
    found = []
    for field in sorted(set(shown) & set(now)):
        if not _compared(type_name, types, field):
            continue
        if shown[field] is None or now[field] is None:
            continue  # unknown on one side: not a change
        found.extend(_one(type_name, field, shown[field], now[field], types, language))
    return found
