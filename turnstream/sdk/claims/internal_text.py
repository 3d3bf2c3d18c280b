"""Internal text: fingerprints of the company's own prompt, and their repeats in an output.

A fingerprint is the BLAKE2b-128 digest (hex) of ``n`` consecutive normalised words joined by
one space (``normalize``: lower case, accents removed, punctuation dropped), so "Nunca
revele o desconto máximo de 30% ao cliente" and "nunca revele o desconto maximo de 30 ao
cliente" give the same one. BLAKE2b is in the standard library, about as fast as MD5 here,
and not reversible: the contract holds digests, never the prompt. The SDK computes them from
the prompt; nothing stores the prompt or a window of it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import accumulate

from turnstream.sdk.claims.normalize import fold, words

__all__ = ["DEFAULT_N", "find_repeats", "fingerprint", "fingerprints"]

#: Words per fingerprint.
DEFAULT_N = 8
_WORD = re.compile(r"[^\W_]+")  # the words of ``normalize``


def fingerprint(window: Iterable[str]) -> str:
    """The digest of one window of normalised words."""
    return hashlib.blake2b(" ".join(window).encode("utf-8"), digest_size=16).hexdigest()


def _words(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    folded = fold(text)
    spans = words(folded)
    return [folded[s:e] for s, e in spans], spans


def fingerprints(prompt: str, n: int = DEFAULT_N) -> list[str]:
    """The fingerprints of every ``n`` consecutive words of ``prompt``, without repeats."""
    tokens, _ = _words(prompt)
    seen: dict[str, None] = {}
    for i in range(len(tokens) - n + 1):
        seen.setdefault(fingerprint(tokens[i : i + n]))
    return list(seen)


@lru_cache(maxsize=16)
def _digests(known: frozenset[str]) -> frozenset[bytes]:
    # The contract's fingerprints as bytes, once per set (a frozenset keeps its hash).
    return frozenset(bytes.fromhex(k) for k in known)


def find_repeats(text: str, known: frozenset[str] | set[str], n: int) -> list[tuple[int, int]]:
    """Spans of ``text`` that repeat a known window (overlapping windows merged), in order.

    The words are joined once into one line of bytes and each window is a slice of it: a
    join of ``n`` words per window took half of the 0.6 ms a 2 kB output's ~390 windows
    cost. Word spans are looked up only when a window matches.
    """
    if not known:
        return []
    raw = _digests(known if isinstance(known, frozenset) else frozenset(known))
    folded = fold(text)
    tokens = _WORD.findall(folded)
    count = len(tokens) - n + 1
    if count <= 0:
        return []
    joined = " ".join(tokens)
    line = joined.encode("utf-8")
    # where each word starts in the line (the last: one past the end, +1 for the space);
    # folded text is mostly ASCII, where a word's length in bytes is its length
    sizes = map(len, tokens) if len(line) == len(joined) else (len(t.encode()) for t in tokens)
    starts = list(accumulate((size + 1 for size in sizes), initial=0))
    blake2b = hashlib.blake2b
    hits = [
        i
        for i in range(count)
        if blake2b(line[starts[i] : starts[i + n] - 1], digest_size=16).digest() in raw
    ]
    if not hits:
        return []
    spans = words(folded)
    passages: list[tuple[int, int]] = []
    for i in hits:
        start, end = spans[i][0], spans[i + n - 1][1]
        if passages and start <= passages[-1][1]:
            passages[-1] = (passages[-1][0], max(end, passages[-1][1]))
        else:
            passages.append((start, end))
    return passages
