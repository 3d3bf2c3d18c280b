"""Names read as phrases: which object a run of a sentence's words names when names hold
numbers and variants differ by one ("iPhone 15", "iPhone 15 Pro", "iPhone 15 Pro Max";
"Galaxy S24" and "Galaxy S24 Ultra"; a "Crystal UHD TV" in 55 and in 65 inches).

A name's distinctive words (``binding``) cannot tell these apart: every word of "iPhone 15
Pro" is shared with another name, so "The iPhone 15 Pro is $999." named no object alone,
and "The iPhone 15 is $999." took the Pro's price. Here a sentence's words are matched with
every name's words in order (a name, or two or more of its words from its middle or end
with a letter among them: "RTX 4070" of "GeForce RTX 4070"):

- **The longest name written whole** names its object (the variants that share it, when
  several do): "iPhone 15 Pro Max" is not the "iPhone 15 Pro".
- **A model the evidence does not hold**: a name followed by a model's word no longer name
  goes on with ("Galaxy S24 FE", "RTX 4070 Ti", "PS5 Pro") or by "+" ("Galaxy S24+"), and a
  name's words that go on with another model number than the name's ("iPhone 16" of an
  "iPhone 15", "Gen 12" of a "Gen 11", "WH-1000XM4" of a "WH-1000XM5", "AirPods Pro 3" of
  "AirPods Pro 2"; digits alone only of the same length, so "Aero Runner 3 left" is no
  model of an "Aero Runner 42"), and a name's words that go on with another measure than
  the name's ("Paracetamol 1 g" of a "Paracetamol 500 mg", "Arroz Integral 2 kg"), name an
  :class:`Unlisted` object.
- **A variant's measure**: a number with a unit ("128 GB", "55 inch", "16GB", "500 mg")
  equal to a numeric value of some variants names those variants ("The iPhone 15 with 128
  GB").

A number followed by a unit is never a model number ("the Galaxy 128GB"); a measure is the
same written fused or apart ("Paracetamol 500mg" is the "Paracetamol 500 mg").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from turnstream.sdk.claims.evidence import ProvenancedValue
from turnstream.sdk.claims.normalize import fold
from turnstream.sdk.claims.unlisted import MODEL_WORDS, Unlisted

__all__ = ["Phrases", "one_or_all"]

_WORD = re.compile(r"[^\W_]+")
#: Between two words of one name: spaces or a hyphen ("WH-1000XM5", "Wi-Fi").
_JOIN = re.compile(r"[^\S\n]+|[^\S\n]*-[^\S\n]*")
#: Units written after a measure (folded) and the unit they stand for.
_UNITS = {
    "gb": "gb", "tb": "tb", "mb": "mb", "hz": "hz", "mah": "mah", "mp": "mp", "w": "w",
    "in": "in", "inch": "in", "inches": "in", "polegada": "in", "polegadas": "in", "pol": "in",
    "pulgada": "in", "pulgadas": "in",
    "mg": "mg", "mcg": "mcg", "g": "g", "kg": "kg", "ml": "ml", "l": "l", "oz": "oz", "lb": "lb",
}  # fmt: skip
_FUSED = re.compile(r"(\d+)([a-z]+)")
#: A field named for its unit, when its value carries none ("screen_inches", "storage_gb").
_FIELD_UNIT = re.compile(r"_(gb|tb|mb|hz|mah|inches|inch|in)$")


def one_or_all(objs: AbstractSet[str]) -> str | frozenset[str]:
    """What a set of objects names: the object when it is one, else them all."""
    return next(iter(objs)) if len(objs) == 1 else frozenset(objs)


def _joined(original: str, a: re.Match[str], b: re.Match[str]) -> bool:
    return _JOIN.fullmatch(original, a.end(), b.start()) is not None


def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


def _model(original: str, token: re.Match[str]) -> bool:
    """A model number ("16", "S25", "1000XM4") or a model's word written with a capital
    ("Pro", "FE", "Ti": "o iPhone 15 se destaca", "plus tax" are no models)."""
    word = token.group()
    if _has_digit(word):
        return True
    return word in MODEL_WORDS and not original[token.start() : token.end()].islower()


def _measure_key(number: object, unit: str | None, field: str) -> str | None:
    """A numeric value's measure as written with its unit ("128gb"), or None."""
    if isinstance(number, bool) or not isinstance(number, int | float) or number != int(number):
        return None
    found = _UNITS.get(fold(unit)) if unit else None
    if found is None and (m := _FIELD_UNIT.search(field)) is not None:
        found = _UNITS.get(m.group(1))
    return None if found is None else f"{int(number)}{found}"


