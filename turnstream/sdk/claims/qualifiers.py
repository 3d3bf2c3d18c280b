"""Hedges and conditions: words around a number that say it is not a plain claim of value.

- **Approximate**: a hedge word or sign before the number ("about", "around", "~",
  "cerca de", "aproximadamente", "alrededor de", "unos", ...) or after it ("-ish",
  "or so", "mais ou menos", "más o menos"): "about 40 dollars" does not claim $40.00.
- **Threshold**: a condition's bound ("free above $50.00", "acima de R$ 50,00",
  "a partir de R$ 99", "desde 20 €", "orders over $50", "at least"): the number is the
  condition's, never a price. Only for money, percent, quantity and count: "até 5/3" is a
  deadline, "desde el 3 de marzo" a date.

Matching is on the folded text (lower case, accents removed), whole words, with only
spaces between the word and the number (a currency sign may stand between: "around $40").
"""

from __future__ import annotations

import re
from typing import Literal

from turnstream.sdk.claims.normalize import fold

__all__ = ["APPROXIMATE", "THRESHOLD", "Qualifier", "qualifier"]

Qualifier = Literal["approximate", "threshold"]
APPROXIMATE: Qualifier = "approximate"
THRESHOLD: Qualifier = "threshold"

_HEDGES = (
    # en
    "about", "around", "approximately", "approx", "roughly", "nearly", "almost", "circa",
    "ca", "close to", "some", "more or less", "in the region of", "somewhere around",
    "give or take",
    # pt
    "cerca de", "aproximadamente", "aprox", "por volta de", "em torno de", "uns", "umas",
    "quase", "mais ou menos", "perto de", "na faixa de", "por cerca de",
    # es
    "alrededor de", "unos", "unas", "casi", "mas o menos", "del orden de", "en torno a",
    "aproximadamente de", "cerca de unos",
)  # fmt: skip
_THRESHOLDS = (
    # en
    "above", "over", "more than", "at least", "starting at", "starting from", "minimum",
    "minimum of", "min", "in excess of", "exceeding", "or more", "below", "under",
    "less than", "up to",
    # pt
    "acima de", "a partir de", "mais de", "pelo menos", "no minimo", "minimo de", "minimo",
    "superior a", "superiores a", "abaixo de", "menos de", "inferior a", "inferiores a",
    # es
    "desde", "mas de", "por encima de", "como minimo", "al menos", "superior a",
    "por debajo de", "hasta",
)  # fmt: skip


def _before(words: tuple[str, ...]) -> re.Pattern[str]:
    alt = "|".join(
        r"\s+".join(map(re.escape, w.split())) for w in sorted(set(words), key=len, reverse=True)
    )
    # the word, an optional full stop ("approx."), spaces, an optional currency prefix
    return re.compile(rf"(?<![^\W_])(?:{alt})\.?\s*(?:[a-z]{{0,3}}[$€£¥]\s*)?\Z")


_HEDGE_BEFORE = re.compile(r"(?:~|\u2248|\u223c|\+/-|\u00b1)\s*(?:[a-z]{0,3}[$€£¥]\s*)?\Z")
_HEDGE_WORD_BEFORE = _before(_HEDGES)
_HEDGE_AFTER = re.compile(
    r"\A(?:-?ish(?![^\W_])|\s+(?:or so|ou algo assim|mais ou menos|mas o menos|o asi|"
    r"aproximadamente|aprox|give or take)(?![^\W_]))"
)
_THRESHOLD_BEFORE = _before(_THRESHOLDS)
_THRESHOLD_AFTER = re.compile(r"\A\s+(?:or more|or above|ou mais|o mas)(?![^\W_])")
_THRESHOLD_CLASSES = frozenset({"money", "percent", "quantity", "count"})
_REACH = 40  # characters looked at before the number


def qualifier(
    text: str, sentence_start: int, start: int, end: int, cls: str
) -> tuple[Qualifier, int] | None:
    """How the words around the number at ``start:end`` qualify it, if they do, and where
    the qualifying words before it start (``start`` when they stand after it): role terms
    inside them ("de" in "cerca de", "acima de") give the number no role."""
    lo = max(sentence_start, start - _REACH)
    head = fold(text[lo:start])
    tail = fold(text[end : end + 24])
    if cls in _THRESHOLD_CLASSES:
        if m := _THRESHOLD_BEFORE.search(head):
            return THRESHOLD, lo + m.start()
        if _THRESHOLD_AFTER.match(tail):
            return THRESHOLD, start
    m = _HEDGE_BEFORE.search(head) or _HEDGE_WORD_BEFORE.search(head)
    if m is not None:
        return APPROXIMATE, lo + m.start()
    if _HEDGE_AFTER.match(tail):
        return APPROXIMATE, start
    return None
