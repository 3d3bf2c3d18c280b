"""Values by the value they name: the one identity of a field's value, for the block and
derivation alike.

The person says ``preto``, an object shows ``Black``, another `` black ``, a third
``negro``: one value. :meth:`ValueIds.of` gives the value a field's value names. The block
compares values only through it (hard entries and avoids against what objects showed, a
stated entry against an inferred one, two entries of a conflict, two statements of one
constraint), and derivation counts a person's evidence by it (one affinity for ``Black``
and ``black``, :mod:`turnstream.core.derivation.spellings`):

* a decimal number written as text, as the number it reads, plain
  (:func:`~turnstream.core.digits.read_decimal`: ``40.0``, ``40,0`` -> ``40``; ``40,5``
  -> ``40.5``);
* else the value the types document declares for the field whose name or label, in any
  language, it is (``lana``, ``Wool`` and ``lã`` -> ``wool``; ``APPLE`` -> ``apple``);
* else, when it is one of the built-in words of common retail values
  (:func:`~turnstream.core.value_words.known_entry`), that value (``negro`` -> ``black``);
* else the value itself, :func:`~turnstream.core.folding.normal` (``M``, `` m `` -> ``m``).

Words are matched without case, accents, ``_``/``-`` or extra white space. Numbers and
flags stay as they are, and so do objects' refs and identifiers (a SKU). What the block
shows keeps the value as it came, and so does what derivation infers (a spelling it saw).
Pure; :func:`value_ids` builds a types document's once.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from turnstream.core.digits import plain_number, read_decimal
from turnstream.core.folding import normal
from turnstream.core.value_words import known_entry
from turnstream.models.object_types import LANGUAGES, ObjectTypes

__all__ = ["Scalar", "ValueIds", "as_number", "canonical", "value_ids"]

#: A value as it travels on the wire.
Scalar = str | int | float | bool


def as_number(value: Scalar) -> float | None:
    """``value`` as a finite number when it reads as one (``"700"``, 700), else ``None``
    (a flag, a word, NaN)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    else:
        try:
            number = float(value)
        except ValueError:
            return None
    return number if math.isfinite(number) else None


def canonical(value: Scalar) -> str:
    """The value as a key: a number as a float, a boolean as in JSON, a string as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    number = as_number(value)
    # + 0.0 makes -0.0 the 0.0 it equals (a hard ``not_in [0]`` refuses it too).
    return repr(number + 0.0) if number is not None else str(value)


@dataclass(frozen=True)
class ValueIds:
    """``words``: ``type.field`` -> each :func:`normal` word of a declared value (its
    name and its labels) -> the value."""

    words: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    #: Fields whose values name objects (identifiers): compared exactly.
    exact: frozenset[str] = frozenset()

    def of(self, attr: str, value: Scalar) -> Scalar:
        """The value ``value`` of ``attr`` names (see the module); an object's ref
        (``type.ref``) and an identifier's value as they are."""
        if not isinstance(value, str) or attr in self.exact or attr.endswith(".ref"):
            return value
        number = read_decimal(value.strip())
        if number is not None:
            return plain_number(number)
        declared = self.words.get(attr, {})
        key = normal(value)
        if key in declared:
            return declared[key]
        entry = known_entry(value)
        if entry is None:
            return key
        said = [normal(entry[language]) for language in ("en", *LANGUAGES)]
        return next((declared[w] for w in said if w in declared), said[0])

    def all(self, attr: str, values: Iterable[Scalar]) -> tuple[Scalar, ...]:
        """Each of ``values`` by :meth:`of`."""
        return tuple(self.of(attr, v) for v in values)

    def key(self, attr: str, value: Scalar) -> str:
        """:meth:`of` as a key (:func:`canonical`: ``40`` and ``"40.0"`` alike)."""
        return canonical(self.of(attr, value))


#: Types documents whose :class:`ValueIds` are kept (the spaces a process serves at once).
_KEPT = 64
_built: OrderedDict[int, tuple[ObjectTypes, ValueIds]] = OrderedDict()
_lock = threading.Lock()


def value_ids(types: ObjectTypes | None) -> ValueIds:
    """The values ``types`` declares, by every word that names one: its name first, then
    its labels in every language (a label two values share names neither).

    Built once per types document and kept (the latest :data:`_KEPT` documents, by the
    object: a document is frozen, and loaded once per space), so a block, a tool call or
    a derivation does not build it again."""
    if types is None:
        return _NONE
    with _lock:
        kept = _built.get(id(types))
        if kept is not None and kept[0] is types:
            _built.move_to_end(id(types))
            return kept[1]
    ids = _build(types)
    with _lock:
        _built[id(types)] = (types, ids)  # the document held: its id is not reused
        _built.move_to_end(id(types))
        while len(_built) > _KEPT:
            _built.popitem(last=False)
    return ids


_NONE = ValueIds()


def _build(types: ObjectTypes) -> ValueIds:
    words: dict[str, dict[str, str]] = {}
    exact: set[str] = set()
    for type_name, declared in types.types.items():
        for field_name, spec in declared.fields.items():
            if spec.role == "identifier":
                exact.add(f"{type_name}.{field_name}")
            if not spec.values:
                continue
            labelled: dict[str, set[str]] = {}
            for value, labels in spec.values.items():
                for language in LANGUAGES:
                    labelled.setdefault(normal(str(getattr(labels, language))), set()).add(value)
            found = {word: next(iter(vs)) for word, vs in labelled.items() if len(vs) == 1}
            found.update({normal(value): value for value in spec.values})
            words[f"{type_name}.{field_name}"] = found
    return ValueIds(words, frozenset(exact))