@dataclass(frozen=True, slots=True)
class Phrases:
    """The evidence's names as word sequences, and its variants' measures."""

    #: folded word -> (name's words, the word's place in them, the objects so named)
    index: dict[str, list[tuple[tuple[str, ...], int, frozenset[str]]]]
    #: measure ("128gb", "55in") -> the objects holding it
    measures: dict[str, frozenset[str]]

    @classmethod
    def of(cls, names: dict[str, set[str]], values: Iterable[ProvenancedValue]) -> Phrases:
        by_name: dict[tuple[str, ...], set[str]] = {}
        for obj, strings in names.items():
            for name in strings:
                words = tuple(_WORD.findall(fold(name)))
                if words and any(w.isalpha() for w in words):
                    by_name.setdefault(words, set()).add(obj)
        index: dict[str, list[tuple[tuple[str, ...], int, frozenset[str]]]] = {}
        for words, objs in by_name.items():
            for at, word in enumerate(words):
                index.setdefault(word, []).append((words, at, frozenset(objs)))
        measures: dict[str, set[str]] = {}
        for v in values:
            key = _measure_key(v.item.value, v.item.unit, v.item.field)
            if v.object is not None and key is not None:
                measures.setdefault(key, set()).add(v.object)
        return cls(index, {k: frozenset(o) for k, o in measures.items()})

    def measure(self, original: str, tokens: Sequence[re.Match[str]], k: int) -> int:
        """How many words the measure at token ``k`` spans ("128 GB": 2, "16gb": 1), 0 when
        it is none."""
        word = tokens[k].group()
        fused = _FUSED.fullmatch(word)
        if fused is not None:
            return 1 if fused.group(2) in _UNITS else 0
        if not word.isdigit():
            return 0
        after = original[tokens[k].end() : tokens[k].end() + 2].lstrip(" -")
        if after[:1] in ('"', "\u201d", "\u2033"):
            return 1
        if k + 1 < len(tokens) and _joined(original, tokens[k], tokens[k + 1]):
            return 2 if tokens[k + 1].group() in _UNITS else 0
        return 0

    def _measure_objects(
        self, tokens: Sequence[re.Match[str]], k: int, span: int
    ) -> frozenset[str] | None:
        return self.measures.get(_measure_at(tokens, k, span))

    def read(
        self, original: str, tokens: Sequence[re.Match[str]], owners: list[Any]
    ) -> frozenset[int]:
        """Set in ``owners`` (one per token of the folded ``original``) the objects the
        sentence's names written whole name, the unlisted models, and the measures that
        narrow a name several variants share; the measures' tokens."""
        n = len(tokens)
        words = [t.group() for t in tokens]
        groups: list[tuple[int, int, frozenset[str]]] = []
        i = 0
        while i < n:
            got = self._at(original, tokens, words, i)
            if got is None:
                i += 1
                continue
            span, named = got
            owners[i : i + span] = [named] * span
            if isinstance(named, frozenset):
                groups.append((i, i + span, named))
            i += span
        if groups and self.measures:
            return self._narrow(original, tokens, owners, groups)
        return frozenset()

    def _at(
        self, original: str, tokens: Sequence[re.Match[str]], words: list[str], i: int
    ) -> tuple[int, object] | None:
        """What the words from ``i`` name: (how many words, the object, the variants or an
        unlisted model), or None."""
        candidates = self.index.get(words[i])
        if not candidates:
            return None
        n = len(words)
        complete: dict[int, set[str]] = {}
        partial: dict[int, set[tuple[str, ...]]] = {}  # agreed words -> the names' words left
        for name, at, objs in candidates:
            length, got = 1, 1  # the sentence's words and the name's agreed so far
            while at + got < len(name) and i + length < n:
                step = _agree(original, tokens, words, i + length, name, at + got)
                if step is None:
                    break
                length, got = length + step[0], got + step[1]
            whole = at == 0 or (got >= 2 and any(w.isalpha() for w in name[at : at + got]))
            if at + got == len(name):
                if whole:  # one word from a name's middle or end ("15", "Pro") names nothing
                    complete.setdefault(length, set()).update(objs)
            elif whole or (words[i].isalpha() and words[i] not in MODEL_WORDS):
                # "RTX 4080" of a "GeForce RTX 4070": another model of the name's words
                partial.setdefault(length, set()).add(name[at + got :])
        longest = max(complete, default=0)
        further = max(partial, default=0)
        if longest and longest >= further:
            return self._after(original, tokens, words, i, longest, complete[longest], partial)
        if further and (
            d := self._diverges(original, tokens, words, i + further, partial[further])
        ):
            end = self._model_end(original, tokens, words, i + further + d)
            return end - i, Unlisted(_span(original, tokens, i, end))
        if longest:
            return self._after(original, tokens, words, i, longest, complete[longest], partial)
        return None

    def _after(
        self,
        original: str,
        tokens: Sequence[re.Match[str]],
        words: list[str],
        i: int,
        length: int,
        objs: set[str],
        partial: dict[int, set[tuple[str, ...]]],
    ) -> tuple[int, object]:
        """A name written whole: its object(s), or an unlisted model when a model's word
        (or "+") follows that no longer name goes on with."""
        k = i + length
        end = tokens[k - 1].end()
        if original[end : end + 1] == "+":
            return length, Unlisted(original[tokens[i].start() : end + 1])
        if (
            k < len(words)
            and not _has_digit(words[k])
            and _model(original, tokens[k])
            and words[k] not in {rest[0] for rest in partial.get(length, ())}
            and _joined(original, tokens[k - 1], tokens[k])
        ):
            end = self._model_end(original, tokens, words, k + 1)
            return end - i, Unlisted(_span(original, tokens, i, end))
        return length, one_or_all(objs)

    def _model_end(
        self, original: str, tokens: Sequence[re.Match[str]], words: list[str], k: int
    ) -> int:
        """Where an unlisted model's name ends from token ``k``: its model's words and
        numbers go on with it ("Galaxy S25 Ultra", "iPhone 16 Pro Max")."""
        while (
            k < len(words)
            and _model(original, tokens[k])
            and not self.measure(original, tokens, k)
            and _joined(original, tokens[k - 1], tokens[k])
        ):
            k += 1
        return k

    def _diverges(
        self,
        original: str,
        tokens: Sequence[re.Match[str]],
        words: list[str],
        k: int,
        rests: set[tuple[str, ...]],
    ) -> int:
        """How many words from ``k`` are another model number (or model word) than every
        name that agreed so far goes on with (``rests``: their words left), or another
        measure than the one each goes on with ("Paracetamol 1 g" of a "Paracetamol 500
        mg"); 0 when they are none."""
        if k >= len(words) or not _joined(original, tokens[k - 1], tokens[k]):
            return 0
        span = self.measure(original, tokens, k)
        if span:
            theirs = {_rest_measure(rest) for rest in rests}
            said = _measure_at(tokens, k, span)
            return span if None not in theirs and said not in theirs else 0
        if not _model(original, tokens[k]):
            return 0
        nexts = {rest[0] for rest in rests}
        if not all(_has_digit(w) or w in MODEL_WORDS for w in nexts):
            return 0
        word = words[k]
        if word.isdigit():
            return int(all(w.isdigit() and len(w) == len(word) for w in nexts))
        return 1

    def _narrow(
        self,
        original: str,
        tokens: Sequence[re.Match[str]],
        owners: list[Any],
        groups: list[tuple[int, int, frozenset[str]]],
    ) -> frozenset[int]:
        """A measure of some of a named group's variants names them ("128 GB" of the
        "iPhone 15" 128 and 256 GB); when the sentence's measures all leave the same
        variants, the group's name names them too."""
        left: set[frozenset[str]] = set()
        measured: set[int] = set()
        k = 0
        while k < len(tokens):
            span = self.measure(original, tokens, k)
            objs = self._measure_objects(tokens, k, span) if span else None
            if objs:
                near = min(groups, key=lambda g: min(abs(g[0] - k), abs(g[1] - 1 - k)))[2]
                narrowed = near & objs
                if narrowed and narrowed != near:
                    owners[k : k + span] = [one_or_all(narrowed)] * span
                    measured.update(range(k, k + span))
                    left.add(narrowed)
            k += max(span, 1)
        if len(left) == 1:
            narrowed = next(iter(left))
            one = one_or_all(narrowed)
            for s, e, group in groups:
                if narrowed < group:
                    owners[s:e] = [one] * (e - s)
        return frozenset(measured)


