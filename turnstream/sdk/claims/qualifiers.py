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
from dataclasses import dataclass
from typing import Literal

from turnstream.sdk.claims.normalize import fold

__all__ = ["APPROXIMATE", "THRESHOLD", "Comparison", "Qualified", "Qualifier", "qualifier"]

Qualifier = Literal["approximate", "threshold"]
#: The comparison a condition's bound makes: the value is under it ("lt"), at most ("le"),
#: over ("gt"), at least ("ge"), or starts at it ("from": its lowest value is the bound).
Comparison = Literal["lt", "le", "gt", "ge", "from"]
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
# A condition's words by the comparison they make: "lt" (under), "le" (at most), "gt"
# (over), "ge" (at least), "from" (the lowest price is the bound: "starting at $80", "desde").
_THRESHOLDS: dict[Comparison, tuple[str, ...]] = {
    "lt": (
        "below", "under", "less than", "cheaper than", "lower than",
        "abaixo de", "menos de", "inferior a", "inferiores a", "mais barato que",
        "mais barata que", "mais baratos que", "mais baratas que", "menor que", "por menos de",
        "por debajo de", "mas barato que", "mas barata que", "mas baratos que",
        "mas baratas que", "menor de", "por menos de",
    ),
    "le": (
        "up to", "at most", "no more than", "not more than", "ate", "no maximo",
        "hasta", "como maximo", "a lo sumo",
    ),
    "gt": (
        "above", "over", "more than", "in excess of", "exceeding", "more expensive than",
        "higher than",
        "acima de", "mais de", "superior a", "superiores a", "mais caro que", "mais cara que",
        "mais caros que", "mais caras que", "maior que",
        "mas de", "por encima de", "mas caro que", "mas cara que", "mas caros que",
        "mas caras que",
    ),
    "ge": (
        "at least", "minimum", "minimum of", "min", "no less than", "not less than",
        "pelo menos", "no minimo", "minimo de", "minimo",
        "como minimo", "al menos",
    ),
    # (not a bare "from": "down from $150" is a list price, compared as one)
    "from": ("starting at", "starting from", "starts at", "a partir de", "desde"),
}  # fmt: skip
_AFTER: dict[Comparison, str] = {"ge": "or more|ou mais|o mas", "gt": "or above"}


def _before(words: tuple[str, ...]) -> re.Pattern[str]:
    alt = "|".join(
        r"\s+".join(map(re.escape, w.split())) for w in sorted(set(words), key=len, reverse=True)
    )
    # the word, an optional full stop ("approx."), spaces, an optional currency prefix
    return re.compile(rf"(?<![^\W_])({alt})\.?\s*(?:[a-z]{{0,3}}[$€£¥]\s*)?\Z")


_HEDGE_BEFORE = re.compile(r"(?:~|\u2248|\u223c|\+/-|\u00b1)\s*(?:[a-z]{0,3}[$€£¥]\s*)?\Z")
_HEDGE_WORD_BEFORE = _before(_HEDGES)
_HEDGE_AFTER = re.compile(
    r"\A(?:-?ish(?![^\W_])|\s+(?:or so|ou algo assim|mais ou menos|mas o menos|o asi|"
    r"aproximadamente|aprox|give or take)(?![^\W_]))"
)
#: Each condition's words (spaces made one) and the comparison they make; one search for all.
_COMPARISON = {w: how for how, words in _THRESHOLDS.items() for w in words}
_THRESHOLD_BEFORE = _before(tuple(_COMPARISON))
_THRESHOLD_AFTER = re.compile(rf"\A\s+({'|'.join(_AFTER.values())})(?![^\W_])")
_COMPARISON_AFTER = {w: how for how, words in _AFTER.items() for w in words.split("|")}
_THRESHOLD_CLASSES = frozenset({"money", "percent", "quantity", "count"})
_REACH = 40  # characters looked at before the number


@dataclass(frozen=True, slots=True)
class Qualified:
    """How the words around a number qualify it."""

    kind: Qualifier
    #: Where the qualifying words before the number start (the number's start when they
    #: stand after it): role terms inside them ("de" in "cerca de") give no role.
    start: int
    #: A condition's comparison (None for a hedge).
    comparison: Comparison | None = None


def qualifier(text: str, sentence_start: int, start: int, end: int, cls: str) -> Qualified | None:
    """How the words around the number at ``start:end`` qualify it, if they do."""
    lo = max(sentence_start, start - _REACH)
    head = fold(text[lo:start])
    tail = fold(text[end : end + 24])
    if cls in _THRESHOLD_CLASSES:
        # The longest words that end right before the number ("no more than", not "more than").
        if m := _THRESHOLD_BEFORE.search(head):
            return Qualified(THRESHOLD, lo + m.start(), _COMPARISON[" ".join(m.group(1).split())])
        if m := _THRESHOLD_AFTER.match(tail):
            return Qualified(THRESHOLD, start, _COMPARISON_AFTER[" ".join(m.group(1).split())])
    m = _HEDGE_BEFORE.search(head) or _HEDGE_WORD_BEFORE.search(head)
    if m is not None:
        return Qualified(APPROXIMATE, lo + m.start())
    if _HEDGE_AFTER.match(tail):
        return Qualified(APPROXIMATE, start)
    return None
