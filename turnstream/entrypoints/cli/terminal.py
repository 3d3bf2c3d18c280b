"""Stored text made safe to print to a terminal: producer data is data, not commands.

A value a producer sent (a ref, a reason, a shown field) reaches ``turnstream sql``'s
table as it is stored. Printed raw, its control characters are the terminal's commands:
``\\x1b]0;...\\x07`` retitles the window, ``\\x1b[2J`` clears the screen, and the bidi
overrides and isolates reorder what is shown (a cell that reads differently from what it
holds). The human-readable table shows them escaped instead, visible and inert; the JSON
and CSV formats keep the data exact (JSON escapes them by its own rules).
"""

from __future__ import annotations

__all__ = ["UNSAFE", "visible"]

#: The code points printed escaped: C0 (tab and newline too: a cell is one line), DEL,
#: C1, the bidi embeddings and overrides (U+202A to U+202E) and isolates (U+2066 to
#: U+2069).
UNSAFE = (
    *range(0x00, 0x20),
    0x7F,
    *range(0x80, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
)

#: ``str.translate``'s table: ``\t``, ``\n``, ``\r`` as Python writes them, ``\x1b`` for
#: another byte-sized code point, ``\u202e`` above.
_ESCAPED = {
    **{cp: f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}" for cp in UNSAFE},
    **{ord(c): shown for c, shown in (("\t", "\\t"), ("\n", "\\n"), ("\r", "\\r"))},
}


def visible(text: str) -> str:
    """``text`` with each :data:`UNSAFE` code point written as its escape (``\\x1b``,
    ``\\u202e``); the rest, accents and emoji included, as it is."""
    if text.isprintable():  # the common case: no translation (isprintable is false for all)
        return text
    return text.translate(_ESCAPED)
