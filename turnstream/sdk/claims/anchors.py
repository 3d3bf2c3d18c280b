"""Text anchors: does the quoted text stand in the document it cites?

Both texts are normalised the same way (lower case, accents removed, every run of anything
but letters and digits one space); the score is ``1 - d / len(quote)``, with ``d`` the edit
distance between the quote and the best passage of the document: the least edit distance
over every substring (Sellers' infix search), computed here with Myers' bit-vector
algorithm on Python integers (one column of the table per character of the document, the
quote's length in bits). edlib computed the same in C but has no linux/aarch64 wheel;
rapidfuzz has no infix mode (``partial_ratio`` is an Indel ratio over windows the length of
the quote, another measure), so neither is used.

A number inside the anchored passage is still checked: the quote's numbers must be the
passage's, since a changed amount costs one or two edits and the score alone lets it through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from turnstream.sdk.claims.normalize import normalize

__all__ = ["DEFAULT_THRESHOLD", "AnchorScore", "score_anchor"]

#: An anchor holds at this score or above.
DEFAULT_THRESHOLD = 0.90
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class AnchorScore:
    """How well a quote stands in a document."""

    score: float
    distance: int
    #: Whether the quote's numbers are those of a best passage (in order).
    numbers_match: bool


def _numbers(text: str) -> list[str]:
    return _DIGITS.findall(text)


def _whole_words(text: str, start: int, end: int) -> str:
    while start > 0 and text[start - 1] != " ":
        start -= 1
    while end < len(text) and text[end] != " ":
        end += 1
    return text[start:end]


def score_anchor(quote: str, document: str) -> AnchorScore:
    """The score of ``quote`` against the best passage of ``document`` (both normalised here)."""
    q, d = normalize(quote), normalize(document)
    if not q:
        return AnchorScore(0.0, 0, False)
    if not d:
        return AnchorScore(0.0, len(q), False)
    wanted = _numbers(q)
    if q in d:  # the quote as it stands (most anchors): distance 0, found by str.find
        at, spans = d.find(q), []
        while at >= 0:
            spans.append((at, at + len(q)))
            at = d.find(q, at + 1)
        match = any(_numbers(_whole_words(d, a, b)) == wanted for a, b in spans)
        return AnchorScore(1.0, 0, match)
    ends = _column_minima(q, d)
    distance = min(ends)
    numbers_match = any(
        _numbers(_whole_words(d, _start(q, d, end, distance), end + 1)) == wanted
        for end, cost in enumerate(ends)
        if cost == distance
    )
    return AnchorScore(max(0.0, 1.0 - distance / len(q)), distance, numbers_match)


def _column_minima(pattern: str, text: str) -> list[int]:
    """For each end ``j`` in ``text``, the least edit distance between ``pattern`` and a
    substring of ``text`` ending at ``j`` (Myers 1999: the pattern's column as bit vectors;
    a substring may start anywhere, so no +1 enters the top row)."""
    m = len(pattern)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    peq: dict[str, int] = {}
    for i, c in enumerate(pattern):
        peq[c] = peq.get(c, 0) | (1 << i)
    pv, mv, score = mask, 0, m
    out: list[int] = []
    for c in text:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = ((((eq & pv) + pv) & mask) ^ pv) | eq
        ph = (mv | ~(xh | pv)) & mask
        mh = pv & xh
        if ph & high:
            score += 1
        elif mh & high:
            score -= 1
        ph = (ph << 1) & mask
        mh = (mh << 1) & mask
        pv = (mh | ~(xv | ph)) & mask
        mv = ph & xv
        out.append(score)
    return out


def _start(pattern: str, text: str, end: int, distance: int) -> int:
    """Where a best passage ending at ``end`` starts: the same search, both reversed, over
    ``text[:end + 1]``; of the starts that cost ``distance``, the one whose passage is
    nearest the pattern's length."""
    costs = _column_minima(pattern[::-1], text[end::-1])
    best = [k for k, cost in enumerate(costs) if cost == distance]
    k = min(best, key=lambda k: abs(k + 1 - len(pattern))) if best else len(pattern) - 1
    return max(0, end - k)
