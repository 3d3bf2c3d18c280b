"""A price as an agent sends it in ``current`` (or a presentation showed it): a number, or
text in the space's language with a currency symbol or code before or after it
(``"R$ 3.599"``, ``"1.299,90"`` in pt, ``"3,599.00"`` in en, ``"49,90 €"``), read by the
decimal-mark rule of :func:`turnstream.core.digits.parse_digits`. Pure."""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from babel.numbers import list_currencies

from turnstream.core.digits import DIGITS, parse_digits

__all__ = ["MONEY_BOUND", "UnreadableMoney", "money_or_none", "read_money"]

#: A price is a finite number from 0 up to (not including) this.
MONEY_BOUND = 1e12


class UnreadableMoney(ValueError):
    """A value given for a price that is not one (why, in ``str``)."""


#: The currency signs of Unicode's basic plane (category Sc: ``$``, ``€``, ``£``, ``₹``...).
_SIGNS = (
    "$\xa2\xa3\xa4\xa5\u058f\u060b\u07fe\u07ff\u09f2\u09f3\u09fb\u0af1\u0bf9\u0e3f\u17db"
    + "".join(chr(c) for c in range(0x20A0, 0x20C1))
    + "\ua838\ufdfc\ufe69\uff04\uffe0\uffe1\uffe5\uffe6"
)


@functools.cache
def _codes() -> frozenset[str]:
    return frozenset(list_currencies())


@functools.cache
def _pattern() -> re.Pattern[str]:
    # A currency: an ISO 4217 code (checked apart), or up to three letters and a sign
    # ("R$", "US$", "€").
    currency = rf"(?:[A-Z]{{3}}|[A-Za-z]{{0,3}}[{re.escape(_SIGNS)}])"
    body = DIGITS.pattern.replace(r"(?<!\w)(?<![0-9][.,])", "", 1)
    return re.compile(rf"(?P<pre>{currency})?\s*(?P<num>{body})\s*(?P<post>{currency})?")


def _known(currency: str | None) -> bool:
    return currency is None or not currency.isalpha() or currency in _codes()


def read_money(value: Any, language: str) -> float:
    """``value`` as a price: a finite number from 0 below :data:`MONEY_BOUND`, or text
    read in ``language`` (one currency at most, before or after). Raises
    :class:`UnreadableMoney` for anything else: a negative, ``NaN``, ``Infinity``, a
    list, a flag, a text no number can be read from."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise UnreadableMoney(f"a price is a number or a text, not {type(value).__name__}")
    if isinstance(value, str):
        m = _pattern().fullmatch(value.strip())
        if m is None or (m["pre"] and m["post"]):
            raise UnreadableMoney("not a price in the space's language")
        if not (_known(m["pre"]) and _known(m["post"])):
            raise UnreadableMoney("not a price in the space's language")
        number = float(parse_digits(m["num"], language)[0])
    else:
        number = float(value) if isinstance(value, float) or abs(value) < MONEY_BOUND else math.inf
    if not math.isfinite(number) or number < 0 or number >= MONEY_BOUND:
        raise UnreadableMoney(f"a price is a finite number from 0 below {MONEY_BOUND:.0e}")
    return number


def money_or_none(value: Any, language: str) -> float | None:
    """:func:`read_money`, ``None`` for what it cannot read."""
    try:
        return read_money(value, language)
    except UnreadableMoney:
        return None
