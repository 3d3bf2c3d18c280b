"""Stored text made safe to print to a terminal: producer data is data, not commands.

A value a producer sent (a ref, a reason, a shown field) reaches ``turnstream sql``'s
table as it is stored. Printed raw, its control characters are the terminal's commands:
``\\x1b]0;...\\x07`` retitles the window, ``\\x1b[2J`` clears the screen; the bidi
overrides, isolates and marks reorder what is shown, and the invisible characters (zero
widths, tags, fillers) make two different values look the same. The human-readable table
shows them escaped instead, visible and inert; the JSON and CSV formats keep the data
exact (JSON escapes them by its own rules).
"""

from __future__ import annotations

import unicodedata

__all__ = ["MAX_MARKS", "UNSAFE_CATEGORIES", "visible"]

#: The Unicode categories printed escaped: controls (C0, DEL, C1), format characters (bidi
#: marks, embeddings, overrides and isolates, zero widths, the byte-order mark, tags),
#: surrogates, private use, unassigned code points and noncharacters, and the line and
#: paragraph separators (a cell is one line).
UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})

#: Letters that print as nothing (the Hangul fillers).
_BLANK_LETTERS = frozenset({0x115F, 0x1160, 0x3164, 0xFFA0})

#: Combining marks kept on one character; past them each is escaped (a stack of fifty
#: accents spills over the lines around it).
MAX_MARKS = 4

#: The zero-width joiner, kept after an emoji (it joins emoji sequences: 👩‍💻).
_ZWJ = 0x200D

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(char: str) -> str:
    cp = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def visible(text: str) -> str:
    """``text`` with each character of :data:`UNSAFE_CATEGORIES`, each blank letter and
    each combining mark past :data:`MAX_MARKS` on one character written as its escape
    (``\\x1b``, ``\\u202e``, ``\\U000e0041``); the rest, accents, spaces and emoji
    included, as it is."""
    if text.isascii() and text.isprintable():  # the common case: nothing to look at
        return text
    out: list[str] = []
    marks, previous = 0, ""
    for char in text:
        category = unicodedata.category(char)
        marks = marks + 1 if category in ("Mn", "Me") else 0
        cp = ord(char)
        unsafe = category in UNSAFE_CATEGORIES or cp in _BLANK_LETTERS or marks > MAX_MARKS
        if cp == _ZWJ and previous in ("So", "Sk"):
            unsafe = False
        out.append(_escaped(char) if unsafe else char)
        if marks == 0:
            previous = category
    return "".join(out)
