"""Amounts, by what stands before or after the number: money, percent, durations, dosages,
quantities and installments; two of them joined by to/até/a/hasta/a hyphen make a range."""

from __future__ import annotations

import re
from collections.abc import Sequence

from turnstream.sdk.claims.mention import Mention
from turnstream.sdk.claims.numerals import ARTICLES, Numeral
from turnstream.sdk.claims.spans import Taken
from turnstream.sdk.claims.units import Unit, currency_at, currency_before, unit_after

__all__ = ["read_amounts"]

_JOIN = re.compile(
    r"[ \u00a0]*[-\u2013\u2014][ \u00a0]*"
    r"|\s+(?P<w>a|à|até|ate|to|until|till|through|thru|hasta|al|e|and|y)\s+",
    re.IGNORECASE,
)
# "e", "and", "y" join a range only after "entre" / "between": "entre 3 e 5 dias".
_BETWEEN = re.compile(r"(?:entre|between)\s+\Z", re.IGNORECASE)
_AND = frozenset({"e", "and", "y"})
_OF = re.compile(r"\s+(?:de|of)\s+", re.IGNORECASE)  # "2 milhões de reais"
_SCALE_WORD = re.compile(
    r"(?:mil|milhões|milhão|milhoes|milhao|bilhões|bilhão|bilhoes|bilhao|trilhões|trilhão|"
    r"trilhoes|trilhao|million|billion|trillion|thousand|millones|millón|billones|billón|"
    r"billon|trillones|trillón)\Z",
    re.IGNORECASE,
)
# The number said again in words, between brackets, before the unit (legal style).
_SAID = re.compile(r"[ \u00a0]?\([^()0-9]{2,60}\)")
_NUMBER_NEXT = re.compile(r"[ \u00a0\u202f]?[0-9]")
_BARE_TIME = frozenset({"day", "week", "month", "year"})
_SIGN = frozenset("-\u2212")


class _Side:
    """One number of an amount with what stands around it."""

    __slots__ = ("end", "num", "start", "unit")

    def __init__(self, text: str, num: Numeral, prefix: tuple[int, str] | None) -> None:
        self.num = num
        self.start = num.start
        self.end = num.end
        self.unit: Unit | None = None
        if prefix is not None:
            self.start, self.unit = prefix[0], Unit("money", prefix[1])
        after = unit_after(text, num.end)
        if (
            after is None
            and not num.in_words
            and "(" in text[num.end : num.end + 2]
            and (said := _SAID.match(text, num.end))
        ):
            after = unit_after(text, said.end())  # "30 (trinta) dias", "15 (quince) días"
        scaled = num.scaled or (num.in_words and _SCALE_WORD.search(text, num.start, num.end))
        if after is None and scaled and (of := _OF.match(text, num.end)):
            after = unit_after(text, of.end() - 1)
        if (
            after is not None
            and (prefix is not None or text[num.end : after[0]].rstrip().endswith("$"))
            and _NUMBER_NEXT.match(text, after[0])
        ):
            # "R$ 139,99 R$ 135,99"; a "$" written before a number ("los AirPods Pro 2
            # $249", "the 65\" one $699"): the sign after is the next price's
            after = None
        if after is not None and (self.unit is None or after[1].cls == "money"):
            self.end = after[0]
            self.unit = after[1] if self.unit is None or after[1].unit != "$" else self.unit


def read_amounts(taken: Taken, nums: Sequence[Numeral]) -> None:
    """Add every amount still free: a number with a currency, %, or a unit, or a range."""
    text = taken.text
    by_start = {n.start: n for n in nums}
    for num in nums:
        if not taken.free(num.start, num.end):
            continue
        prefix = None if num.in_words else currency_before(text, num.start)
        if prefix is not None and not taken.free(prefix[0], num.start):
            prefix = None  # "3,49 zł 1,75 zł": the symbol before is the last amount's
        one = _Side(text, num, prefix)
        two = _second(taken, by_start, one)
        mention = _mention(text, one, two)
        if mention is not None:
            taken.add(mention)


def _second(taken: Taken, by_start: dict[int, Numeral], one: _Side) -> _Side | None:
    """The other end of a range starting with ``one``, when there is one."""
    text = taken.text
    join = _JOIN.match(text, one.end)
    if join is None:
        return None
    word = (join["w"] or "").lower()
    if word in _AND and not _BETWEEN.search(text, max(0, one.start - 9), one.start):
        return None
    at = join.end()
    prefix = currency_at(text, at)
    num = by_start.get(prefix[0] if prefix else at)
    if num is None or not taken.free(num.start, num.end):
        return None
    two = _Side(text, num, (at, prefix[1]) if prefix else None)
    if two.unit is None:
        # "R$ 100 a 200": the second takes the first's currency; nothing else goes bare
        return two if one.unit is not None and one.unit.cls == "money" else None
    if one.unit is None:
        # A currency written before the second number alone begins another amount: "AirPods
        # Pro 2 — $249" is a name and its price, not $2 to $249.
        return two if two.unit.kind is None and prefix is None else None
    same = one.unit.cls == two.unit.cls and one.unit.unit == two.unit.unit
    return two if same and one.unit.kind is None else None


def _mention(text: str, one: _Side, two: _Side | None) -> Mention | None:
    unit = one.unit or (two.unit if two else None)
    if unit is None:
        return None
    words = one.num.in_words or (two is not None and two.num.in_words)
    if two is None and one.num.in_words:
        said = text[one.num.start : one.num.end].lower()
        if said in ARTICLES and (unit.unit in _BARE_TIME or unit.kind is not None):
            return None  # "um dia", "one month": an article before a unit, not a number
    start, end = one.start, (two.end if two else one.end)
    value: int | float | tuple[float, float] = _amount(one.num, unit)
    # "-5%" is negative; "3-5%" is a range
    signed = start > 0 and text[start - 1] in _SIGN and (start < 2 or not text[start - 2].isalnum())
    if signed and two is None and unit.cls in ("money", "percent"):
        start, value = start - 1, -value
    if two is not None:
        value = (_amount(one.num, unit), _amount(two.num, unit))
    if unit.kind == "cents":  # "50 centavos" is 0.50 of the currency
        value = tuple(v / 100 for v in value) if isinstance(value, tuple) else value / 100
        unit = Unit("money", None)
    return Mention(
        start, end, text[start:end], unit.cls, value, unit.unit, unit.kind, two is not None, words
    )


#: Currencies with three decimal places: only theirs is a price to the thousandth.
_MILLS = frozenset({"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"})


def _amount(num: Numeral, unit: Unit) -> int | float:
    """A number's value in its unit. A price written with one mark before three digits
    groups thousands whichever mark the language's decimal is ("$1,199" in es and pt,
    "$1.199" in en: 1199), as no price but in a few currencies has three decimals."""
    thousandths = num.decimals == 3 and 1 <= num.value < 1000
    if unit.cls == "money" and thousandths and unit.unit not in _MILLS:
        return round(num.value * 1000)
    return num.value
