"""Values as the block compares them: each field's value by the value it names.

The person says ``preto``, an object shows ``Black``, another `` black ``, a third
``negro``: one value. :meth:`ValueIds.of` gives the value a field's value names, and the
block compares values only through it (hard entries and avoids against what objects
showed, a stated entry against an inferred one, two entries of a conflict, two
statements of one constraint):

* a decimal number written as text, as the number it reads (``40.0``, ``40,5`` -> ``40.5``);
* else the value the types document declares for the field whose name or label, in any
  language, it is (``lana``, ``Wool`` and ``lã`` -> ``wool``; ``APPLE`` -> ``apple``);
* else, when it is one of the built-in words of common retail values
  (:func:`~turnstream.core.constraints.text.known_entry`), that value (``negro`` ->
  ``black``);
* else the value itself, :func:`~turnstream.core.constraints.folding.normal` (``M``,
  `` m `` -> ``m``).

Words are matched without case, accents, ``_``/``-`` or extra white space. Numbers and
flags stay as they are, and so do objects' refs and identifiers (a SKU). What the block
shows keeps the value as it came.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from turnstream.core.constraints.conditions import canonical
from turnstream.core.constraints.folding import normal
from turnstream.core.constraints.inputs import Scalar
from turnstream.core.constraints.text import known_entry
from turnstream.models.object_types import LANGUAGES, ObjectTypes

__all__ = ["ValueIds", "value_ids"]

#: A decimal number written as text (``40``, `` 40.0 ``, ``-2,5``); never ``1,299``, whose
#: mark may group thousands.
_DECIMAL = re.compile(r"[+-]?\d+(?:[.,]\d{1,2})?")


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
        if _DECIMAL.fullmatch(value.strip()):
            return value.strip().replace(",", ".")
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
        """:meth:`of` as a key (:func:`~turnstream.core.constraints.conditions.canonical`:
        ``40`` and ``"40.0"`` alike)."""
        return canonical(self.of(attr, value))


def value_ids(types: ObjectTypes | None) -> ValueIds:
    """The values ``types`` declares, by every word that names one: its name first, then
    its labels in every language (a label two values share names neither)."""
    if types is None:
        return ValueIds()
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
