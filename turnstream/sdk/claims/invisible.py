"""Invisible characters: what the person never sees is not read either.

A zero-width space, a soft hyphen, a word joiner or a byte-order mark inside a word or a
number is not shown: "$12\u200b9.99" shows $129.99 and "C\u200bity Flex" the City Flex.
The checker reads the output without them (:func:`visible`) and maps every span back to
the output as written, so an edit covers the characters it hides too.

A bidirectional control (embeddings, overrides, isolates, marks: U+202A-202E,
U+2066-2069, U+200E, U+200F, U+061C) reorders what is shown: "$\u202e99.90" shows
"$09.99", up to the end of its line. Rather than reproduce the bidirectional algorithm, a
claim of a line that holds one is never approved (``check``: a ``mismatch``, evidence
``bidi_control``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["BIDI", "Visible", "bidi_around", "visible"]

#: The bidirectional controls.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_HIDDEN = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200d\u2060-\u2065"
    "\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f" + BIDI + "]"
)
_BIDI = re.compile(f"[{BIDI}]")
_PARAGRAPH_SEPARATORS = ("\n", "\r", "\u2029", "\x1c", "\x1d", "\x1e", "\x85")


@dataclass(frozen=True, slots=True)
class Visible:
    """An output without its invisible characters, and the way back to its offsets."""

    text: str
    #: for each character of ``text``, its offset in the output (None: the same text)
    where: list[int] | None = None
    #: offsets in ``text`` where a bidirectional control stood
    bidi: list[int] = field(default_factory=list)
    #: the output's length
    length: int = 0

    def original(self, start: int, end: int) -> tuple[int, int]:
        """A span of ``text`` as a span of the output (covering what it hides inside)."""
        if self.where is None:
            return start, end
        if start >= end:
            at = self.where[start] if start < len(self.where) else self.length
            return at, at
        return self.where[start], self.where[end - 1] + 1

    def offset(self, original: int) -> int:
        """An offset of the output as an offset of ``text`` (an anchor's)."""
        if self.where is None:
            return original
        return bisect.bisect_left(self.where, original)


def bidi_around(text: str, bidi: Sequence[int], start: int, end: int) -> bool:
    """Whether one of the ``bidi`` offsets (sorted) lies in the paragraph (the line) of
    ``text[start:end]``: an override reorders everything after it up to the line's end."""
    if not bidi:
        return False
    low = max(text.rfind(sep, 0, start) for sep in _PARAGRAPH_SEPARATORS) + 1
    ends = [at for sep in _PARAGRAPH_SEPARATORS if (at := text.find(sep, end)) != -1]
    high = min(ends, default=len(text))
    i = bisect.bisect_left(bidi, low)
    return i < len(bidi) and bidi[i] <= high


def visible(text: str) -> Visible:
    """``text`` without its invisible characters (most outputs hold none: no copy then)."""
    if text.isascii() or _HIDDEN.search(text) is None:
        return Visible(text, length=len(text))
    kept: list[str] = []
    where: list[int] = []
    bidi: list[int] = []
    for i, ch in enumerate(text):
        if _HIDDEN.match(ch):
            if _BIDI.match(ch):
                bidi.append(len(kept))
            continue
        kept.append(ch)
        where.append(i)
    return Visible("".join(kept), where, bidi, len(text))
