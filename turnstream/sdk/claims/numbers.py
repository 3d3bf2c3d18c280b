"""The number reader: every number of an output, each in at most one mention.

The passes run in the order of the claim contract, and each keeps only what the earlier
ones left free: labels by shape and by the word before; dates; amounts by what stands
before or after; codes and ordinals; then the rest (five digits or more and years are
labels, two decimals are money without a currency, an integer before a word is a count).
"""

from __future__ import annotations

import re

from turnstream.sdk.claims.amounts import read_amounts
from turnstream.sdk.claims.dates import read_dates, read_word_dates
from turnstream.sdk.claims.labels import read_codes, read_labels
from turnstream.sdk.claims.mention import Language, Mention, NumberClass, Value
from turnstream.sdk.claims.numerals import Numeral, Words, numerals
from turnstream.sdk.claims.spans import Taken

__all__ = ["LANGUAGES", "Language", "Mention", "NumberClass", "Value", "read_numbers"]

LANGUAGES: tuple[Language, ...] = ("pt", "en", "es")
_WORD_AFTER = re.compile(r"[ \u00a0]+[^\W\d_]")
_DIGIT = re.compile(r"[0-9]")
_RUN = re.compile(r"[0-9]+")
_ADDRESS = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.I)


def read_numbers(text: str, lang: Language) -> list[Mention]:
    """Every number of `text` read in `lang`, each in at most one mention, in text order."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r} (pt, en or es)")
    if _DIGIT.search(text) is None and not _may_have_words(text):
        return []
    taken = Taken(text)
    if "://" in text or "www." in text or "@" in text:
        for m in _ADDRESS.finditer(text):  # "%28" in a link or "joao2024@" are not numbers
            taken.skip(m.start(), m.end())
    spans = [m.span() for m in _RUN.finditer(text)]  # the one scan of the whole text
    runs = [start for start, _ in spans]
    read_labels(taken, spans, lang)
    read_dates(taken, lang, spans)
    words = Words.of(text)
    nums = numerals(text, lang, runs, taken.mask, words)
    read_word_dates(taken, lang, nums, words)
    read_amounts(taken, nums)
    read_codes(taken, runs)
    _read_rest(taken, nums)
    return sorted(taken.mentions, key=lambda m: m.start)


def _may_have_words(text: str) -> bool:
    # Numbers in words count only before a unit; a text without digits is worth the word
    # scan only when it is not empty.
    return bool(text.strip())


def _read_rest(taken: Taken, nums: list[Numeral]) -> None:
    text = taken.text
    for num in nums:
        if num.in_words or not taken.free(num.start, num.end):
            continue
        raw = text[num.start : num.end]
        if num.plain and len(raw) >= 5:
            taken.label(num.start, num.end, "long_number")
        elif num.plain and len(raw) == 4 and 1900 <= int(raw) <= 2100:
            taken.label(num.start, num.end, "year")
        elif num.decimals == 2:
            taken.add(Mention(num.start, num.end, raw, "money", num.value, None))
        elif isinstance(num.value, int) and _WORD_AFTER.match(text, num.end):
            if _after_name(text, num.start):
                taken.label(num.start, num.end, "name")
            else:
                taken.add(Mention(num.start, num.end, raw, "count", num.value, None))


_NAME_BEFORE = re.compile(r"(?<![\w.-])([^\W\d_]*[A-Z][^\W\d_]*) \Z")
_SENTENCE_OPENS = frozenset(".!?:;\n¡¿\"'(\u201c\u00ab")


def _after_name(text: str, start: int) -> bool:
    """Whether the number at ``start`` follows a name inside its sentence ("o iPhone 15 Pro",
    "the PlayStation 5 Slim", "Windows 11"): it is part of the name and counts nothing.

    "An integer before a word is a count" reads "3 pizzas": the number quantifies the word
    after it. After a capitalised or camel-case word that does not open the sentence, the
    number belongs to the name before it instead.
    """
    if start < 2 or text[start - 1] != " ":
        return False
    m = _NAME_BEFORE.search(text, max(0, start - 24), start)
    if m is None:
        return False
    head = text[: m.start()].rstrip()
    return bool(head) and head[-1] not in _SENTENCE_OPENS
