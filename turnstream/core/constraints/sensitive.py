"""Sensitive stated values: what the agent acts on, and what is kept apart.

A value stated on a sensitive field (a diet "celíaco (doença celíaca)") is the person's
own words about a condition. The rows analysts read keep only the field (its type and a
count): :func:`withheld` takes the words out of the interaction's payload and returns
them to be kept apart (the ``stated_sensitive`` table, erased with the person, never
granted to analysts). The block serves what the words mean to the agent, the act the
types document declares (``sem glúten``), found by :func:`acts_for`; words no act
declares serve nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from turnstream.core.folding import folded
from turnstream.models.object_types import Act, ObjectTypes

__all__ = ["acts_for", "normalized", "withheld"]

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalized(text: str) -> str:
    """Lower case, no accents, words separated by one space (``Doença Celíaca!`` ->
    ``doenca celiaca``)."""
    return _NOT_WORD.sub(" ", folded(text)).strip()


def acts_for(types: ObjectTypes | None, attr: str, said: Any) -> list[tuple[str, Act]]:
    """The acts (name, act) of sensitive field ``attr`` that ``said`` (a value, or a
    list of them) means: an act whose words appear in it as whole words. In the order
    the document declares them; none when nothing matches."""
    declared = None if types is None else types.field(attr)
    if declared is None or not declared.acts:
        return []
    values = said if isinstance(said, list) else [said]
    texts = [f" {normalized(str(v))} " for v in values if v is not None]
    found = []
    for name, act in declared.acts.items():
        words = [f" {normalized(w)} " for w in [*act.said, name.replace("_", " ")]]
        if any(w.strip() and w in text for w in words for text in texts):
            found.append((name, act))
    return found


def withheld(
    payload: Mapping[str, Any], is_sensitive: Callable[[str], bool]
) -> tuple[dict[str, Any], str] | None:
    """``(payload without the words, the words as JSON)`` for a stated attribute or
    preference on a sensitive field; ``None`` for anything else. The payload keeps its
    field, with ``value`` null (an attribute) or ``values`` empty (a preference) and
    ``withheld: true``."""
    kind, attr = payload.get("kind"), payload.get("attr")
    if kind not in ("attribute", "preference") or not isinstance(attr, str):
        return None
    if not is_sensitive(attr):
        return None
    key = "value" if kind == "attribute" else "values"
    kept = {**payload, key: None if key == "value" else [], "withheld": True}
    return kept, json.dumps(payload.get(key), ensure_ascii=False, separators=(",", ":"))
