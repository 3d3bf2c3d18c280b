"""Text anchors: does the quoted text stand in the document it cites?

Both texts are normalised the same way (lower case, accents removed, every run of anything
but letters and digits one space); the score is ``1 - d / len(quote)``, with ``d`` the edit
distance between the quote and the best passage of the document: edlib's infix mode ("HW":
gaps at both ends of the document are free) computes exactly that minimum over every
substring, in C (Myers' bit-vector algorithm). rapidfuzz's ``partial_ratio`` is another
measure (an Indel ratio over windows the length of the quote) and is not used.

A number inside the anchored passage is still checked: the quote's numbers must be the
passage's, since a changed amount costs one or two edits and the score alone lets it through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import edlib

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
    found = edlib.align(q, d, mode="HW", task="locations")
    distance = int(found["editDistance"])
    wanted = _numbers(q)
    numbers_match = any(
        _numbers(_whole_words(d, start, end + 1)) == wanted
        for start, end in found["locations"]
        if start is not None
    )
    return AnchorScore(max(0.0, 1.0 - distance / len(q)), distance, numbers_match)
