"""Numerals: digits with the decimal-mark rule, scale words, and numbers written in words."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable
from typing import NamedTuple

from text_to_num import text2num

from turnstream.core.digits import DIGITS, parse_digits
from turnstream.sdk.claims.mention import Language

__all__ = ["ARTICLES", "DIGITS", "Numeral", "Words", "numerals", "parse_digits"]

# The same number without the look-behind (for one glued to a currency code).
_BODY = re.compile(DIGITS.pattern.replace(r"(?<!\w)(?<![0-9][.,])", "", 1))
_CODE_BEFORE = re.compile(r"(?<![^\W\d_])[A-Z]{3}\Z")


def _iso_glued(text: str, start: int) -> bool:
    from turnstream.sdk.claims.units import is_currency_code

    m = _CODE_BEFORE.search(text, start - 3, start)
    return m is not None and is_currency_code(m.group())


# Words that scale the number before them: "R$ 2 mil", "1,5 milhão", "3 million".
_SCALES: dict[Language, dict[str, int]] = {
    "pt": {
        "mil": 10**3,
        "milhão": 10**6,
        "milhões": 10**6,
        "milhao": 10**6,
        "milhoes": 10**6,
        "mi": 10**6,
        "bilhão": 10**9,
        "bilhões": 10**9,
        "bi": 10**9,
        "tri": 10**12,
        "trilhão": 10**12,
        "trilhões": 10**12,
        "trilhao": 10**12,
        "trilhoes": 10**12,
    },
    "es": {
        "mil": 10**3,
        "millón": 10**6,
        "millones": 10**6,
        "millon": 10**6,
        "mil millones": 10**9,
        "billón": 10**12,
        "billones": 10**12,
        "billon": 10**12,
        "trillón": 10**18,
        "trillones": 10**18,
    },
    "en": {
        "thousand": 10**3,
        "k": 10**3,
        "million": 10**6,
        "millions": 10**6,
        "m": 10**6,
        "mn": 10**6,
        "billion": 10**9,
        "billions": 10**9,
        "bn": 10**9,
        "trillion": 10**12,
    },
}
_SCALE_RE = {
    lang: re.compile(
        r"[ \u00a0]?("
        + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
        + r")(?!\w)",
        re.IGNORECASE,
    )
    for lang, words in _SCALES.items()
}
# "k" and "m" scale only when glued to money ("$10k", "US$ 2M"), never "5 m" (metres).
_GLUED_ONLY = {"k", "m", "mn", "bn"}

# Number words for finding a span; text2num gives the value (and refuses nonsense such as
# "two three"). The lists are the words text2num reads, 0 to the millions.
_WORDS: dict[Language, str] = {
    "pt": "zero um uma dois duas três tres quatro cinco seis sete oito nove dez onze doze treze "
    "catorze quatorze quinze dezesseis dezasseis dezessete dezassete dezoito dezenove dezanove "
    "vinte trinta quarenta cinquenta cinqüenta sessenta setenta oitenta noventa cem cento "
    "duzentos duzentas trezentos trezentas quatrocentos quatrocentas quinhentos quinhentas "
    "seiscentos seiscentas setecentos setecentas oitocentos oitocentas novecentos novecentas "
    "mil milhão milhões milhao milhoes bilhão bilhões bilhao bilhoes trilhão trilhões trilhao "
    "trilhoes",
    "en": "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty "
    "ninety hundred thousand million billion trillion quadrillion quintillion sextillion",
    "es": "cero un uno una dos tres cuatro cinco seis siete ocho nueve diez once doce trece "
    "catorce quince dieciséis dieciseis diecisiete dieciocho diecinueve veinte veintiuno veintiún "
    "veintiuna veintidós veintidos veintitrés veintitres veinticuatro veinticinco veintiséis "
    "veintiseis veintisiete veintiocho veintinueve treinta cuarenta cincuenta sesenta setenta "
    "ochenta noventa cien ciento doscientos doscientas trescientos trescientas cuatrocientos "
    "cuatrocientas quinientos quinientas seiscientos seiscientas setecientos setecientas "
    "ochocientos ochocientas novecientos novecientas mil millón millones billón billones billon "
    "trillón trillones",
}
_JOINERS: dict[Language, str] = {"pt": "e", "en": "and", "es": "y"}
_WORDS_RE = {
    lang: re.compile(
        rf"(?<!\w)(?:{alt})(?:(?:\s+{_JOINERS[lang]}\s+|\s+|-)(?:{alt}))*(?!\w)", re.IGNORECASE
    )
    for lang, words in _WORDS.items()
    for alt in ["|".join(sorted(words.split(), key=len, reverse=True))]
}
_HINTS = {lang: frozenset(words.split()) for lang, words in _WORDS.items()}
# "one" is also an article: alone, it counts only before a unit that is not a bare
# day/week/month/year ("one business day" is a number, "um dia" is not).
ARTICLES = frozenset({"um", "uma", "one", "un", "uno", "una"})


class Numeral(NamedTuple):
    """A number as written: digits (with a scale word) or words.

    A named tuple: one is made for every run of digits, and a frozen dataclass took ~1.5 us
    to build against ~0.3 us for this.
    """

    start: int
    end: int
    value: int | float
    decimals: int  # digits after the decimal mark (0 for integers and words)
    in_words: bool
    plain: bool  # digits only, no separator, no scale: "12345", "2025"
    scaled: str | None = None  # the scale word, lower case


def numerals(
    text: str,
    lang: Language,
    runs: list[int],
    read: bytearray | None = None,
    words: Words | None = None,
) -> list[Numeral]:
    """Every numeral of ``text`` (digits, and runs of number words), in text order.

    ``runs`` are where the runs of digits start: every numeral in digits starts at one.
    ``read`` marks the code points already read (labels, dates): runs there are skipped.
    """
    found: list[Numeral] = []
    starts: list[int] = []
    scale_re = _SCALE_RE[lang]
    scales = _SCALES[lang]
    covered = -1
    for start in runs:
        if start < covered or (read is not None and read[start]):
            continue
        if (m := DIGITS.match(text, start)) is None:
            # glued to an ISO code ("EUR29.66", "USD1,200"): the code stands, the number too
            if not (start >= 3 and _iso_glued(text, start)):
                continue
            if (m := _BODY.match(text, start)) is None:
                continue
        after = text[m.end() : m.end() + 2]
        if (
            after[:1] == " "
            and after[1:].isdigit()
            and (spaced := _SPACED.match(text, start))
            and _spaced_ok(text, spaced, lang)
        ):
            m = spaced
            after = text[m.end() : m.end() + 2]
        raw = m.group()
        value, decimals = parse_digits(raw, lang)
        end = covered = m.end()
        scaled = None
        # a scale word follows a space or is glued ("2 mil", "$10k"); most numbers end at once
        s = scale_re.match(text, end) if after[:1].isalpha() or after[:1] in " \u00a0" else None
        if s:
            word = s.group(1).lower()
            glued = s.start(1) == end
            if word not in _GLUED_ONLY or (glued and _money_before(text, m.start())):
                value = round(value * scales[word], 6)  # 16.4 * 10**6 is 16399999.999999998
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                end, scaled, decimals = s.end(), word, 0
        begin = m.start()
        if (
            raw.isdigit()
            and begin
            and text[begin - 1] in ".,"
            and (begin == 1 or text[begin - 2].isspace())
        ):
            # a decimal without its 0: ".75 €", ",25 ml" (a mark after a space, then digits)
            begin, value, decimals = begin - 1, float(f"0.{raw}"), len(raw)
            if scaled:
                value = round(value * scales[scaled], 6)
        plain = scaled is None and raw.isdigit() and begin == m.start()
        found.append(Numeral(begin, end, value, decimals, False, plain, scaled))
        starts.append(begin)
    for start, end, value in _word_numerals(text, lang, words or Words.of(text)):
        i = bisect_right(starts, end - 1)  # the numerals in digits that start before `end`
        if i and found[i - 1].end > start:
            continue  # overlaps one ("2 mil": "mil" is the scale of 2)
        found.append(Numeral(start, end, value, 0, True, False))
    found.sort(key=lambda n: n.start)
    return found


class Words(NamedTuple):
    """The text in lower case and its words (split on spaces and hyphens), made once per
    read and shared by the passes that look for words (number words, days in words)."""

    low: str
    words: list[str]

    @classmethod
    def of(cls, text: str) -> Words:
        """Splitting runs in C: about 40 us for 2 kB (a regex alternation took 800 us).
        Hyphens split too ("vinte-e-um"); punctuation stays glued to its word (a
        ``str.translate`` that split on it cost 0.5 M instructions a read: it maps each
        character of a non-ASCII text through a dict)."""
        low = text.lower()
        return cls(low, low.replace("-", " ").split())

    def find(self, hits: Iterable[str]) -> list[tuple[int, str]]:
        """Where each of ``hits`` stands in the text as a whole word: (offset, word), sorted.

        Only valid when lower-casing kept every offset (``len(low) == len(text)``).
        """
        low = self.low
        size = len(low)
        found: list[tuple[int, str]] = []
        for word in hits:
            pos = low.find(word)
            while pos != -1:
                stop = pos + len(word)
                before = pos == 0 or not low[pos - 1].isalnum()
                if before and (stop == size or not low[stop].isalnum()):
                    found.append((pos, word))
                pos = low.find(word, stop)
        found.sort()
        return found


def _word_starts(text: str, lang: Language, words: Words) -> list[int]:
    """Where a number word may start: the words of the text that are number words."""
    hits = _HINTS[lang].intersection(words.words)
    if not hits:
        return []
    if len(words.low) != len(text):  # lower() changed a length: positions would not line up
        return [m.start() for m in _WORDS_RE[lang].finditer(text)]
    return [pos for pos, _ in words.find(hits)]


def _word_numerals(text: str, lang: Language, words: Words) -> list[tuple[int, int, int | float]]:
    """Runs of number words with their values; a run text2num refuses keeps its longest
    readable start ("twenty five one" reads "twenty five", then "one")."""
    found: list[tuple[int, int, int | float]] = []
    pattern = _WORDS_RE[lang]
    pos = 0
    for start in _word_starts(text, lang, words):
        if start < pos or (m := pattern.match(text, start)) is None:
            continue
        cuts = [w.end() for w in _WORD.finditer(text, m.start(), m.end())]
        for cut in reversed(cuts):
            words = text[m.start() : cut].lower()
            if lang != "en":
                words = words.replace("-", " ")
            if lang != "en":  # text2num reads "veintitrés", "milhões" only with their accents
                words = " ".join(_ACCENTS.get(w, w) for w in words.split())
            try:
                found.append((m.start(), cut, _value(words, lang)))
            except ValueError:
                continue
            pos = cut
            break
    return found


# Scales text2num does not read: the Spanish long scale ("tres billones" is 3 * 10**12) and
# the Portuguese trillions. The words before the scale multiply it; the words after add.
_LONG_SCALES: dict[Language, dict[str, int]] = {
    "es": {"billón": 10**12, "billones": 10**12, "trillón": 10**18, "trillones": 10**18},
    "pt": {"trilhão": 10**12, "trilhões": 10**12},
    "en": {"trillion": 10**12, "quadrillion": 10**15, "quintillion": 10**18, "sextillion": 10**21},
}


def _value(words: str, lang: Language) -> int | float:
    """The value of a run of number words (text2num, and the scales it does not read)."""
    scales = _LONG_SCALES[lang]
    parts = words.split()
    # the largest scale first: "un trillón doscientos mil billones" is 1 * 10**18 + 200000
    # * 10**12
    found = [(scales[w], -i) for i, w in enumerate(parts) if w in scales]
    if not found:
        return text2num(words, lang)
    scale, at = max(found)
    i = -at
    head, tail = " ".join(parts[:i]), parts[i + 1 :]
    if tail and tail[0] == _JOINERS[lang]:
        tail = tail[1:]
    low = _value(" ".join(tail), lang) if tail else 0
    if low >= scale:
        raise ValueError(words)
    return (_value(head, lang) if head else 1) * scale + low


_WORD = re.compile(r"[^\W\d_]+")
_ACCENTS = {
    "milhao": "milhão",
    "milhoes": "milhões",
    "bilhao": "bilhão",
    "bilhoes": "bilhões",
    "veintidos": "veintidós",
    "veintitres": "veintitrés",
    "veintiseis": "veintiséis",
    "dieciseis": "dieciséis",
    "veintiun": "veintiuno",
    "veintiún": "veintiuno",  # text2num reads "veintiuno mil", not "veintiún mil"
    "billon": "billón",
    "trilhao": "trilhão",
    "trilhoes": "trilhões",
}
# Thousands grouped by a plain space ("9 800 Kč", "17 940,00 €", the SI and RAE style) are
# one number only with a currency around them or decimals after them: "entre 3 500 pessoas"
# stays two numbers.
_SPACED = re.compile(r"[0-9]{1,3}(?: [0-9]{3})+(?:,[0-9]{1,2}|\.[0-9]{2})?(?![0-9]|[.,][0-9])")


def _spaced_ok(text: str, m: re.Match[str], lang: Language) -> bool:
    from turnstream.sdk.claims.units import currency_before, unit_after

    raw = m.group()
    if raw[-3:-2] in ",." or raw[-2:-1] == ",":
        return True
    after = unit_after(text, m.end())
    return (after is not None and after[1].cls == "money") or currency_before(
        text, m.start()
    ) is not None


_MONEY_BEFORE = re.compile(r"[$€£¥][ \u00a0]?\Z")


def _money_before(text: str, start: int) -> bool:
    return bool(_MONEY_BEFORE.search(text, max(0, start - 3), start))
