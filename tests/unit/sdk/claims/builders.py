"""Factories for the claim tests: contracts, mentions (the reader's own ``Mention``, built
directly so detection is tested alone), evidence, and a reader built from mentions."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from turnstream.sdk.claims import Claims, Evidence, parse_contract
from turnstream.sdk.claims.contract import Contract
from turnstream.sdk.claims.numbers import Mention

NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)


def mention(
    text: str, written: str, cls: str, value: Any, unit: str | None = None, nth: int = 0, **kw: Any
) -> Mention:
    """The ``nth`` occurrence of ``written`` in ``text`` as a mention."""
    starts = [m.start() for m in re.finditer(re.escape(written), text)]
    start = starts[nth]
    return Mention(start, start + len(written), written, cls, value, unit, **kw)


def reader_of(*mentions: tuple[str, str, Any, str | None]) -> Any:
    """A reader that finds each (written, class, value, unit) wherever it stands in a text."""

    def read(text: str, lang: str) -> list[Mention]:
        found: list[Mention] = []
        for written, cls, value, unit in mentions:
            for m in re.finditer(re.escape(written), text):
                found.append(Mention(m.start(), m.end(), written, cls, value, unit))
        found.sort(key=lambda m: m.start)
        return found

    return read


PRICE: dict[str, Any] = {
    "id": "price",
    "agents": [],
    "detect": {
        "classes": ["money"],
        "roles": {
            "price_list": ["de", "antes", "era", "was"],
            "price_sale": ["por", "sai por", "com desconto", "now"],
        },
    },
    "evidence": {"value": {"same_role": True, "fresh_for": "claim"}},
    "natures": {"computed": "check", "quoted": "verbatim", "model": "warn"},
    "actions": {"default": "warn", "contexts": {"chat": "rewrite_if_unequivocal"}},
    "replace_with": "(price on request)",
}
DEADLINE: dict[str, Any] = {
    "id": "deadline",
    "agents": [],
    "detect": {
        "classes": ["date", "duration"],
        "terms": ["entrega", "chega", "delivery", "arrives", "entrega en"],
    },
    "evidence": {"tool": "shipping_quote"},
    "actions": {"default": "warn"},
}
PROMISE: dict[str, Any] = {
    "id": "action_promise",
    "agents": [],
    "detect": {
        "terms": [
            "reservei",
            "enviei o link",
            "I reserved",
            "I sent the link",
            "reservé",
            "envié el enlace",
        ],
    },
    "evidence": {"tool_any": ["reserve_item", "send_link"]},
    "actions": {"default": "warn"},
}
DOC: dict[str, Any] = {
    "version": "retail-2026-11",
    "languages": ["pt", "en", "es"],
    "outputs": {"mutable": ["chat"], "immutable": ["proposal", "invoice"]},
    "negative_corpus": {"version": "neg-3", "phrases": ["we are not sure about the deadline"]},
    "categories": [PRICE, DEADLINE, PROMISE],
}


def doc(*categories: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A contract document (a deep copy of DOC), with other categories or fields."""
    out = copy.deepcopy(DOC)
    if categories:
        out["categories"] = [copy.deepcopy(c) for c in categories]
    out.update(top)
    return out


def contract(*categories: dict[str, Any], **top: Any) -> Contract:
    return parse_contract(doc(*categories, **top))


def claims(
    *mentions: tuple[str, str, Any, str | None],
    categories: Sequence[dict[str, Any]] = (),
    agent: str | None = "sales",
    **kw: Any,
) -> Claims:
    return Claims(
        contract(*categories), agent=agent, reader=reader_of(*mentions), now=lambda: NOW, **kw
    )


def value(
    field: str,
    cls: str,
    v: Any,
    *,
    age: float | None = 900,
    gaps: Sequence[str] = (),
    obj: str | None = None,
    unit: str | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "field": field,
        "class": cls,
        "value": v,
        "claim_age_s": age,
        "gaps": list(gaps),
        "unit": unit,
    }
    if obj is not None:
        out["object"] = obj
    return out


def call(tool: str, *values: dict[str, Any], id: str = "c1", ago_s: float = 5) -> dict[str, Any]:
    return {"id": id, "tool": tool, "at": _at(ago_s), "values": list(values)}


def read(obj: str, *values: dict[str, Any], ago_s: float = 5) -> dict[str, Any]:
    return {"object": obj, "at": _at(ago_s), "values": list(values)}


def _at(ago_s: float) -> str:
    return (NOW - timedelta(seconds=ago_s)).isoformat().replace("+00:00", "Z")


def evidence(**parts: Any) -> Evidence:
    return Evidence.model_validate(parts)
