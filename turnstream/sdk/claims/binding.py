"""Binding: which object of the evidence a number's sentence names.

A number is compared with the values of the object its sentence names, when it names one:
"The City Flex is now $129.99." is about the City Flex, and the Aero Runner's $129.99 does
not make it right. An object is named by its names: the string values of its fields that
identify it (``identifies``, set from the object types' ``identifier`` role, or a field
called ``name``, ``title``, ``product_name``, ``display_name``, ``sku``), and the last part
of its id (``item_variant:acme:tn-002`` -> ``tn-002``) when it holds a letter or three
characters.

A name's words (folded: lower case, no accents; stop words and one-letter words left out)
that no other object's names share are its distinctive words; a sentence names an object
when it holds one of them. Several objects named: the number goes to the one whose shared
word stands nearest to it (fewer words between), then to the one with more shared words,
then to the one written before it. When the sentence names as many objects as it holds
numbers of the number's class, they also pair in order (:meth:`ObjectNames.paired`); the
checker holds a number the two disagree on to both (``verdicts``). No object named in its
sentence: the object the
nearest earlier sentence of its paragraph names, when that sentence names one alone ("Take
the City Flex. It is now $129.99." is about the City Flex); else (several named, none, or
a new paragraph) the number is compared by its role alone, as before.

A run of capitalised words the evidence does not hold ("The Zephyr Trail") names an object
the turn knows nothing of (``unlisted``): its numbers have no evidence. Words several
objects' names share (variants: "Aero Runner 42" and "44") name those objects together
when no object is named alone, narrowed by the words of their other values ("in white"):
:meth:`ObjectNames.group`. Names with numbers and variants that differ by one ("iPhone 15
Pro" and "Pro Max", 128 and 256 GB) are also read as phrases (``phrases``), and a word after
a number and a comma is the next item's (two words farther).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from turnstream.sdk.claims.evidence import ProvenancedValue
from turnstream.sdk.claims.normalize import fold
from turnstream.sdk.claims.phrases import Phrases, one_or_all
from turnstream.sdk.claims.unlisted import Unlisted, unlisted_runs

__all__ = ["NAME_FIELDS", "Named", "ObjectNames", "names_of"]

#: What a sentence names: an object of the evidence (its id), one it does not hold, or the
#: variants a shared name leaves (two or more ids).
Named = str | Unlisted | frozenset[str]

#: Fields whose string value names its object even without a types document.
NAME_FIELDS = frozenset(
    {"name", "title", "product", "product_name", "product_title", "item_name", "display_name",
     "model", "sku", "identifier"}
)  # fmt: skip
_WORD = re.compile(r"[^\W_]+")
#: A blank line: a new paragraph, where an earlier sentence's object no longer carries.
_PARAGRAPH = re.compile(r"\n[^\S\n]*\n")
#: What ends a list's item: a word after it, from the number on, is the next item's.
_LIST_BREAK = re.compile(r"[,;]")
# Words that name nothing on their own (pt, en, es articles, prepositions, conjunctions).
_STOP = frozenset(
    [
        "a",
        "o",
        "as",
        "os",
        "um",
        "uma",
        "de",
        "da",
        "do",
        "das",
        "dos",
        "e",
        "em",
        "no",
        "na",
        "para",
        "com",
        "por",
        "the",
        "an",
        "of",
        "and",
        "for",
        "with",
        "in",
        "on",
        "to",
        "el",
        "la",
        "los",
        "las",
        "un",
        "una",
        "del",
        "y",
        "con",
        "en",
        "al",
    ]
)


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(fold(text)) if len(w) > 1 and w not in _STOP]


def _id_tail(object_id: str) -> str | None:
    tail = object_id.rsplit(":", 1)[-1]
    if any(c.isalpha() for c in tail) or len(tail) >= 3:
        return tail
    return None


def _names(v: ProvenancedValue) -> bool:
    """Whether the value is one of its object's names."""
    return v.item.identifies or v.item.field in NAME_FIELDS


def names_of(values: Iterable[ProvenancedValue]) -> dict[str, set[str]]:
    """Each object of the evidence and the strings that name it."""
    names: dict[str, set[str]] = {}
    for v in values:
        if v.object is None:
            continue
        got = names.setdefault(v.object, set())
        if isinstance(v.item.value, str) and _names(v):
            got.add(v.item.value)
    for obj, got in names.items():
        tail = _id_tail(obj)
        if tail is not None:
            got.add(tail)
    return names


