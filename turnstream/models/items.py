"""The four item types and the one entry point that turns bytes into a valid item."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from turnstream.errors import InvalidItem
from turnstream.models.commands import Command
from turnstream.models.common import Envelope, ForWhom
from turnstream.models.interactions import INTERACTION_KINDS, Interaction
from turnstream.models.json_text import BODY, PATH_NAME_MAX, json_problem, path_at, path_name
from turnstream.models.outcomes import Outcome
from turnstream.models.turns import Turn

__all__ = [
    "ITEM_TYPES",
    "MAX_ITEM_BYTES",
    "PATH_NAME_MAX",
    "InteractionItem",
    "Item",
    "error_pairs",
    "parse_item",
]

#: The largest item accepted; bigger ones go to dead letters unread.
MAX_ITEM_BYTES = 1 << 20


class InteractionItem(Envelope):
    """One interaction sent as a batch item (a source that records no turns)."""

    type: Literal["interaction"]
    interaction: Interaction
    for_: ForWhom = Field(default="self", alias="for")


Item = Turn | InteractionItem | Outcome | Command
ITEM_TYPES = ("turn", "interaction", "outcome", "command")

_ADAPTER: TypeAdapter[Item] = TypeAdapter(
    Annotated[Turn | InteractionItem | Outcome | Command, Field(discriminator="type")]
)
_FIELD_PREFIX = re.compile(r"^([a-z_][a-z0-9_]*): (.*)\Z", re.S)


def _path(loc: tuple[int | str, ...]) -> str:
    """``('interactions', 2, 'preference', 'values', 0)`` -> ``interactions[2].values[0]``.

    Pydantic puts the tag of a discriminated union into the location; the tag is a
    value, not a field, so it is left out.
    """
    parts: list[str] = []
    for i, part in enumerate(loc):
        if i == 0 and part in ITEM_TYPES:
            continue  # the item's own type tag
        if (
            part in INTERACTION_KINDS
            and i > 0
            and (isinstance(loc[i - 1], int) or loc[i - 1] in ("interaction", "replacement"))
        ):
            continue  # an interaction's kind tag
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            name = "for" if part == "for_" else "class" if part == "class_" else str(part)
            name = path_name(name)  # a key the producer made up may be long
            parts.append(("." if parts else "") + name)
    return "".join(parts)


#: A step of an error's location that names a member of a union, not a field: pydantic's
#: schema names (``function-plain[_scalar()]``, ``list[str]``, ``function-after[...]``,
#: ``nullable[int]``) and, beside a sibling member, a bare type (``str``, ``int``) or a
#: model's name (``Preference``).
_SCHEMA_NAME = re.compile(r"^[a-z][a-z0-9-]*\[.*\]\Z", re.S)
_BARE_TYPES = frozenset({"str", "int", "float", "bool", "bytes", "none", "date", "datetime"})


def _models(cls: type[BaseModel] = BaseModel) -> set[str]:
    """The names of every pydantic model defined so far."""
    names = set()
    for sub in cls.__subclasses__():
        names.add(sub.__name__)
        names |= _models(sub)
    return names


def _bare_member(part: str) -> bool:
    return part in _BARE_TYPES or (part[:1].isupper() and part in _models())


def _member_at(loc: tuple[int | str, ...], i: int) -> bool:
    """Whether ``loc[i]`` may name a union member by a bare name: a type or a model's, not
    followed by a schema name (then it is a key whose value is a union: ``current``'s
    ``{"str": ...}``)."""
    part = loc[i]
    if not isinstance(part, str) or not _bare_member(part):
        return False
    after = loc[i + 1] if i + 1 < len(loc) else None
    return not (isinstance(after, str) and _SCHEMA_NAME.match(after))


def _members(locs: list[tuple[int | str, ...]]) -> list[set[int]]:
    """For each location, the positions that name a union member: a schema name anywhere;
    a bare type or model name where another error of the same union (the same location
    up to there) names another member."""
    found: list[set[int]] = []
    for loc in locs:

        def twinned(i: int, loc: tuple[int | str, ...] = loc) -> bool:
            return _member_at(loc, i) and any(
                len(o) > i and o[:i] == loc[:i] and o[i] != loc[i] and _member_at(o, i)
                for o in locs
            )

        schema = {i for i, p in enumerate(loc) if isinstance(p, str) and _SCHEMA_NAME.match(p)}
        found.append(schema | {i for i in range(len(loc)) if twinned(i)})
    return found


def _relevant(locs: list[tuple[int | str, ...]], members: list[set[int]]) -> list[bool]:
    """Which errors to keep: of a union where some member got inside the value (a list
    whose second value is wrong), only those; the other members' "should be a ..."
    at the union itself say nothing of it."""
    keep = []
    for loc, skip in zip(locs, members, strict=True):
        if not skip:
            keep.append(True)
            continue
        at = min(skip)
        shallow = len(loc) == at + 1
        deeper = any(
            len(other) > at + 1 and other[:at] == loc[:at] and min(s, default=-1) == at
            for other, s in zip(locs, members, strict=True)
        )
        keep.append(not (shallow and deeper))
    return keep


def _accepted(messages: list[str]) -> str:
    """One message for the failed members of a union: what each accepts, joined
    (``Input should be a string, a number or a boolean, or a valid list``)."""
    prefix = "Input should be "
    if all(m.startswith(prefix) for m in messages):
        return prefix + ", or ".join(m[len(prefix) :] for m in messages)
    return "; or ".join(messages)


def error_pairs(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field_path, message)`` for each problem, without the input values: one per
    field location, a union's members (pydantic's internal location steps) never in
    the path, their messages joined into one that says what the field accepts."""
    errors = exc.errors(include_input=False, include_url=False)
    locs = [tuple(err["loc"]) for err in errors]
    members = _members(locs)
    pairs: dict[str, list[str]] = {}
    unions: set[str] = set()
    for err, loc, skip, keep in zip(errors, locs, members, _relevant(locs, members), strict=True):
        if not keep:
            continue
        path, msg = _one(err, tuple(p for i, p in enumerate(loc) if i not in skip))
        if skip:
            unions.add(path)
        if msg not in pairs.setdefault(path, []):
            pairs[path].append(msg)
    return [
        (path, _accepted(msgs) if path in unions else "; ".join(msgs))
        for path, msgs in pairs.items()
    ]


