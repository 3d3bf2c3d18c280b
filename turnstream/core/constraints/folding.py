"""Text as words are compared: without case and without accents."""

from __future__ import annotations

import unicodedata

__all__ = ["folded"]


def folded(text: str) -> str:
    """``text`` casefolded with its accents dropped (``Doença`` -> ``doenca``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