@dataclass(frozen=True, slots=True)
class ObjectNames:
    """The evidence's objects by their distinctive words (built once per check)."""

    #: folded word -> the objects whose names hold it, only words of a single object
    words: dict[str, str]
    #: every folded word of the evidence's strings (a capitalised word outside it may name
    #: an object the evidence does not hold: ``unlisted``)
    vocabulary: frozenset[str] = frozenset()
    #: folded word -> the objects whose names share it (two or more: variants)
    shared: dict[str, frozenset[str]] = field(default_factory=dict)
    #: folded word -> the objects a value of another field than a name holds it in ("white"
    #: of a colour): it narrows a shared name ("the City Flex in white")
    traits: dict[str, frozenset[str]] = field(default_factory=dict)
    #: how many objects have a name
    named: int = 0
    #: the names as word sequences and the variants' measures (``phrases``)
    phrases: Phrases | None = None
    #: (text, sentence start, end) -> the objects the sentence names: each sentence of an
    #: output folded once, however many later numbers look back at it.
    _named: dict[tuple[str, int, int], frozenset[Named]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: (text, sentence start, end) -> what :meth:`_named_before` answered for it.
    _before: dict[tuple[str, int, int], Named | None] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: (text, sentence start, end) -> the sentence's words that are a variant's measure.
    _measured: dict[tuple[str, int, int], frozenset[int]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: (text, sentence start, end) -> the sentence's words and what each names.
    _owners: dict[tuple[str, int, int], tuple[list[re.Match[str]], list[Named | None]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, values: Sequence[ProvenancedValue]) -> ObjectNames:
        """The distinctive words of every object of ``values``."""
        owners: dict[str, set[str]] = {}
        named = names_of(values)
        for obj, names in named.items():
            for name in names:
                for w in _words(name):
                    owners.setdefault(w, set()).add(obj)
        vocabulary = {
            w
            for v in values
            if isinstance(v.item.value, str)
            for w in _WORD.findall(fold(v.item.value))
        }
        vocabulary.update(owners)
        traits: dict[str, set[str]] = {}
        for v in values:
            if v.object is not None and isinstance(v.item.value, str) and not _names(v):
                for w in _words(v.item.value):
                    traits.setdefault(w, set()).add(v.object)
        return cls(
            {w: next(iter(objs)) for w, objs in owners.items() if len(objs) == 1},
            frozenset(vocabulary),
            {w: frozenset(objs) for w, objs in owners.items() if len(objs) > 1},
            {w: frozenset(objs) for w, objs in traits.items()},
            len({obj for objs in owners.values() for obj in objs}),
            Phrases.of(named, values),
        )

    @property
    def empty(self) -> bool:
        """Whether the evidence names no object at all."""
        return not self.words and not self.shared

    def group(self, text: str, s: int, e: int) -> Named | None:
        """The variants ``text[s:e]`` names by a name they share and no other object holds
        ("Aero Runner" of the Aero Runner 42 and 44), narrowed by their other values'
        words ("the City Flex in white"); one left is that object; None when it names no
        shared name, or one every object shares that no such word narrows."""
        tokens, _ = self.owners(text, s, e)
        words = {t.group() for t in tokens}
        group: frozenset[str] | None = None
        for w in words & self.shared.keys():
            group = self.shared[w] if group is None else group & self.shared[w]
        if not group:
            return None
        every = len(group) == self.named
        for w in words & self.traits.keys():
            if group & self.traits[w]:
                group &= self.traits[w]
        if every and len(group) == self.named:
            return None  # a word every object shares ("Nimbus") names none
        return one_or_all(group)

    def owners(self, text: str, s: int, e: int) -> tuple[list[re.Match[str]], list[Named | None]]:
        """The words of ``text[s:e]`` (a sentence; matches on its folded form, offsets from
        ``s``) and what each names: an object's distinctive word names it, a run of words
        naming an object the evidence does not hold names that (``unlisted``)."""
        key = (text, s, e)
        got = self._owners.get(key)
        if got is None:
            original = text[s:e]
            tokens = list(_WORD.finditer(fold(original)))
            owners: list[Named | None] = [self.words.get(t.group()) for t in tokens]
            if self.phrases is not None:
                measured = self.phrases.read(original, tokens, owners)
                self._measured[key] = measured
                self._narrow(tokens, owners)
            for first, end, unlisted in unlisted_runs(original, tokens, owners, self.vocabulary):
                owners[first:end] = [unlisted] * (end - first)
            got = self._owners[key] = (tokens, owners)
        return got

    def _narrow(self, tokens: Sequence[re.Match[str]], owners: list[Named | None]) -> None:
        """Narrow the variants a name written whole names by the sentence's words of their
        other values ("the City Flex in white"), as :meth:`group` does."""
        traits = {t.group() for t in tokens} & self.traits.keys()
        if not traits:
            return
        for k, obj in enumerate(owners):
            if isinstance(obj, frozenset):
                group = obj
                for w in traits:
                    if group & self.traits[w]:
                        group &= self.traits[w]
                if group != obj:
                    owners[k] = one_or_all(group)

    def bind(
        self,
        text: str,
        sentence: tuple[int, int],
        start: int,
        end: int,
        sentences: Sequence[tuple[int, int]] = (),
    ) -> Named | None:
        """The object the sentence names for the number at ``start:end`` (the nearest
        named); when it names none, the one object the nearest earlier naming sentence of
        ``sentences`` (the output's) in its paragraph names; else None."""
        if self.empty:
            return None  # the evidence names nothing: nothing is known to be missing either
        named = self._in_sentence(text, sentence, start, end)
        if named is None:
            named = self.group(text, *sentence)
        if named is None and sentences:
            return self._named_before(text, sentence, sentences)
        return named

    def paired(
        self, text: str, sentence: tuple[int, int], start: int, numbers: Sequence[tuple[int, int]]
    ) -> Named | None:
        """When the sentence names as many objects as it holds ``numbers`` (the spans of
        its numbers of one class, in order, the one at ``start`` among them; two or more),
        the object named in the place the number has among them ("The City Flex is $99.90,
        the Aero Runner $129.99"); else None."""
        if len(numbers) < 2 or self.empty:
            return None
        at = next((i for i, (s, e) in enumerate(numbers) if s <= start < e), None)
        if at is None:
            return None
        base = sentence[0]
        order: list[Named] = []  # the objects in the order they are first named
        for m, obj in zip(*self.owners(text, *sentence), strict=True):
            where = base + m.start()
            if obj is None or obj in order or any(s <= where < e for s, e in numbers):
                continue
            order.append(obj)
        return order[at] if len(order) == len(numbers) else None

    def _named_before(
        self, text: str, sentence: tuple[int, int], sentences: Sequence[tuple[int, int]]
    ) -> Named | None:
        """The object named by the nearest earlier sentence that names any (by a word with
        a letter), in the same paragraph, when it names one alone (several: which one is
        meant is not known)."""
        # Each sentence's answer is kept: a later one that names nothing takes it from the
        # sentence before instead of walking back again (40 such numbers: 40 steps, not
        # 800). A loop, not recursion: a long document has thousands of sentences.
        walked: list[tuple[str, int, int]] = []
        answer: Named | None = None
        current = sentence
        k = bisect.bisect_left(sentences, sentence) - 1
        while True:
            key = (text, *current)
            if key in self._before:
                answer = self._before[key]
                break
            walked.append(key)
            if k < 0 or _PARAGRAPH.search(text, sentences[k][1], current[0]):
                break
            objects = self._objects_in(text, *sentences[k])
            if objects:
                answer = next(iter(objects)) if len(objects) == 1 else None
                break
            current, k = sentences[k], k - 1
        for key in walked:
            self._before[key] = answer
        return answer

    def _objects_in(self, text: str, s: int, e: int) -> frozenset[Named]:
        """The objects ``text[s:e]`` names by a word with a letter (a number elsewhere, a
        postcode's "100", names no object for another sentence's number)."""
        key = (text, s, e)
        objects = self._named.get(key)
        if objects is None:
            tokens, owners = self.owners(text, s, e)
            found = {
                o
                for t, o in zip(tokens, owners, strict=True)
                if o is not None and not t.group().isdigit()
            }
            if not found and (group := self.group(text, s, e)) is not None:
                found.add(group)
            objects = self._named[key] = frozenset(found)
        return objects

    def _in_sentence(
        self, text: str, sentence: tuple[int, int], start: int, end: int
    ) -> Named | None:
        """The object the sentence itself names for the number at ``start:end``, or None."""
        found: dict[Named, list[int]] = {}  # object -> word distances from the number
        before: dict[Named, bool] = {}
        base = sentence[0]  # fold only the sentence (same length: offsets shift by base)
        tokens, owners = self.owners(text, *sentence)
        start, end = start - base, end - base
        at = next((i for i, m in enumerate(tokens) if m.end() > start), len(tokens))
        after = next((i for i, m in enumerate(tokens) if m.start() >= end), len(tokens))
        measured = self._measured.get((text, *sentence), frozenset())
        own = owners[at:after]
        if (
            len(own) >= 2
            and own[0] is not None
            and own.count(own[0]) == len(own)
            and tokens[after - 1].group().isalpha()
        ):
            # a number written as a name's own measure ("o de 750 mg" of a "Paracetamol 750
            # mg") is about that name, as a variant's measure is
            return own[0]
        for i, (m, obj) in enumerate(zip(tokens, owners, strict=True)):
            if obj is not None and i in measured and start <= m.start() < end:
                return obj  # a variant's measure ("with 256 GB") is about that variant
            if obj is None or start <= m.start() < end:
                continue
            distance = at - i if i < at else i - after + 1
            if i >= after and _LIST_BREAK.search(text, base + end, base + m.start()):
                distance += 2  # "128 GB for $799, 256 GB for $899": the next item's words
            found.setdefault(obj, []).append(distance)
            before[obj] = before.get(obj, False) or i < at
        if not found:
            return None
        return min(found, key=lambda o: (min(found[o]), -len(found[o]), not before[o], str(o)))
