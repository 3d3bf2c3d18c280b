"""Dates: ISO, numeric (day first in pt/es, month first in en) and with the month written."""

from __future__ import annotations

import calendar
import re
import unicodedata

from babel.dates import get_month_names

from turnstream.sdk.claims.mention import Language, Mention
from turnstream.sdk.claims.numerals import Numeral, Words
from turnstream.sdk.claims.spans import Taken
from turnstream.sdk.claims.units import unit_after

__all__ = ["read_dates", "read_word_dates"]

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
# A two-digit year, only after a separator ("05-Mar-26", "5/mar/26").
_YEAR2 = r"[-/.](?P<y2>[0-9]{2})(?![0-9])"
_ORD = r"(?:\.?[ºª°]|st|nd|rd|th|\.?er|o\b|(?:ro|do|to|vo|no|mo)\b)?"
_END = r"(?![0-9]|[.,][0-9]|\w)"

# The separators may differ ("2026/03-05", "05/03-2026", "5-3/2026"): people mix them.
_ISO = re.compile(
    r"(?<![\w./-])(?P<y>[12][0-9]{3})[-/.](?P<m>[01]?[0-9])[-/.](?P<d>[0-3]?[0-9])"
    r"(?:T[0-9:.]+Z?)?" + _END
)
# Mixed separators only with a four-digit year: "2.5-10 mg" is a range of doses.
_NUMERIC3 = re.compile(
    r"(?<![\w./-])(?P<a>[0-3]?[0-9])(?P<s1>[/.-])(?P<b>[0-3]?[0-9])(?P<s2>[/.-])"
    r"(?P<y>[0-9]{4}|[0-9]{2})(?![\w/-]|[.,][0-9])"
)
_NUMERIC2 = re.compile(r"(?<![\w./,-])(?P<a>[0-3]?[0-9])/(?P<b>[0-3]?[0-9])(?![\w/]|[.,][0-9])")
# A day and month joined by a dot or a hyphen ("15.03", "15-03"; month first in English,
# hyphen only: "03-15"): a date when the second part is written with two digits and its 0
# ("15.03": a decimal or a range rarely pads with 0), or after a word that introduces a date
# ("até 15.10", "el 4-22"); never with a currency before or a unit after ("R$ 15.03",
# "10-12 dias"). In English a dotted pair is a decimal.
_PAIR = re.compile(
    r"(?<![\w./,-])(?P<a>[0-3]?[0-9])(?P<sep>[.-])(?P<b>[0-3]?[0-9])(?![\w/.-]|[.,][0-9])"
)
_DATE_WORDS = frozenset(
    {"dia", "em", "até", "ate", "desde", "el", "día", "hasta", "para", "on", "by", "until"}
)
# "15 de março de 2025", "15 mar. 2025", "1º de maio", "15-mar-2025"; "10 a 15 de março" is two.
_WRITTEN_DMY = {
    lang: re.compile(
        rf"(?<![\w.,])(?:(?P<d0>[0-3]?[0-9]){_ORD}\s*(?:a|e|y|al|até|-|\u2013)\s*)?{_DAY}{_ORD}"
        rf"(?:\s+de\s+|\s+|-|/|\.)(?P<m>{_ALT[lang]})\.?"
        rf"(?:(?:\s+de\s+|\s+del\s+|,?\s+|-|/|\.){_YEAR}|{_YEAR2})?(?!\w)",
        re.IGNORECASE,
    )
    for lang in ("pt", "es", "en")
}
# "March 15, 2025", "Mar. 15th", "March 10-15", "Mar-05-2026", "Mar/5/26"
_WRITTEN_MDY = re.compile(
    rf"(?<![\w.])(?P<m>{_ALT['en']})\.?(?:\s+|[-/.])"
    rf"(?:(?P<d0>[0-3]?[0-9]){_ORD}\s*(?:-|\u2013|to|and)\s*)?"
    rf"{_DAY}{_ORD}(?:(?:,?\s+|[-/.]){_YEAR}(?![0-9])|{_YEAR2}|,?\s+'(?P<y3>[0-9]{{2}}))?"
    rf"(?!\w|[.,:][0-9])",
    re.IGNORECASE,
)
# Month first in Portuguese and Spanish ("março 5, 2026", "marzo 5 de 2026"): only with its
# year or joined by a separator, since "em março 5 lojas abriram" is no date.
_WRITTEN_MDY_ROMANCE = {
    lang: re.compile(
        rf"(?<![\w.])(?P<m>{_ALT[lang]})\.?"
        rf"(?P<sep>\s+|[-/.]){_DAY}{_ORD}(?:,?\s+|\s+de\s+|\s+del\s+|[-/.])"
        rf"(?:{_YEAR}|(?P<y2>[0-9]{{2}}))(?![0-9]|\w)",
        re.IGNORECASE,
    )
    for lang in ("pt", "es")
}
_WRITTEN_EN_DMY = re.compile(
    rf"(?<![\w.,]){_DAY}{_ORD}(?:\s+(?:of\s+)?|[-/.])(?P<m>{_ALT['en']})\.?"
    rf"(?:(?:,?\s+|[-/.]){_YEAR}|{_YEAR2}|,?\s+'(?P<y3>[0-9]{{2}}))?(?!\w)",
    re.IGNORECASE,
)
# Year first with the month written ("2026-Mar-05", "2026 March 5", "2026/mar/05").
_WRITTEN_YMD = {
    lang: re.compile(
        rf"(?<![\w.,/-]){_YEAR}(?P<sep>[-/. ])(?P<m>{_ALT[lang]})\.?(?P=sep){_DAY}{_ORD}"
        rf"(?![0-9]|\w|[.,:][0-9])",
        re.IGNORECASE,
    )
    for lang in ("pt", "en", "es")
}


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
        # "March 15", "Mar-05-2026", "março 5, 2026": a month name, then a space or a
        # separator, just before
        month_first = start > 1 and text[start - 1] in " -/."
        at = _month_before(text, start, months) if month_first else None
        m = _month_first(text, at, lang) if at is not None else None
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
        elif (
            stop - start == 4
            and (m := _WRITTEN_YMD[lang].match(text, start))
            and taken.free(m.start(), m.end())
        ) or ((m := written.match(text, start)) and taken.free(m.start(), m.end())):
            _written(taken, m, months, mdy=False)
        elif separated and not _numeric(taken, start, month_first=lang == "en"):
            _pair(taken, start, lang)


