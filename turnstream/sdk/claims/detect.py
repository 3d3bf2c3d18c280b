"""Detection: where an output makes a claim, per category (lexical, no model).

- numbers of the category's classes (a label never); with ``terms``, only in a sentence that
  holds one;
- roles: each role term gives its role to the nearest number of the category within 6 words
  in the same sentence (the number after it when two are equally near: "de R$ 249,90 por
  R$ 199,90"); a number takes the role of its nearest term, and two roles tied at that
  distance leave it ambiguous;
- terms of the trade on their own (with no classes): each occurrence is a claim, unless a
  negation stands right before it ("ainda não reservei", "no reservé");
- the named patterns (citations) and ``document_sections`` (every sentence a claim).

Words are runs of letters and digits; a number mention is one word. Terms match whole words,
in any case, accents included: folding accents away made the Spanish term "reservé" (I
reserved) match "reserve" in "¿Quieres que reserve la talla 40?" and "Do you want me to
reserve size 10?", three phrases of the example corpus.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from turnstream.sdk.claims.contract import Category, Contract
from turnstream.sdk.claims.normalize import lower
from turnstream.sdk.claims.patterns import find_pattern

__all__ = [
    "ROLE_WINDOW",
    "Candidate",
    "Detector",
    "NumberMention",
    "mention_value",
]

#: A role's term counts within this many words of the number.
ROLE_WINDOW = 6
# Words that negate a term of the trade when they stand right before it (pt, en, es).
_NEGATIONS = frozenset(
    {"não", "nao", "nunca", "nem", "jamais", "no", "ni", "not", "never", "jamás"}
)
# At most this many words (clitics, adverbs: "não te enviei", "no lo reservé") in between.
_NEGATION_REACH = 2
_WORD = re.compile(r"[^\W_]+")
_WORDS_BEFORE = re.compile(rf"(?:[^\W_]+\s+){{1,{_NEGATION_REACH + 1}}}$")


class NumberMention(Protocol):
    """A number the reader found (``turnstream.sdk.claims.numbers.Mention``)."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def text(self) -> str: ...
    @property
    def cls(self) -> str: ...
    @property
    def value(self) -> Any: ...
    @property
    def unit(self) -> str | None: ...
    @property
    def is_range(self) -> bool: ...


Kind = Literal["number", "term", "pattern", "section"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A claim found in an output, before any evidence is looked at."""

    category: Category
    kind: Kind
    start: int
    end: int
    sentence: tuple[int, int]
    mention: NumberMention | None = None
    role: str | None = None
    role_tied: tuple[str, ...] = ()
    value: str | None = None

    @property
    def cls(self) -> str | None:
        """The number's class (None for a claim that is not a number)."""
        return self.mention.cls if self.mention is not None else None


def _fmt(number: float | int, cls: str) -> str:
    if cls == "money":
        return f"{float(number):.2f}"
    if isinstance(number, int) or float(number).is_integer():
        return str(int(number))
    return f"{number:f}".rstrip("0").rstrip(".")


def mention_value(mention: NumberMention) -> str:
    """The normalised value of a number, as a claim record holds it.

    Money with two decimals ("199.90"), other numbers as written in plain decimal, a range
    as ``low..high``, a date as ``YYYY-MM-DD`` or ``--MM-DD``.
    """
    value = mention.value
    if isinstance(value, tuple | list) and len(value) == 2:
        return f"{_fmt(value[0], mention.cls)}..{_fmt(value[1], mention.cls)}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _fmt(value, mention.cls)
    return str(value)


def _terms_regex(terms: Sequence[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    folded = sorted({lower(t) for t in terms}, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(map(re.escape, t.split())) for t in folded)
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])")


@dataclass(frozen=True, slots=True)
class _Compiled:
    category: Category
    terms: re.Pattern[str] | None
    roles: tuple[tuple[str, re.Pattern[str]], ...]


@dataclass(slots=True)
class _Sentence:
    span: tuple[int, int]
    starts: list[int]  # word starts (mentions are one word each)
    ends: list[int]

    def word_at(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.starts, offset) - 1)


def _sentence_words(
    text: str, span: tuple[int, int], mentions: Sequence[NumberMention]
) -> _Sentence:
    tokens = [(m.start, m.end) for m in mentions]
    taken = iter(tokens)
    nxt = next(taken, None)
    for w in _WORD.finditer(text, span[0], span[1]):
        while nxt is not None and nxt[1] <= w.start():
            nxt = next(taken, None)
        if nxt is not None and w.start() < nxt[1] and w.end() > nxt[0]:
            continue  # inside a mention
        tokens.append(w.span())
    tokens.sort()
    return _Sentence(span, [s for s, _ in tokens], [e for _, e in tokens])


