"""Sentence boundaries, per language, as spans of the original text.

A careful regex rather than a library: pysbd (the maintained rule-based segmenter, last
release 2021) has no Portuguese, split "O Sr. Silva" after "Sr." in its Spanish rules, and took
107 ms on a 1.6 kB output here (median of 30), against a budget of 150 ms for the whole guard;
this splitter takes about 0.05 ms on the same text.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing quotes or brackets) followed by
space and then something that can open a sentence, or at a line break; not after an
abbreviation of the language, an initial or an ordinal marker.
"""

from __future__ import annotations

import re

from turnstream.sdk.claims.contract import Language

__all__ = ["ABBREVIATIONS", "sentence_spans"]

_COMMON = (
    "art arts nº no n núm num p pp pág págs pag cf cfr ex etc vs v obs tel av inc al min máx max "
    "aprox approx ref cap vol ed fig ltda lda s.a sa cia co dr dra sr sra srta prof profa eng adv "
    "ca e.g i.e u.s ee.uu"
)
_BY_LANGUAGE = {
    "pt": "exmo exma sto sta dep des rel proc fls fl par parág jan fev mar abr mai jun jul ago set "
    "out nov dez r res resp agr ag emb embs",
    "en": "mr mrs ms jr st mt dept corp nos sec secs jan feb mar apr jun jul aug sep sept oct nov "
    "dec u.s.c f supp cir ct app ltd est",
    "es": "d dña da ud uds vd vds lic ing gral sto sta ene feb abr may jun jul ago sept oct nov "
    "dic apdo ss sig sigs pza c s.l excmo",
}
#: Words after which a period does not end the sentence, per language (lower case).
ABBREVIATIONS: dict[str, frozenset[str]] = {
    lang: frozenset(_COMMON.split() + extra.split()) for lang, extra in _BY_LANGUAGE.items()
}

# The end of a sentence: terminators, closing marks, then space (or the end).
_END = re.compile("[.!?\u2026]+[\"'\u201d\u2019\u00bb)\\]]*(?=\\s|$)")
_LINE = re.compile(r"\n")
# The word before a period (may hold inner periods: "e.g", "s.a"), matched on the reversed
# few characters before the mark: a search for the pattern anchored at the end tried every
# start in the window (~10 us a period, a third of the splitting).
_WORD_BEFORE_REVERSED = re.compile(r"[^\W\d_]+(?:\.[^\W\d_]+)*")
_OPENER = re.compile("\\s*[\"'\u201c\u2018\u00ab(\\[\u00bf\u00a1]*([^\\W_]|\\d)")


def _ends_sentence(text: str, at: int, end: int, abbreviations: frozenset[str]) -> bool:
    mark = text[at:end]
    nxt = _OPENER.match(text, end)
    if nxt is None:
        return end >= len(text.rstrip())
    first = nxt.group(1)
    if mark[0] != ".":
        return True  # ! ? … always end, unless something lower case follows (below)
    if first.islower():
        return False  # "art. 5º", "p. ex.", a period inside a sentence
    # Only the few characters before the mark: searching from 0 made splitting quadratic
    # (10 ms of a 2 kB output's 28 ms here).
    before = _WORD_BEFORE_REVERSED.match(text[max(0, at - 48) : at][::-1])
    if before is None:
        return True
    word = before.group()[::-1]
    if len(word) == 1 and word.isupper():
        return False  # an initial: "J. Silva"
    if word.isupper():
        return True  # an acronym ("da CF. Enviei"), not the abbreviation "cf."
    return word.lower() not in abbreviations


def sentence_spans(text: str, lang: Language) -> list[tuple[int, int]]:
    """The spans of the sentences of ``text`` (start inclusive, end exclusive), in order.

    Spans start at the sentence's first non-space character and exclude trailing space.
    """
    abbreviations = ABBREVIATIONS[lang]
    cuts: list[int] = []
    for m in _END.finditer(text):
        if _ends_sentence(text, m.start(), m.end(), abbreviations):
            cuts.append(m.end())
    cuts.extend(m.end() for m in _LINE.finditer(text))
    cuts.sort()
    spans: list[tuple[int, int]] = []
    start = 0
    for cut in [*cuts, len(text)]:
        if cut <= start:
            continue
        s, e = start, cut
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        start = cut
    return spans
