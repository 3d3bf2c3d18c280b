"""Digits as a language writes them: the decimal-mark rule, shared by the claim checker's
number reader (``turnstream.sdk.claims.numerals``) and the block's reading of prices sent
as text (:mod:`turnstream.core.constraints.money`); a value written as one decimal number
and a number as plain text, shared by the block's words for values
(:mod:`turnstream.core.constraints.text`) and derivation's sizes
(:mod:`turnstream.core.derivation.values`). Pure."""

from __future__ import annotations

import re

__all__ = ["DIGITS", "parse_digits", "plain_number", "read_decimal"]

# Digits, grouped by . , or a no-break / thin space (what formatted output uses between
# thousands), or plain; never glued to a word before it nor to another number's separator.
DIGITS = re.compile(
    r"(?<!\w)(?<![0-9][.,])"
    r"(?:[0-9]{1,3}(?:[.,\u00a0\u202f\u2009][0-9]{3})+(?:[.,][0-9]+)?|[0-9]+(?:[.,][0-9]+)?)"
    r"(?![0-9])"
)
_GROUP_SPACES = str.maketrans("", "", "\u00a0\u202f\u2009 ")


def parse_digits(text: str, lang: str) -> tuple[int | float, int]:
    """The value of a digit string and how many digits follow its decimal mark.

    With both ``.`` and ``,`` the last one is the decimal mark. With one of them: used more
    than once, it groups thousands; once, before exactly three digits (and not after a lone
    0), it groups thousands when the language groups with it (pt/es ``.``, en ``,``); in
    every other case it is the decimal mark ("R$ 511.06" in pt is 511.06).
    """
    if text.isdigit():  # most numbers: no mark, no space (one test instead of five)
        return int(text), 0
    s = text.translate(_GROUP_SPACES)
    dots, commas = s.count("."), s.count(",")
    if dots and commas:
        mark = "." if s.rfind(".") > s.rfind(",") else ","
        other = "," if mark == "." else "."
        head, _, tail = s.replace(other, "").partition(mark)
        return _number(head, tail)
    if not dots and not commas:
        return int(s), 0
    sep = "." if dots else ","
    if dots + commas > 1:
        return int(s.replace(sep, "")), 0
    head, _, tail = s.partition(sep)
    grouping = "," if lang == "en" else "."
    if len(tail) == 3 and sep == grouping and head != "0":
        return int(head + tail), 0
    return _number(head, tail)


def _number(head: str, tail: str) -> tuple[int | float, int]:
    return float(f"{head or '0'}.{tail or '0'}"), len(tail)


#: A value that is one decimal number (``40``, ``40.0``, ``40,5``, ``-2,5``; not ``007``,
#: nor ``1.299``, whose mark may group thousands), of at most 15 digits, all kept by a float.
_DECIMAL = re.compile(r"[+-]?(?:0|[1-9]\d{0,12})(?:[.,]\d{1,2})?")


def read_decimal(text: str) -> float | None:
    """The number ``text`` is written as when it is one decimal number (``40``, ``40.0``,
    ``+40`` and ``40,0`` -> 40.0; ``40,5`` -> 40.5; ``-2,5`` -> -2.5); ``None`` when it is
    not (``007``, ``1.299``, ``38-40``, `` 40``). The one rule of a number written as a
    value: sizes (:func:`~turnstream.core.derivation.values.size_key`), the value a field's
    value names (:mod:`turnstream.core.value_ids`) and the block's words for values."""
    return float(text.replace(",", ".")) if _DECIMAL.fullmatch(text) else None


def plain_number(number: int | float) -> str:
    """A number as plain text: a whole one without a point (``40`` for 40.0), any other as
    Python writes it (``40.5``)."""
    if isinstance(number, float) and number.is_integer():
        return str(int(number))
    return str(number)
