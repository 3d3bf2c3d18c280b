"""Quotation marks: the passages of an output reproduced as a source wrote them.

Pairs of any kind: double curly quotes, straight double quotes, guillemets, single curly quotes
(a right single quote between two letters is an apostrophe, as in "don't", not a closing
mark). Straight double quotes pair in order.
"""

from __future__ import annotations

import re

__all__ = ["quoted_spans"]

_RSQUO = "\u2019"
_PAIRS = {"\u201c": "\u201d", "\u00ab": "\u00bb", "\u2018": _RSQUO, "\u201e": "\u201c"}
_OPENING = re.compile('["\u201c\u00ab\u2018\u201e]')


def quoted_spans(text: str) -> list[tuple[int, int]]:
    """Spans of the quoted passages (inside the marks), outermost, in order."""
    spans: list[tuple[int, int]] = []
    n = len(text)
    opening = _OPENING.search(text)
    i = opening.start() if opening else n
    while i < n:
        ch = text[i]
        close = _PAIRS.get(ch) or ('"' if ch == '"' else None)
        if close is None:
            nxt = _OPENING.search(text, i + 1)
            i = nxt.start() if nxt else n
            continue
        j = i + 1
        while j < n:
            if text[j] == close and not (
                close == _RSQUO and j + 1 < n and text[j + 1].isalpha() and text[j - 1].isalpha()
            ):
                break
            j += 1
        if j >= n:  # an opening mark never closed: nothing is quoted
            i += 1
            continue
        if j > i + 1:
            spans.append((i + 1, j))
        i = j + 1
    return spans