def _month_before(text: str, start: int, months: dict[str, int]) -> int | None:
    """Where the month name just before ``start`` begins ("March 15"), if there is one."""
    head = text[max(0, start - 14) : start]
    word = head.rstrip()
    if len(word) == len(head):
        if not head or head[-1] not in "-/.":
            return None
        word = head[:-1]
    word = word.rstrip(".")
    i = len(word)
    while i > 0 and word[i - 1].isalpha():
        i -= 1
    name = word[i:].lower()
    if name in months or (not name.isascii() and _plain(name) in months):
        return start - len(head) + i
    return None


def _month_first(text: str, at: int, lang: Language) -> re.Match[str] | None:
    """A date written month first at ``at``: any form in English; with its year (or
    separators) in Portuguese and Spanish."""
    if lang == "en":
        return _WRITTEN_MDY.match(text, at)
    m = _WRITTEN_MDY_ROMANCE[lang].match(text, at)
    if m is None or (m["sep"].isspace() and m["y"] is None):
        return None
    return m


def _written(taken: Taken, m: re.Match[str], months: dict[str, int], *, mdy: bool) -> None:
    text = taken.text
    name = m["m"].lower()
    month = months[name] if name in months else months[_plain(name)]
    groups = m.groupdict()
    year = _year(groups.get("y") or groups.get("y2") or groups.get("y3"))
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


def _numeric(taken: Taken, start: int, *, month_first: bool) -> bool:
    """Read a numeric date with slashes (or any separator and a year); say whether one of
    the patterns matched (a fraction before a unit matches and reads nothing)."""
    text = taken.text
    for pattern in (_NUMERIC3, _NUMERIC2):
        m = pattern.match(text, start)
        if m is None or not taken.free(m.start(), m.end()):
            continue
        if pattern is _NUMERIC3 and m["s1"] != m["s2"] and len(m["y"]) != 4:
            continue
        if pattern is _NUMERIC2 and unit_after(text, m.end()) is not None:
            return True  # "1/2 kg", "3/4 cup" are fractions
        a, b = int(m["a"]), int(m["b"])
        year = _year(m.groupdict().get("y"))
        month, day = (a, b) if month_first else (b, a)
        _take(taken, m.start(), m.end(), _iso(year, month, day) or _iso(year, day, month))
        return True
    return False


def _pair(taken: Taken, start: int, lang: Language) -> None:
    from turnstream.sdk.claims.units import currency_before

    text = taken.text
    m = _PAIR.match(text, start)
    if m is None or (lang == "en" and m["sep"] == "."):
        return
    first, second = m["a"], m["b"]
    padded = len(first) == 2 and len(second) == 2 and (second if lang != "en" else first)[0] == "0"
    words = text[max(0, start - 12) : start].split()
    if not padded and not (words and words[-1].lower() in _DATE_WORDS):
        return
    if currency_before(text, start) is not None or unit_after(text, m.end()) is not None:
        return
    a, b = int(first), int(second)
    month, day = (a, b) if lang == "en" else (b, a)
    _take(taken, m.start(), m.end(), _iso(None, month, day) or _iso(None, day, month))