def _measure_at(tokens: Sequence[re.Match[str]], k: int, span: int) -> str:
    """The measure at token ``k`` (``span`` words, from :meth:`Phrases.measure`) as a key
    ("128gb", "55in", "500mg")."""
    words = [t.group() for t in tokens[k : k + span]]
    fused = _FUSED.fullmatch(words[0])
    if fused is not None:
        return f"{fused.group(1)}{_UNITS[fused.group(2)]}"
    unit = _UNITS[words[1]] if span == 2 else "in"
    return f"{words[0]}{unit}"


def _rest_measure(rest: tuple[str, ...]) -> str | None:
    """The measure a name's words left begin with ("500 mg", "500mg": "500mg"), or None."""
    fused = _FUSED.fullmatch(rest[0])
    if fused is not None:
        unit = _UNITS.get(fused.group(2))
        return None if unit is None else f"{fused.group(1)}{unit}"
    if rest[0].isdigit() and len(rest) > 1 and rest[1] in _UNITS:
        return f"{rest[0]}{_UNITS[rest[1]]}"
    return None


def _agree(
    original: str,
    tokens: Sequence[re.Match[str]],
    words: list[str],
    k: int,
    name: tuple[str, ...],
    p: int,
) -> tuple[int, int] | None:
    """Whether the sentence's word ``k`` goes on with the name's word ``p``: (the sentence's
    words, the name's words) they take, a measure written fused or apart either way ("500mg"
    of "500 mg", "500 mg" of "500mg"); None when it does not."""
    if not _joined(original, tokens[k - 1], tokens[k]):
        return None
    if words[k] == name[p]:
        return 1, 1
    if (
        p + 1 < len(name)
        and name[p].isdigit()
        and name[p + 1] in _UNITS
        and words[k] == name[p] + name[p + 1]
    ):
        return 1, 2
    if (
        k + 1 < len(words)
        and words[k].isdigit()
        and words[k + 1] in _UNITS
        and name[p] == words[k] + words[k + 1]
        and _joined(original, tokens[k], tokens[k + 1])
    ):
        return 2, 1
    return None


def _span(original: str, tokens: Sequence[re.Match[str]], s: int, e: int) -> str:
    return original[tokens[s].start() : tokens[e - 1].end()]
