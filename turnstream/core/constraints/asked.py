"""What an agent's ``asked`` names mean: the field each one names, and the names that name
none (``frobnicate``), said back so that silence is never read as "already known".

A name is matched without case and accents, ``_``, ``-`` and spaces alike
(``Storage``, ``clothing-size``, ``Tamanho``), in this order, the first match winning:
a ``type.field`` the types document declares; an attribute field of that name; an
attribute family (``size``); a taste field of that name (``color``), then a state
field of that name (``price_sale``); a field's label in any language of the document
(``colour``, ``cor``, ``tamanho``, ``storage``, ``price``), an attribute's before a
taste's, a taste's before a state's. Within one step types come sorted by name
(``item_variant`` before ``person``), each type's fields in the document's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from turnstream.core.folding import normal
from turnstream.models.object_types import LANGUAGES, ObjectTypes

__all__ = ["Asked", "family_field", "normal", "resolve_asked"]

#: The roles a person can be asked about: what they are, what they like and what they
#: want of an object's state (a price, stock).
_ASKABLE = ("attribute", "taste", "state")


@dataclass(frozen=True)
class Asked:
    """``fields``: the ``type.field`` of each name understood, in the order asked;
    ``unknown``: the names that name no field, as they came."""

    fields: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()


def _fields(types: ObjectTypes) -> list[tuple[str, str, str, str | None, list[str]]]:
    """``(type.field, field, role, family, labels)`` of every askable field, in order."""
    return [
        (
            f"{t}.{f}",
            f,
            spec.role,
            spec.family,
            [str(getattr(spec.labels, lang)) for lang in LANGUAGES],
        )
        for t, declared in sorted(types.types.items())
        for f, spec in declared.fields.items()
        if spec.role in _ASKABLE
    ]


def _match(name: str, types: ObjectTypes) -> str | None:
    wanted = normal(name)
    if "." in name:  # a type.field: any field the document declares
        declared = (f"{t}.{f}" for t, spec in sorted(types.types.items()) for f in spec.fields)
        return next((attr for attr in declared if normal(attr) == wanted), None)
    fields = _fields(types)
    attribute = [f for f in fields if f[2] == "attribute"]
    taste = [f for f in fields if f[2] == "taste"]
    state = [f for f in fields if f[2] == "state"]
    steps = (
        (attr for attr, f, _, _, _ in attribute if normal(f) == wanted),
        (attr for attr, _, _, family, _ in attribute if family and normal(family) == wanted),
        (attr for attr, f, _, _, _ in taste if normal(f) == wanted),
        (attr for attr, f, _, _, _ in state if normal(f) == wanted),
        (attr for attr, _, _, _, labels in attribute if wanted in map(normal, labels)),
        (attr for attr, _, _, _, labels in taste if wanted in map(normal, labels)),
        (attr for attr, _, _, _, labels in state if wanted in map(normal, labels)),
    )
    return next((attr for step in steps for attr in step), None)


def resolve_asked(names: Iterable[str], types: ObjectTypes | None) -> Asked:
    """The fields ``names`` mean with ``types``; without a types document every name is
    taken as it is (a field's name or a ``type.field``) and none is unknown."""
    names = list(names)
    if types is None:
        return Asked(tuple(names), ())
    fields: list[str] = []
    unknown: list[str] = []
    for name in names:
        attr = _match(name, types)
        if attr is None:
            if name not in unknown:
                unknown.append(name)
        elif attr not in fields:
            fields.append(attr)
    return Asked(tuple(fields), tuple(unknown))


def family_field(types: ObjectTypes, family: str) -> str | None:
    """The field a question about ``family`` is worded by: its first attribute field in
    the document's order (``item_variant.size`` for ``size``), whichever field was asked."""
    return next(
        (attr for attr, _, role, fam, _ in _fields(types) if role == "attribute" and fam == family),
        None,
    )
