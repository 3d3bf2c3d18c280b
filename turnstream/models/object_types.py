"""The object types document: per type, its fields, each with a label per language, a claim
class, a claim age and a role in derivation. Pure: no store, no settings; the SDK loads
it as the worker does.

A field's role says what derivation may do with it:

* ``taste``: an affinity may be inferred (a colour, a brand);
* ``attribute``: what a person is, in a ``family`` (``size``) and a measuring ``system``;
  known only from outcomes and what the person said, applied ``when_asked``;
* ``state``: what the object is now (a price, a stock flag): never a taste;
* ``identifier``: names the object (a SKU): never a taste.

A field no type declares is never a taste; a preference, an attribute or a tool binding
that names one is refused with its path.
"""

from __future__ import annotations

import json
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from turnstream.errors import ConfigError

__all__ = [
    "CLAIM_CLASSES",
    "LANGUAGES",
    "ROLES",
    "Act",
    "ClaimClass",
    "FieldType",
    "Language",
    "ObjectType",
    "ObjectTypes",
    "Role",
    "load_types",
    "parse_types",
]

Role = Literal["taste", "attribute", "state", "identifier"]
#: The claim checker's classes of a number (docs/claims.md).
ClaimClass = Literal["money", "date", "percent", "duration", "quantity", "count", "dosage", "label"]
Language = Literal["pt", "en", "es"]
ROLES: tuple[str, ...] = ("taste", "attribute", "state", "identifier")
CLAIM_CLASSES: tuple[str, ...] = (
    "money", "date", "percent", "duration", "quantity", "count", "dosage", "label"
)  # fmt: skip
LANGUAGES: tuple[str, ...] = ("pt", "en", "es")

#: The classes whose numbers are in a unit (``unit``).
_MEASURED = ("quantity", "count", "dosage")

Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]
Label = Annotated[str, StringConstraints(min_length=1, max_length=80, strip_whitespace=True)]


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Labels(_Doc):
    """The words for one field or type in each language the block is written in."""

    pt: Label
    en: Label
    es: Label


class Act(_Doc):
    """What the agent must act on when a sensitive field holds one of some values: the
    constraint (``sem glúten``), never the words the person used for their condition."""

    #: The constraint in each language the block is written in.
    labels: Labels
    #: Words that, said as (part of) the field's value, mean this constraint (any
    #: language; matched without case or accents, as whole words).
    said: list[Label] = Field(min_length=1, max_length=64)
    #: The objects' field the constraint holds on, when the space's objects have one
    #: (``item_variant.gluten_free``), with its operator and values.
    attr: (
        Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$")] | None
    ) = None
    op: Literal["in", "not_in", "eq", "ne"] = "eq"
    values: list[bool | int | float | str] = Field(default_factory=list, max_length=16)

    @model_validator(mode="after")
    def _condition(self) -> Act:
        if (self.attr is None) != (not self.values):
            raise ValueError("attr and values go together")
        return self


class FieldType(_Doc):
    """One field of a type."""

    labels: Labels
    role: Role
    #: The claim checker's class of the field's values (none: not a number).
    class_: ClaimClass | None = Field(default=None, alias="class")
    #: How old a value may be for a claim to stand on it (ISO 8601 or seconds).
    claim_age: timedelta | None = None
    #: ``attribute`` only: what it measures (``size``), so that two fields of one family
    #: (a stated ``person.clothing_size``, an inferred ``item_variant.size``) are compared.
    family: Name | None = None
    #: ``attribute`` only: the measuring system its values are in (``BR``, ``EU``).
    system: Annotated[str, StringConstraints(max_length=16)] | None = None
    #: Only the type and a count are kept; never an inference.
    sensitive: bool = False
    #: The unit its numbers are in (``GB``, ``cm``), said after each number in the block's
    #: text (``64 GB``); only on a field of class ``quantity``, ``count`` or ``dosage``.
    unit: (
        Annotated[str, StringConstraints(min_length=1, max_length=16, pattern=r"^\S(.*\S)?$")]
        | None
    ) = None
    #: The words for some of its values per language (``navy = { pt = "azul-marinho",
    #: ... }``); a value without one takes the block's built-in words of common retail
    #: values, else is quoted as the producer's word (``core/constraints/text.ValueWords``).
    values: dict[Annotated[str, StringConstraints(min_length=1, max_length=80)], Labels] = Field(
        default_factory=dict
    )

    #: Its value is many values (sizes in stock): a list, or in ``shown`` a text joined by
    #: commas; a later read says which came and which went.
    many: bool = False
    #: ``sensitive`` only: the constraint each value means, by a name of the constraint
    #: (``gluten_free``): the block serves that, never the value as said.
    acts: dict[Name, Act] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _attribute_family(self) -> FieldType:
        if self.unit is not None and self.class_ not in _MEASURED:
            raise ValueError("a unit belongs to a field of class quantity, count or dosage")
        if self.acts and not self.sensitive:
            raise ValueError("acts belong to sensitive fields only")
        if self.role == "attribute" and self.family is None:
            raise ValueError("an attribute field needs a family (e.g. size)")
        if self.role != "attribute" and (self.family is not None or self.system is not None):
            raise ValueError("family and system belong to attribute fields only")
        return self


