"""The sample day's tools: searches over a small in-memory catalogue, bound through
``examples/tool_bindings.json`` and measured by the SDK's tool layer (``@tool``), against
the block of what the person said in the session.

The counts in the sample's turn records are the SDK's, from the results the search
returned: the sample never writes them itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

from turnstream.core.constraints import (
    BindingsDocument,
    BlockRequest,
    StatedPreference,
    binding_for,
    build_block,
    load_bindings,
)
from turnstream.sdk import BoundTool, ToolRun, tool

__all__ = ["SAMPLE_BINDINGS", "Said", "bindings", "search", "session_block"]

#: The tool bindings of the sample's spaces (also what ``make run``'s config names).
SAMPLE_BINDINGS = Path(__file__).resolve().parents[1] / "examples" / "tool_bindings.json"

Item = dict[str, Any]
#: What the person said in a session: ``(preference interaction, when)``.
Said = tuple[Mapping[str, Any], datetime]


@cache
def bindings() -> BindingsDocument:
    """The sample's bindings document (read once)."""
    return load_bindings(SAMPLE_BINDINGS)


def session_block(space_id: str, session: str, said: Sequence[Said], now: datetime) -> Item:
    """The block of what the person said in this session (for themselves), as the
    worker would serve it: the same core, without the store."""
    prefs = [
        StatedPreference.said(
            p,
            id=f"{session}-p{i}",
            for_="self",
            occurred_at=at,
            session=session,
            origin=f"turn:{session}",
        )
        for i, (p, at) in enumerate(said)
    ]
    request = BlockRequest(space_id=space_id, profile_id=session, session=session)
    return build_block(request, prefs, (), (), (), (), (), now)


def _has(value: Any, wanted: Sequence[Any] | None) -> bool:
    return not wanted or value in wanted


def _lacks(value: Any, refused: Sequence[Any] | None) -> bool:
    return not refused or value not in refused


def _search_products(
    catalogue: Sequence[Item],
    lax: bool = False,
    size: str | None = None,
    colors: list[str] | None = None,
    exclude_colors: list[str] | None = None,
    brands: list[str] | None = None,
    exclude_brands: list[str] | None = None,
    min_storage_gb: float | None = None,
    categories: list[str] | None = None,
    max_price: float | None = None,
    dry_run: bool = False,
) -> Item:
    """A product search. ``lax``: it ignores the refusals and says it relaxed (a tool may
    relax what it was sent); it knows no categories (the catalogue has none)."""
    found = [
        dict(p)
        for p in catalogue
        if (size is None or p.get("size", size) == size)
        and _has(p.get("color"), colors)
        and _has(p.get("brand"), brands)
        and (min_storage_gb is None or p.get("storage_gb", min_storage_gb) >= min_storage_gb)
        and (max_price is None or p["price"] <= max_price)
        and (lax or (_lacks(p.get("color"), exclude_colors)
                     and _lacks(p.get("brand"), exclude_brands)))
    ]  # fmt: skip
    return {"items": found, "relaxed": lax and bool(exclude_colors or exclude_brands)}


def _search_plans(
    catalogue: Sequence[Item],
    lax: bool = False,
    max_price: float | None = None,
    coverage: str | None = None,
    networks: list[str] | None = None,
    exclude_networks: list[str] | None = None,
    dry_run: bool = False,
) -> Item:
    """A plan search; ``lax``: it ignores the price ceiling (without saying so)."""
    found = [
        dict(p)
        for p in catalogue
        if (lax or max_price is None or p["price"] <= max_price)
        and (coverage is None or p["coverage"] == coverage)
        and _has(p.get("network"), networks)
        and _lacks(p.get("network"), exclude_networks)
    ]
    return {"plans": found}


_TOOLS: dict[str, BoundTool[Any]] = {
    "search_products": tool("search_products", mode="apply")(_search_products),
    "search_plans": tool("search_plans", mode="apply")(_search_plans),
}


def search(
    name: str,
    rand: random.Random,
    catalogue: Sequence[Item],
    block: Mapping[str, Any],
    source: str,
    in_frame: bool,
) -> ToolRun:
    """One call of the space's search over ``catalogue``: in the turn in progress (the
    frame's block; the SDK records and measures), or outside one with ``block``. One in
    eight calls is lax."""
    bound = _TOOLS[name]
    lax = rand.random() < 0.125
    if in_frame:
        return bound.run(catalogue, lax)
    # Outside a turn there is no conversation to serve the binding: bind it here.
    binding = binding_for(bindings(), name, source)
    here: Callable[..., Any] = bound.fn
    alone = tool(name, binding, mode="apply")(here)
    return alone.run(catalogue, lax, _block=block)
