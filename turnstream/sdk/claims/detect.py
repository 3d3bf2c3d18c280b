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
from turnstream.sdk.claims.qualifiers import THRESHOLD, Comparison, Qualified, qualifier

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
    #: "approximate" (a hedge: "about $40") or "threshold" (a condition: "free above $50")
    qualifier: str | None = None
    #: A condition's comparison ("lt", "le", "gt", "ge", "from") and the role its number
    #: would have without the condition ("now under $100": the sale price's).
    comparison: Comparison | None = None
    plain_role: str | None = None
    #: Where the hedge's or the condition's words start ("under" in "is under $100").
    qualified_at: int | None = None
    #: Where the role term right before the number starts ("sai por" in "sai por R$ 99,90"):
    #: a name's distance to the number counts to it (binding).
    introduced_at: int | None = None

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


class _WordIndex:
    """The words of one sentence, in order, each mention one word (for role distances)."""

    __slots__ = ("starts", "text")

    def __init__(self, text: str, span: tuple[int, int], spans: Sequence[tuple[int, int]]) -> None:
        tokens = list(spans)
        k, count = 0, len(spans)
        for w in _WORD.finditer(text, span[0], span[1]):
            start = w.start()
            while k < count and spans[k][1] <= start:
                k += 1
            if k < count and start < spans[k][1] and w.end() > spans[k][0]:
                continue  # inside a mention
            tokens.append(w.span())
        tokens.sort()
        self.starts = [start for start, _ in tokens]
        self.text = text

    def word_at(self, offset: int) -> int:
        """The index of the word that holds (or last started before) ``offset``."""
        return max(0, bisect.bisect_right(self.starts, offset) - 1)

    def other_number(self, index: int, own: Sequence[int]) -> bool:
        """Whether word ``index`` is a number that is none of the ``own`` words."""
        return (
            index < len(self.starts)
            and index not in own
            and self.text[self.starts[index]].isdigit()
        )


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
        starts = [s for s, _ in sentences]
        # The numbers of each sentence that holds any (most sentences hold none).
        by_sentence: dict[int, list[NumberMention]] = {}
        for m in mentions:
            if m.cls == "label":
                continue
            i = bisect.bisect_right(starts, m.start) - 1
            if i >= 0 and m.end <= sentences[i][1]:
                by_sentence.setdefault(i, []).append(m)
        # Each sentence's words, made only for sentences whose roles are looked at; the
        # mentions inside one found by bisection (a scan of all of them per sentence was
        # O(sentences x mentions)).
        spans = sorted((m.start, m.end) for m in mentions)
        mention_starts = [start for start, _ in spans]
        index: dict[int, _WordIndex] = {}

        def word_index(i: int) -> _WordIndex:
            if i not in index:
                s, e = sentences[i]
                lo = bisect.bisect_left(mention_starts, s)
                hi = bisect.bisect_left(mention_starts, e)
                index[i] = _WordIndex(text, (s, e), spans[lo:hi])
            return index[i]

        found: list[Candidate] = []
        for comp in self._compiled:
            cat = comp.category
            if not cat.applies_to(agent):
                continue
            if cat.detect.classes or comp.roles:
                found.extend(self._numbers(comp, text, folded, sentences, by_sentence, word_index))
            if comp.terms is not None and not cat.detect.classes:
                found.extend(_terms_alone(comp, text, folded, sentences, starts))
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
        text: str,
        folded: str,
        sentences: Sequence[tuple[int, int]],
        by_sentence: dict[int, list[NumberMention]],
        word_index: Callable[[int], _WordIndex],
    ) -> Iterator[Candidate]:
        cat = comp.category
        classes = set(cat.detect.classes)
        # with classes, terms only say which sentences count
        needed = comp.terms if cat.detect.classes else None
        for i, inside in sorted(by_sentence.items()):
            span = sentences[i]
            mentions = [m for m in inside if m.cls in classes] if classes else inside
            if not mentions:
                continue
            if needed is not None and needed.search(folded, span[0], span[1]) is None:
                continue
            how = [_qualified(text, span[0], m) for m in mentions]
            roles: dict[int, dict[str, int]] = {}
            introduced: dict[int, int] = {}
            if comp.roles:
                # role terms inside a hedge or a condition ("de" in "cerca de") name no role
                inside_qualifiers = [
                    (q.start, m.start) for q, m in zip(how, mentions, strict=True) if q
                ]
                roles = _roles(
                    comp, folded, span, mentions, word_index(i), inside_qualifiers, introduced
                )
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
                q = how[k]
                plain = role
                if q is not None and q.kind == THRESHOLD:  # its own role, never a price
                    role, tied = THRESHOLD, ()
                yield Candidate(
                    cat, "number", m.start, m.end, span, m, role, tied, mention_value(m),
                    q.kind if q else None, q.comparison if q else None, plain,
                    q.start if q else None, introduced.get(k),
                )  # fmt: skip


