"""Each space's object types document, checked against what names its fields.

The document itself and its pure loader are :mod:`turnstream.models.object_types` (the SDK
loads it there). Here: which document a space uses (loaded once per path and process)
and the check of a space's configuration against it (tool bindings name declared fields).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path

from turnstream.config import Settings, SpaceConfig
from turnstream.core.constraints.bindings import BindingsDocument, load_bindings
from turnstream.errors import ConfigError
from turnstream.models.object_types import ObjectTypes, load_types

__all__ = [
    "binding_problems",
    "check_spaces",
    "sensitive_names",
    "space_types",
    "types_for_space",
    "unbound_fields",
]


@functools.lru_cache(maxsize=64)
def _load(path: str) -> ObjectTypes:
    return load_types(path)


@functools.lru_cache(maxsize=64)
def _configured(types: str, cwd: str) -> ObjectTypes:
    # The ingest rule asks for every message: resolving the path each time (lstat of
    # every component) took 7.4 of the 15.1 s that judging 20,000 items took
    # (bench/hot_path.py --profile, load 11); resolved once per path and directory.
    return _load(str(Path(cwd, types).resolve()))


def types_for_space(space: SpaceConfig | None) -> ObjectTypes | None:
    """The space's types document (loaded once per path), or ``None`` without one.

    Raises :class:`ConfigError` when the document is missing or wrong.
    """
    if space is None or space.types is None:
        return None
    # An absolute path does not depend on the directory: no getcwd (5 µs per message).
    return _configured(space.types, "" if os.path.isabs(space.types) else os.getcwd())


def space_types(settings: Settings) -> dict[str, ObjectTypes | None]:
    """Every configured space's types document (``None``: the space has none)."""
    return {space_id: types_for_space(space) for space_id, space in settings.spaces.items()}


def sensitive_names(settings: Settings) -> frozenset[str]:
    """Every sensitive type and ``type.field``: ``[signals] sensitive`` and every space's
    types document's markings. The aggregates' views leave them out for every space (a
    name one space marks is kept out of all: the safe side)."""
    names = set(settings.sensitive_names())
    for types in space_types(settings).values():
        if types is not None:
            names |= types.sensitive_names()
    return frozenset(names)


def binding_problems(doc: BindingsDocument, types: ObjectTypes) -> list[tuple[str, str]]:
    """``(path, message)`` for each ``type.field`` of the bindings no type declares."""
    problems: list[tuple[str, str]] = []
    for i, binding in enumerate(doc.bindings):
        for j, arg in enumerate(binding.args):
            why = types.unknown(arg.attr)
            if why is not None:
                problems.append((f"bindings.{i}.args.{j}.attr", f"{arg.attr}: {why}"))
        results = binding.results
        if results is None:
            continue
        for name in results.fields:
            attr = f"{results.type}.{name}"
            why = types.unknown(attr)
            if why is not None:
                problems.append((f"bindings.{i}.results.fields.{name}", f"{attr}: {why}"))
    return problems


def unbound_fields(space: SpaceConfig) -> list[tuple[str, str]]:
    """``(path, message)`` for each field the space's tool bindings name that its types
    document does not declare; empty without either document. Raises
    :class:`ConfigError` when a document does not load."""
    types = types_for_space(space)
    if space.tool_bindings is None:
        return []
    bindings = load_bindings(space.tool_bindings)
    return [] if types is None else binding_problems(bindings, types)


def _space_problems(space_id: str, space: SpaceConfig) -> Iterator[str]:
    try:
        types_for_space(space)
    except ConfigError as exc:
        yield f"spaces.{space_id}.types: {exc}"
        return
    try:
        problems = unbound_fields(space)
    except ConfigError as exc:
        yield f"spaces.{space_id}.tool_bindings: {exc}"
        return
    for path, message in problems:
        yield f"spaces.{space_id}.tool_bindings ({space.tool_bindings}) {path}: {message}"


def check_spaces(settings: Settings) -> None:
    """Load every space's types document and tool bindings and check the bindings name
    declared fields; :class:`ConfigError` listing every problem with its path."""
    problems = [
        problem
        for space_id, space in sorted(settings.spaces.items())
        for problem in _space_problems(space_id, space)
    ]
    if problems:
        raise ConfigError("invalid configuration: " + "; ".join(problems))
