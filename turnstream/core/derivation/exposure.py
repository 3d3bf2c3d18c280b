"""Exposures: which presented items the person saw, and with what weight."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from turnstream.core.derivation.events import format_time, parse_time
from turnstream.core.derivation.values import Scalar

__all__ = [
    "WEIGHT_FORMULA",
    "AlreadyPresented",
    "ExposedItem",
    "Page",
    "ShownItem",
    "already_presented",
    "exposed_items",
    "exposed_positions",
    "is_exposed",
    "weight",
    "weight_micro",
]

_MICRO = 1_000_000
#: The exposure weight, as the catalog and the docs spell it. Its one SQL form is
#: :func:`turnstream.adapters.clickhouse.exposure_weight.weight_micro_sql` (an integration test
#: checks
#: that the two agree).
WEIGHT_FORMULA = "1 / log2(pos + 1)"


def weight(pos: int) -> float:
    """The weight of position ``pos`` (from 1): :data:`WEIGHT_FORMULA`."""
    if pos < 1:
        raise ValueError(f"positions count from 1 (got {pos})")
    return 1.0 / math.log2(pos + 1)


def weight_micro(pos: int) -> int:
    """:func:`weight` in millionths.

    Evidence adds weights as integers so that the sum is the same in any order of
    folding (float addition is not associative).
    """
    return round(weight(pos) * _MICRO)


@dataclass(frozen=True)
class ShownItem:
    """One item of a page. ``hidden`` names the sensitive attributes left out of ``shown``."""

    pos: int
    ref: str
    shown: dict[str, Scalar] = field(default_factory=dict)
    hidden: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "pos": self.pos,
            "ref": self.ref,
            "shown": dict(self.shown),
            "hidden": list(self.hidden),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ShownItem:
        return cls(data["pos"], data["ref"], dict(data["shown"]), tuple(data["hidden"]))


@dataclass(frozen=True)
class Page:
    """One ``presented`` page of an exposure, as folded (sensitive items left out)."""

    exposure_id: str
    page: int
    list_id: str
    list_kind: str
    visible_k: int
    method: str
    delivered_at: datetime
    items: tuple[ShownItem, ...]
    key: str
    occurred_at: datetime

    @property
    def first_pos(self) -> int:
        """The page's first position, from which its ``visible_k`` counts (0: no items)."""
        return min((item.pos for item in self.items), default=0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "exposure_id": self.exposure_id,
            "page": self.page,
            "list_id": self.list_id,
            "list_kind": self.list_kind,
            "visible_k": self.visible_k,
            "method": self.method,
            "delivered_at": format_time(self.delivered_at),
            "items": [item.to_dict() for item in self.items],
            "key": self.key,
            "occurred_at": format_time(self.occurred_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Page:
        return cls(
            exposure_id=data["exposure_id"],
            page=data["page"],
            list_id=data["list_id"],
            list_kind=data["list_kind"],
            visible_k=data["visible_k"],
            method=data["method"],
            delivered_at=parse_time(data["delivered_at"]),
            items=tuple(ShownItem.from_dict(item) for item in data["items"]),
            key=data["key"],
            occurred_at=parse_time(data["occurred_at"]),
        )


def is_exposed(page: Page, pos: int, max_seen: int) -> bool:
    """Whether position ``pos`` of ``page`` is exposed.

    Visible: within the first ``visible_k`` positions counted from the page's first
    position; or seen: ``pos <= max_seen``, the highest ``max_index_seen`` of the
    exposure (0 when none arrived).
    """
    return pos - page.first_pos < page.visible_k or pos <= max_seen


def exposed_positions(page: Page, max_seen: int) -> frozenset[int]:
    """The exposed positions of ``page``."""
    return frozenset(item.pos for item in page.items if is_exposed(page, item.pos, max_seen))


@dataclass(frozen=True)
class ExposedItem:
    """One exposed item: what the person saw, when, where and with what weight."""

    exposure_id: str
    list_id: str
    page: int
    pos: int
    ref: str
    weight: float
    method: str
    delivered_at: datetime
    for_: str


def exposed_items(
    pages: Iterable[Page], max_seen: Mapping[str, int], for_: str
) -> list[ExposedItem]:
    """Every exposed item of ``pages`` (one bucket), by delivery time then position."""
    out = [
        ExposedItem(
            exposure_id=page.exposure_id,
            list_id=page.list_id,
            page=page.page,
            pos=item.pos,
            ref=item.ref,
            weight=weight(item.pos),
            method=page.method,
            delivered_at=page.delivered_at,
            for_=for_,
        )
        for page in pages
        for item in page.items
        if is_exposed(page, item.pos, max_seen.get(page.exposure_id, 0))
    ]
    out.sort(key=lambda e: (e.delivered_at, e.exposure_id, e.page, e.pos))
    return out


@dataclass(frozen=True)
class AlreadyPresented:
    """A ref presented to the person (exposed or not): how many times, and when last."""

    ref: str
    times: int
    last_delivered_at: datetime


def already_presented(pages: Iterable[Page]) -> list[AlreadyPresented]:
    """Each presented ref of ``pages`` with its count and last ``delivered_at``, by ref."""
    times: dict[str, int] = {}
    last: dict[str, datetime] = {}
    for page in pages:
        for item in page.items:
            times[item.ref] = times.get(item.ref, 0) + 1
            if item.ref not in last or page.delivered_at > last[item.ref]:
                last[item.ref] = page.delivered_at
    return [AlreadyPresented(ref, times[ref], last[ref]) for ref in sorted(times)]