class Detector:
    """A contract's detection, compiled once (terms and roles as regular expressions)."""

    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self._compiled = [
            _Compiled(
                c,
                _terms_regex(c.detect.terms),
                tuple(
                    (role, rx)
                    for role, terms in c.detect.roles.items()
                    if (rx := _terms_regex(terms)) is not None
                ),
            )
            for c in contract.categories
        ]

    def detect(
        self,
        text: str,
        sentences: Sequence[tuple[int, int]],
        mentions: Sequence[NumberMention],
        agent: str | None,
    ) -> list[Candidate]:
        """Every claim of ``text`` for ``agent``'s categories, in text order."""
        folded = lower(text)
        numbers = [m for m in mentions if m.cls != "label"]
        by_sentence: list[list[NumberMention]] = [[] for _ in sentences]
        starts = [s for s, _ in sentences]
        for m in numbers:
            i = bisect.bisect_right(starts, m.start) - 1
            if i >= 0 and m.end <= sentences[i][1]:
                by_sentence[i].append(m)
        words: dict[int, _Sentence] = {}

        def sentence_words(i: int) -> _Sentence:
            if i not in words:
                inside = [m for m in mentions if sentences[i][0] <= m.start < sentences[i][1]]
                words[i] = _sentence_words(text, sentences[i], inside)
            return words[i]

        found: list[Candidate] = []
        for comp in self._compiled:
            cat = comp.category
            if not cat.applies_to(agent):
                continue
            if cat.detect.classes or comp.roles:
                found.extend(self._numbers(comp, folded, sentences, by_sentence, sentence_words))
            if comp.terms is not None and not cat.detect.classes:
                found.extend(_terms_alone(comp, text, folded, sentences))
            for name in cat.detect.patterns:
                for start, end, cite in find_pattern(name, text):
                    found.append(
                        Candidate(
                            cat, "pattern", start, end, _enclosing(sentences, start), value=cite
                        )
                    )
            if cat.detect.document_sections:
                found.extend(Candidate(cat, "section", s, e, (s, e)) for s, e in sentences)
        found.sort(key=lambda c: (c.start, c.end))
        return found

    def _numbers(
        self,
        comp: _Compiled,
        folded: str,
        sentences: Sequence[tuple[int, int]],
        by_sentence: list[list[NumberMention]],
        sentence_words: Callable[[int], _Sentence],
    ) -> Iterator[Candidate]:
        cat = comp.category
        classes = set(cat.detect.classes)
        for i, span in enumerate(sentences):
            mentions = [m for m in by_sentence[i] if not classes or m.cls in classes]
            if not mentions:
                continue
            needs_term = comp.terms is not None and cat.detect.classes
            if needs_term and comp.terms.search(folded, span[0], span[1]) is None:
                continue
            roles: dict[int, dict[str, int]] = {}
            if comp.roles:
                roles = _roles(comp, folded, span, mentions, sentence_words(i))
            for k, m in enumerate(mentions):
                nearest = roles.get(k, {})
                if not classes and not nearest:
                    continue  # roles alone: only numbers that have one
                role, tied = None, ()
                if nearest:
                    best = min(nearest.values())
                    at_best = sorted(r for r, d in nearest.items() if d == best)
                    if len(at_best) == 1:
                        role = at_best[0]
                    else:
                        tied = tuple(at_best)
                yield Candidate(
                    cat, "number", m.start, m.end, span, m, role, tied, mention_value(m)
                )


def _roles(
    comp: _Compiled,
    folded: str,
    span: tuple[int, int],
    mentions: list[NumberMention],
    words: _Sentence,
) -> dict[int, dict[str, int]]:
    """For each number (by index), the distance of the nearest term of each role it got."""
    matches: list[tuple[int, int, str]] = []
    for role, rx in comp.roles:
        matches.extend((m.start(), m.end(), role) for m in rx.finditer(folded, span[0], span[1]))
    # A term inside a longer term ("por" inside "sai por") is the longer one.
    matches.sort(key=lambda t: (t[0], -t[1]))
    kept: list[tuple[int, int, str]] = []
    for m in matches:
        if kept and m[0] >= kept[-1][0] and m[1] <= kept[-1][1]:
            continue
        kept.append(m)
    positions = [words.word_at(m.start) for m in mentions]
    out: dict[int, dict[str, int]] = {}
    for start, end, role in kept:
        first, last = words.word_at(start), words.word_at(end - 1)
        before = [(first - p, k) for k, p in enumerate(positions) if p < first]
        after = [(p - last, k) for k, p in enumerate(positions) if p > last]
        near_before = min(before) if before else None
        near_after = min(after) if after else None
        if near_after is not None and (near_before is None or near_after[0] <= near_before[0]):
            distance, k = near_after
        elif near_before is not None:
            distance, k = near_before
        else:
            continue
        if distance <= ROLE_WINDOW:
            got = out.setdefault(k, {})
            got[role] = min(distance, got.get(role, distance))
    return out


def _negated(folded: str, sentence_start: int, term_start: int) -> bool:
    # Only spaces between the negation and the term: in "No, reservei" nothing is negated.
    run = _WORDS_BEFORE.search(folded, sentence_start, term_start)
    return run is not None and any(w in _NEGATIONS for w in _WORD.findall(run.group()))


def _terms_alone(
    comp: _Compiled, text: str, folded: str, sentences: Sequence[tuple[int, int]]
) -> list[Candidate]:
    assert comp.terms is not None
    out: list[Candidate] = []
    for s, e in sentences:
        for m in comp.terms.finditer(folded, s, e):
            if _negated(folded, s, m.start()):
                continue
            out.append(
                Candidate(
                    comp.category,
                    "term",
                    m.start(),
                    m.end(),
                    (s, e),
                    value=text[m.start() : m.end()],
                )
            )
    return out


def _enclosing(sentences: Sequence[tuple[int, int]], offset: int) -> tuple[int, int]:
    i = bisect.bisect_right([s for s, _ in sentences], offset) - 1
    return sentences[max(i, 0)] if sentences else (offset, offset)