def _qualified(text: str, sentence_start: int, m: NumberMention) -> Qualified | None:
    """A number's hedge or condition; a range ("from $90 to $110") is never a bound."""
    q = qualifier(text, sentence_start, m.start, m.end, m.cls)
    if q is not None and q.kind == THRESHOLD and (m.is_range or isinstance(m.value, tuple)):
        return None
    return q


def _roles(
    comp: _Compiled,
    folded: str,
    span: tuple[int, int],
    mentions: list[NumberMention],
    words: _WordIndex,
    skip: Sequence[tuple[int, int]] = (),
    introduced: dict[int, int] | None = None,
) -> dict[int, dict[str, int]]:
    """For each number (by index), the distance of the nearest term of each role it got
    (terms inside the ``skip`` spans left out); ``introduced`` gets where the term that
    stands right before a number starts ("sai por R$ 99,90", "only $99.90")."""
    matches: list[tuple[int, int, str]] = []
    for role, rx in comp.roles:
        matches.extend(
            (m.start(), m.end(), role)
            for m in rx.finditer(folded, span[0], span[1])
            if not any(s <= m.start() < e for s, e in skip)
        )
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
        if near_after is not None and words.other_number(last + 1, positions):
            # the term introduces another number ("de 128 GB cuesta $799", "de 55 pulgadas")
            continue
        if near_after is not None and (near_before is None or near_after[0] <= near_before[0]):
            distance, k = near_after
        elif near_before is not None:
            distance, k = near_before
        else:
            continue
        if distance <= ROLE_WINDOW:
            if introduced is not None and near_after is not None and near_after == (1, k):
                introduced.setdefault(k, start)
            got = out.setdefault(k, {})
            got[role] = min(distance, got.get(role, distance))
    return out


def _negated(folded: str, sentence_start: int, term_start: int) -> bool:
    # Only spaces between the negation and the term: in "No, reservei" nothing is negated.
    run = _WORDS_BEFORE.search(folded, sentence_start, term_start)
    return run is not None and any(w in _NEGATIONS for w in _WORD.findall(run.group()))


def _terms_alone(
    comp: _Compiled,
    text: str,
    folded: str,
    sentences: Sequence[tuple[int, int]],
    starts: list[int],
) -> list[Candidate]:
    """Each occurrence of a term of the trade inside one sentence, not negated.

    One scan of the whole output (a scan per sentence cost ~30 calls per category); a match
    that runs over a sentence's end is looked for again within the sentences it touches.
    """
    assert comp.terms is not None
    out: list[Candidate | None] = []
    redo: set[int] = set()
    for m in comp.terms.finditer(folded):
        i = bisect.bisect_right(starts, m.start()) - 1
        if i < 0 or m.start() >= sentences[i][1]:
            continue  # between sentences: only spaces
        s, e = sentences[i]
        if m.end() > e:
            redo.update(range(i, bisect.bisect_left(starts, m.end()) + 1))
            continue
        out.append(_term(comp, text, folded, m, (s, e)))
    for i in sorted(redo):
        if i < len(sentences):
            s, e = sentences[i]
            out.extend(
                _term(comp, text, folded, m, (s, e)) for m in comp.terms.finditer(folded, s, e)
            )
    seen: set[tuple[int, int]] = set()
    kept: list[Candidate] = []
    for cand in sorted((c for c in out if c is not None), key=lambda c: (c.start, c.end)):
        if (cand.start, cand.end) not in seen:
            seen.add((cand.start, cand.end))
            kept.append(cand)
    return kept


def _term(
    comp: _Compiled, text: str, folded: str, m: re.Match[str], sentence: tuple[int, int]
) -> Candidate | None:
    if _negated(folded, sentence[0], m.start()):
        return None
    return Candidate(
        comp.category, "term", m.start(), m.end(), sentence, value=text[m.start() : m.end()]
    )


def _enclosing(sentences: Sequence[tuple[int, int]], offset: int) -> tuple[int, int]:
    i = bisect.bisect_right([s for s, _ in sentences], offset) - 1
    return sentences[max(i, 0)] if sentences else (offset, offset)
