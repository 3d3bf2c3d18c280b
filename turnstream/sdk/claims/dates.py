"""Dates: ISO, numeric (day first in pt/es, month first in en) and with the month written."""

from __future__ import annotations

import calendar
import re
import unicodedata

from babel.dates import get_month_names

from turnstream.sdk.claims.mention import Language, Mention
from turnstream.sdk.claims.spans import Taken
from turnstream.sdk.claims.units import unit_after

__all__ = ["read_dates"]

# Spellings CLDR leaves out but people write.
_EXTRA_MONTHS: dict[Language, dict[str, int]] = {
    "pt": {"marco": 3},
    "en": {"sept": 9},
    "es": {"sep": 9, "set": 9, "setiembre": 9},
}


def _months(lang: Language) -> dict[str, int]:
    """Month name (wide and abbreviated, from babel's CLDR data, with and without accents)."""
    names: dict[str, int] = dict(_EXTRA_MONTHS[lang])
    for width in ("wide", "abbreviated"):
        for month, name in get_month_names(width, "format", locale=lang).items():
            word = name.lower().rstrip(".")
            names[word] = month
            names[_plain(word)] = month
    return names


def _plain(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


_WIDE = frozenset(
    name.lower()
    for lang in ("pt", "en", "es")
    for name in get_month_names("wide", locale=lang).values()
)
_MONTHS = {lang: _months(lang) for lang in ("pt", "en", "es")}
_ALT = {
    lang: "|".join(re.escape(w) for w in sorted(names, key=len, reverse=True))
    for lang, names in _MONTHS.items()
}
_DAY = r"(?P<d>[0-3]?[0-9])"
_YEAR = r"(?P<y>[12][0-9]{3})"
_ORD = r"(?:\.?[ºª°]|st|nd|rd|th|\.?er|o\b)?"
_END = r"(?![0-9]|[.,][0-9]|\w)"

_ISO = re.compile(
    r"(?<![\w./-])(?P<y>[12][0-9]{3})([-/.])(?P<m>[01]?[0-9])\2(?P<d>[0-3]?[0-9])"
    r"(?:T[0-9:.]+Z?)?" + _END
)
_NUMERIC3 = re.compile(
    r"(?<![\w./-])(?P<a>[0-3]?[0-9])([/.-])(?P<b>[0-3]?[0-9])\2"
    r"(?P<y>[0-9]{4}|[0-9]{2})(?![\w/-]|[.,][0-9])"
)
_NUMERIC2 = re.compile(r"(?<![\w./,-])(?P<a>[0-3]?[0-9])/(?P<b>[0-3]?[0-9])(?![\w/]|[.,][0-9])")
# "15 de março de 2025", "15 mar. 2025", "1º de maio", "15-mar-2025"; "10 a 15 de março" is two.
_WRITTEN_DMY = {
    lang: re.compile(
        rf"(?<![\w.,])(?:(?P<d0>[0-3]?[0-9]){_ORD}\s*(?:a|e|y|al|até|-|\u2013)\s*)?{_DAY}{_ORD}"
        rf"(?:\s+de\s+|\s+|-|/)(?P<m>{_ALT[lang]})\.?"
        rf"(?:(?:\s+de\s+|\s+del\s+|,?\s+|-|/){_YEAR})?(?!\w)",
        re.IGNORECASE,
    )
    for lang in ("pt", "es", "en")
}
# "March 15, 2025", "Mar. 15th", "March 10-15"
_WRITTEN_MDY = re.compile(
    rf"(?<![\w.])(?P<m>{_ALT['en']})\.?\s+(?:(?P<d0>[0-3]?[0-9]){_ORD}\s*(?:-|\u2013|to|and)\s*)?"
    rf"{_DAY}{_ORD}(?:,?\s+{_YEAR})?(?!\w|[.,:][0-9])",
    re.IGNORECASE,
)
_WRITTEN_EN_DMY = re.compile(
    rf"(?<![\w.,]){_DAY}{_ORD}\s+(?:of\s+)?(?P<m>{_ALT['en']})\.?(?:,?\s+{_YEAR})?(?!\w)",
    re.IGNORECASE,
)


def _iso(year: int | None, month: int, day: int) -> str | None:
    if not 1 <= month <= 12 or day < 1:
        return None
    last = calendar.monthrange(year if year else 2024, month)[1]  # 2024: 29 February exists
    if day > last:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


def _year(text: str | None) -> int | None:
    if text is None:
        return None
    year = int(text)
    if len(text) == 2:  # two digits: 00-69 is this century, as strptime reads %y
        year += 2000 if year < 70 else 1900
    return year


def _take(taken: Taken, start: int, end: int, value: str | None) -> None:
    if value is not None:
        taken.add(Mention(start, end, taken.text[start:end], "date", value, None))


_DATE_GOES_ON = frozenset("/.-ºª°sntreoSNTREO")


def read_dates(taken: Taken, lang: Language, runs: list[tuple[int, int]]) -> None:
    """Add every date still free; each is tried where a run of digits starts."""
    text = taken.text
    months = _MONTHS[lang]
    written = _WRITTEN_DMY[lang] if lang != "en" else _WRITTEN_EN_DMY
    mask = taken.mask
    for start, stop in runs:
        if mask[start]:
            continue
        # "March 15": a month name, then a space, just before (English only)
        month_first = lang == "en" and start > 1 and text[start - 1] == " "
        at = _month_before(text, start, months) if month_first else None
        m = _WRITTEN_MDY.match(text, at) if at is not None else None
        if m is not None and taken.free(m.start(), m.end()):
            _written(taken, m, months, mdy=True)
            continue
        # A date goes on after its first digits with a separator, an ordinal mark, or a
        # space and a word ("15 de", "15 mar", "10 a 15"); most runs stop at once here.
        after = text[stop : stop + 1]
        if after.isspace():
            if not text[stop + 1 : stop + 2].isalpha():
                continue
        elif not after or after not in _DATE_GOES_ON:
            continue
        separated = after in "/.-"
        if separated and (m := _ISO.match(text, start)) and taken.free(m.start(), m.end()):
            _take(taken, m.start(), m.end(), _iso(int(m["y"]), int(m["m"]), int(m["d"])))
        elif (m := written.match(text, start)) and taken.free(m.start(), m.end()):
            _written(taken, m, months, mdy=False)
        elif separated:
            _numeric(taken, start, month_first=lang == "en")


def _month_before(text: str, start: int, months: dict[str, int]) -> int | None:
    """Where the month name just before ``start`` begins ("March 15"), if there is one."""
    head = text[max(0, start - 14) : start]
    word = head.rstrip()
    if len(word) == len(head):
        return None
    word = word.rstrip(".")
    i = len(word)
    while i > 0 and word[i - 1].isalpha():
        i -= 1
    name = word[i:].lower()
    if name in months or (not name.isascii() and _plain(name) in months):
        return start - len(head) + i
    return None


def _written(taken: Taken, m: re.Match[str], months: dict[str, int], *, mdy: bool) -> None:
    text = taken.text
    name = m["m"].lower()
    month = months[name] if name in months else months[_plain(name)]
    year = _year(m["y"])
    end = m.end()
    if text[end - 1] == "." and m.end("m") == end - 1 and name in _WIDE:
        end -= 1  # the full name then a full stop: the sentence's, not an abbreviation's
    if m.groupdict().get("d0") is None:
        _take(taken, m.start(), end, _iso(year, month, int(m["d"])))
    elif mdy:  # "March 10-15": "March 10" and "15"
        _take(taken, m.start(), m.end("d0"), _iso(year, month, int(m["d0"])))
        _take(taken, m.start("d"), end, _iso(year, month, int(m["d"])))
    else:  # "10 a 15 de março": "10" and "15 de março"
        _take(taken, m.start("d0"), m.end("d0"), _iso(year, month, int(m["d0"])))
        _take(taken, m.start("d"), end, _iso(year, month, int(m["d"])))


def _numeric(taken: Taken, start: int, *, month_first: bool) -> None:
    text = taken.text
    for pattern in (_NUMERIC3, _NUMERIC2):
        m = pattern.match(text, start)
        if m is None or not taken.free(m.start(), m.end()):
            continue
        if pattern is _NUMERIC2 and unit_after(text, m.end()) is not None:
            return  # "1/2 kg", "3/4 cup" are fractions
        a, b = int(m["a"]), int(m["b"])
        year = _year(m.groupdict().get("y"))
        month, day = (a, b) if month_first else (b, a)
        _take(taken, m.start(), m.end(), _iso(year, month, day) or _iso(year, day, month))
        return