def _one(err: Any, loc: tuple[int | str, ...]) -> tuple[str, str]:
    """The path and message of one pydantic error, its union members left out of ``loc``."""
    path, msg = _path(loc), err["msg"]
    if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
        tag = err.get("ctx", {}).get("discriminator", "").strip("'")
        path = f"{path}.{tag}" if path else tag
        if err["type"] == "union_tag_not_found":
            msg = "Field required"
        else:
            # Not the tag sent: it may be anything, a handle put in the wrong field
            # (the message reaches the dead_letters table).
            expected = err.get("ctx", {}).get("expected_tags", "")
            msg = f"unknown {tag}; expected one of {expected}"
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
        match = _FIELD_PREFIX.match(msg)
        if match:  # a model-level rule that names its field
            path = f"{path}.{match[1]}" if path else match[1]
            msg = match[2]
    return path, msg


def parse_item(raw: bytes) -> Item:
    """Validate one wire item (JSON bytes) and return its model.

    Raises :class:`InvalidItem` naming each offending field path; the messages never
    repeat the input, which may hold personal data.
    """
    if len(raw) > MAX_ITEM_BYTES:
        raise InvalidItem([(BODY, f"item is {len(raw)} bytes; the limit is {MAX_ITEM_BYTES}")])
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = path_at(raw, exc.start)
        raise InvalidItem([(where, f"not valid UTF-8 (byte {exc.start})")]) from None
    try:
        return _ADAPTER.validate_json(raw, strict=True)
    except ValidationError as exc:
        # A problem outside every field (the body is no object) is the body's.
        errors = [(path or BODY, message) for path, message in error_pairs(exc)]
        for _, message in errors:
            # The text is not JSON: that alone, where and why (read again: refused only).
            problem = json_problem(raw, message)
            if problem is not None:
                raise InvalidItem([problem]) from None
        raise InvalidItem(errors) from None
