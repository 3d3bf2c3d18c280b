"""Text as words are compared: without case and without accents."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["folded", "normal"]

_SEPARATORS = re.compile(r"[\s_-]+")


def folded(text: str) -> str:
    """``text`` casefolded with its accents dropped (``Doença`` -> ``doenca``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normal(name: str) -> str:
    """``name`` :func:`folded`, ``_``, ``-`` and runs of white space one space, trimmed
    (`` Azul_Marinho `` -> ``azul marinho``)."""
    return _SEPARATORS.sub(" ", folded(name)).strip()