class ObjectType(_Doc):
    """One type of object (``item_variant``) or of person facts (``person``)."""

    labels: Labels | None = None
    #: Every field of the type is sensitive.
    sensitive: bool = False
    fields: dict[Name, FieldType] = Field(min_length=1)


class ObjectTypes(_Doc):
    """Every type of a space (or of several: a document may be shared)."""

    types: dict[Name, ObjectType] = Field(min_length=1)

    def field(self, attr: str) -> FieldType | None:
        """The field ``type.field`` names, or ``None``."""
        type_name, _, field_name = attr.partition(".")
        declared = self.types.get(type_name)
        return None if declared is None else declared.fields.get(field_name)

    def role(self, attr: str) -> Role | None:
        """The role of ``type.field``; ``None`` for a field no type declares."""
        found = self.field(attr)
        return None if found is None else found.role

    def is_taste(self, attr: str) -> bool:
        """Whether an affinity may be inferred on ``type.field`` (declared, taste, not
        sensitive)."""
        found = self.field(attr)
        return found is not None and found.role == "taste" and not self.is_sensitive(attr)

    def family(self, attr: str) -> str | None:
        """The attribute family of ``type.field`` (``size``), or ``None``."""
        found = self.field(attr)
        return None if found is None else found.family

    def label(self, attr: str, language: str) -> str | None:
        """The words for ``type.field`` in ``language`` (pt, en, es), or ``None``."""
        found = self.field(attr)
        if found is None or language not in LANGUAGES:
            return None
        return str(getattr(found.labels, language))

    def labels(self, language: str) -> dict[str, str]:
        """``type.field`` -> its words in ``language``, for every declared field."""
        return {
            f"{t}.{f}": str(getattr(spec.labels, language))
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            if language in LANGUAGES
        }

    def value_labels(self, language: str) -> dict[tuple[str, str], str]:
        """``(type.field, value)`` -> its words in ``language``, for every declared value."""
        if language not in LANGUAGES:
            return {}
        return {
            (f"{t}.{f}", value): str(getattr(words, language))
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            for value, words in spec.values.items()
        }

    def units(self) -> dict[str, str]:
        """``type.field`` -> its unit (``GB``), for every field that declares one."""
        return {
            f"{t}.{f}": spec.unit
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            if spec.unit is not None
        }

    def money(self) -> frozenset[str]:
        """Every ``type.field`` of class ``money`` (a price: written with cents)."""
        return frozenset(
            f"{t}.{f}"
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            if spec.class_ == "money"
        )

    def flags(self) -> frozenset[str]:
        """Every ``type.field`` of the state that may be a flag (``in_stock``): no claim
        class, one value."""
        return frozenset(
            f"{t}.{f}"
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            if spec.role == "state" and spec.class_ is None and not spec.many
        )

    def type_label(self, type_name: str, language: str) -> str | None:
        """The words for a type (``variante``) in ``language``, or ``None``."""
        declared = self.types.get(type_name)
        if declared is None or declared.labels is None or language not in LANGUAGES:
            return None
        return str(getattr(declared.labels, language))

    def is_sensitive(self, attr_or_type: str) -> bool:
        """Whether a type, or a ``type.field``, is marked sensitive (by type or field)."""
        type_name, _, field_name = attr_or_type.partition(".")
        declared = self.types.get(type_name)
        if declared is None:
            return False
        if declared.sensitive:
            return True
        found = declared.fields.get(field_name) if field_name else None
        return found is not None and found.sensitive

    def sensitive_names(self) -> frozenset[str]:
        """The sensitive types and ``type.field`` names, as ``[signals] sensitive`` spells
        them."""
        names: set[str] = set()
        for type_name, declared in self.types.items():
            if declared.sensitive:
                names.add(type_name)
            names.update(
                f"{type_name}.{f}" for f, spec in declared.fields.items() if spec.sensitive
            )
        return frozenset(names)

    def attribute_names(self) -> frozenset[str]:
        """Every ``type.field`` of role ``attribute`` (``item_variant.shoe_size``)."""
        return frozenset(
            f"{t}.{f}"
            for t, declared in self.types.items()
            for f, spec in declared.fields.items()
            if spec.role == "attribute"
        )

    def unknown(self, attr: str) -> str | None:
        """Why ``attr`` is not a declared ``type.field``; ``None`` when it is."""
        type_name, _, field_name = attr.partition(".")
        declared = self.types.get(type_name)
        if declared is None:
            return f"type {type_name!r} is not declared (types: {', '.join(sorted(self.types))})"
        if field_name not in declared.fields:
            return f"{type_name!r} declares no field {field_name!r}"
        return None


def parse_types(data: Any) -> ObjectTypes:
    """The document from its parsed form (``{"types": {...}}``)."""
    return ObjectTypes.model_validate(data)


def _problems(exc: ValidationError) -> str:
    return "; ".join(".".join(str(p) for p in e["loc"]) + f": {e['msg']}" for e in exc.errors())


def load_types(path: str | Path) -> ObjectTypes:
    """The document in a TOML (``.toml``) or JSON file; :class:`ConfigError` naming the
    file and each bad field's path when it is missing or wrong."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
        data = tomllib.loads(text) if file.suffix == ".toml" else json.loads(text)
        return parse_types(data)
    except ValidationError as exc:
        raise ConfigError(f"object types {file}: {_problems(exc)}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"object types {file}: {exc}") from None