# A day in words before its month: "primeiro de janeiro", "dois de março de 2025", "primero
# de mayo", "the first of May", "twenty-first of March"; and "May first" in English. Words
# count only before a unit, and a month is one here: it says what the number counts.
_ORDINALS_TEXT = (
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
)
_EN_ORDINALS = _ORDINALS_TEXT.split()
_ORDINAL_WORDS: dict[Language, dict[str, int]] = {
    "pt": {"primeiro": 1},
    "es": {"primero": 1},
    "en": {word: day for day, word in enumerate(_EN_ORDINALS, start=1)}
    | {f"twenty-{word}": 20 + day for day, word in enumerate(_EN_ORDINALS[:9], start=1)}
    | {"thirtieth": 30, "thirty-first": 31},
}
_OF_MONTH = {
    lang: re.compile(
        (r"(?:\s+of(?:\s+the)?)?" if lang == "en" else r"\s+del?")
        + rf"\s+(?P<m>{_ALT[lang]})\.?"
        + rf"(?:(?:\s+de\s+|\s+del\s+|,?\s+){_YEAR})?(?!\w)",
        re.IGNORECASE,
    )
    for lang in ("pt", "en", "es")
}
_ORDINAL_DAY = {
    lang: re.compile(
        r"(?<!\w)(?P<d>"
        + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
        + r")(?!\w)",
        re.IGNORECASE,
    )
    for lang, words in _ORDINAL_WORDS.items()
}
_MONTH_THEN_ORDINAL = re.compile(
    rf"(?P<m>{_ALT['en']})\.?\s+(?:the\s+)?(?P<d>"
    + "|".join(sorted(map(re.escape, _ORDINAL_WORDS["en"]), key=len, reverse=True))
    + rf")(?:,?\s+{_YEAR})?(?!\w)",
    re.IGNORECASE,
)
_PUNCTUATION = ".,;:!?()\"'\u201c\u201d\u00ab\u00bb"
# The ordinal words as split on hyphens ("twenty-first": "first"), to test the text's words.
_ORDINAL_PARTS = {
    lang: frozenset(part for word in words for part in word.split("-"))
    for lang, words in _ORDINAL_WORDS.items()
}


def read_word_dates(taken: Taken, lang: Language, nums: list[Numeral], words: Words) -> None:
    """Add the dates whose day is written in words: a number in words (1 to 31) or an
    ordinal word ("primeiro", "first") before the month, or after it in English."""
    text = taken.text
    months = _MONTHS[lang]
    of_month = _OF_MONTH[lang]
    for num in nums:
        if not num.in_words or not (isinstance(num.value, int) and 1 <= num.value <= 31):
            continue
        m = of_month.match(text, num.end)
        if m is not None and taken.free(num.start, m.end()):
            _take_words(taken, num.start, m, int(num.value), months)
    # Ordinal words: a set intersection with the text's words first (most texts have none;
    # "second" is also a unit of time), then anchored matches where one stands (a scan of
    # the text with the alternation of the ordinals took 0.5 ms).
    parts = _ORDINAL_PARTS[lang]
    low = words.low
    if not any(part in low for part in parts):  # substring tests: a few us
        return
    hits = parts.intersection(w.strip(_PUNCTUATION) for w in words.words)
    if not hits:
        return
    ordinals = _ORDINAL_WORDS[lang]
    pattern = _ORDINAL_DAY[lang]
    if len(words.low) != len(text):  # lower() moved offsets: scan the text instead
        found = list(pattern.finditer(text))
    else:
        found = []
        for pos, _ in words.find(hits):
            tens = words.low[pos - 7 : pos] if pos >= 7 else ""
            d = pattern.match(text, pos - 7) if tens in ("twenty-", "thirty-") else None
            d = d or pattern.match(text, pos)
            if d is not None:
                found.append(d)
    for d in found:
        day = ordinals[d["d"].lower()]
        m = of_month.match(text, d.end())
        if m is not None and taken.free(d.start(), m.end()):
            _take_words(taken, d.start(), m, day, months)
        elif lang == "en" and (at := _month_before(text, d.start(), months)) is not None:
            m = _MONTH_THEN_ORDINAL.match(text, at)
            # English writes its months capitalised: "you may first" is no date
            if m is not None and m["m"][0].isupper() and taken.free(m.start(), m.end()):
                _take_words(taken, m.start(), m, ordinals[m["d"].lower()], months)


def _take_words(
    taken: Taken, start: int, m: re.Match[str], day: int, months: dict[str, int]
) -> None:
    name = m["m"].lower()
    month = months[name] if name in months else months[_plain(name)]
    end = m.end()
    if taken.text[end - 1] == "." and m.end("m") == end - 1 and name in _WIDE:
        end -= 1  # the sentence's full stop
    value = _iso(_year(m["y"]), month, day)
    if value is not None:
        taken.add(Mention(start, end, taken.text[start:end], "date", value, None, in_words=True))
