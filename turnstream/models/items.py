"""The four item types and the one entry point that turns bytes into a valid item."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, TypeAdapter, ValidationError

from turnstream.errors import InvalidItem
from turnstream.models.commands import Command
from turnstream.models.common import Envelope, ForWhom
from turnstream.models.interactions import INTERACTION_KINDS, Interaction
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
_FIELD_PREFIX = re.compile(r"^([a-z_][a-z0-9_]*): (.*)$", re.S)


#: The longest name of one step of a field path in an error: a longer one is a key the
#: sender made up (a 10,000-character name in ``current``) and is cut, so an error
#: answer or a dead letter's reason never carries the sender's input back whole.
PATH_NAME_MAX = 64


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
            if len(name) > PATH_NAME_MAX:  # a key the producer made up, not a field
                name = name[:PATH_NAME_MAX] + "…"
            parts.append(("." if parts else "") + name)
    return "".join(parts)


def error_pairs(exc: ValidationError) -> list[tuple[str, str]]:
    """``(field_path, message)`` for each problem, without the input values."""
    out: list[tuple[str, str]] = []
    for err in exc.errors(include_input=False, include_url=False):
        path, msg = _path(tuple(err["loc"])), err["msg"]
        if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
            tag = err.get("ctx", {}).get("discriminator", "").strip("'")
            path = f"{path}.{tag}" if path else tag
            if err["type"] == "union_tag_not_found":
                msg = "Field required"
            else:
                expected = err.get("ctx", {}).get("expected_tags", "")
                msg = f"unknown {tag} {err['ctx'].get('tag')!r}; expected one of {expected}"
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
            match = _FIELD_PREFIX.match(msg)
            if match:  # a model-level rule that names its field
                path = f"{path}.{match[1]}" if path else match[1]
                msg = match[2]
        out.append((path, msg))
    return out


def parse_item(raw: bytes) -> Item:
    """Validate one wire item (JSON bytes) and return its model.

    Raises :class:`InvalidItem` naming each offending field path; the messages never
    repeat the input, which may hold personal data.
    """
    if len(raw) > MAX_ITEM_BYTES:
        raise InvalidItem([("", f"item is {len(raw)} bytes; the limit is {MAX_ITEM_BYTES}")])
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidItem([("", f"not valid UTF-8 (byte {exc.start})")]) from None
    try:
        return _ADAPTER.validate_json(raw, strict=True)
    except ValidationError as exc:
        errors = error_pairs(exc)
        if any(e[1].startswith("Invalid JSON") for e in errors):
            raise InvalidItem([("", errors[0][1])]) from None
        raise InvalidItem(errors) from None
