"""A condition's bound against an object's values: "under $100", "a partir de R$ 80,00".

A bound is said of an object when the object's name stands right before the condition's
words, with only linking words between ("The Aero Runner is under $100.", "O City Flex
custa menos de R$ 100", "El City Flex ahora desde $80"): :func:`subject`. "The City Flex
costs about $100, and shipping is free above $50.00." says nothing of the City Flex's
price with its $50.00.

A bound said of an object claims something of its values: every value compared must satisfy
it ("lt": under, "le": at most, "gt": over, "ge": at least), and "from" ("starting at $80",
"a partir de", "desde") claims the lowest value is the bound. Money compares to the cent:
"under $99.90" of a $99.90 product does not hold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeVar

from turnstream.sdk.claims.qualifiers import Comparison

__all__ = ["failing", "subject"]

T = TypeVar("T")
#: Words that link a name to its condition (folded): verbs of being and costing, "now".
_LINKS = frozenset(
    (
        "is", "are", "was", "were", "be", "costs", "cost", "sells", "sell", "goes", "go",
        "for", "at", "now", "currently", "today", "still", "only", "just", "priced", "it",
        "has", "have", "tem", "teem", "tiene", "tienen",
        "e", "esta", "estao", "custa", "custam", "sai", "saem", "fica", "ficam", "vale",
        "por", "agora", "hoje", "ainda", "so", "apenas", "era", "eram",
        "es", "son", "estan", "cuesta", "cuestan", "sale", "salen", "valen", "ahora", "hoy",
        "solo", "todavia",
        # a price said as a noun: "has a price from $799", "tiene un precio a partir de"
        "a", "an", "price", "um", "preco", "un", "precio",
    )
)  # fmt: skip


def subject(tokens: Sequence[re.Match[str]], at: int) -> int | None:
    """The index of the word of a sentence right before offset ``at`` (a condition's first
    word, an offset of the folded sentence ``tokens`` were read from), past linking words;
    None when there is none (the caller says whether that word names an object)."""
    k = next((i for i, t in enumerate(tokens) if t.start() >= at), len(tokens)) - 1
    while k >= 0 and tokens[k].group() in _LINKS:
        k -= 1
    return k if k >= 0 else None


def failing(
    comparison: Comparison, bound: float, values: Sequence[tuple[float, T]], money: bool
) -> T | None:
    """The first value (of ``(number, value)`` pairs, at least one) the bound does not hold
    for, or None when it holds for every one ("from": the lowest, when it is not the bound)."""
    slack = 0.005 if money else 1e-9 * max(1.0, abs(bound))
    if comparison == "from":
        low, item = min(values, key=lambda pair: pair[0])
        return None if abs(low - bound) < slack else item
    for number, item in values:
        holds = {
            "lt": number < bound - slack,
            "le": number < bound + slack,
            "gt": number > bound + slack,
            "ge": number > bound - slack,
        }[comparison]
        if not holds:
            return item
    return None
