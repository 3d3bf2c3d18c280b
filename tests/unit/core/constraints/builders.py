"""Factories of read-side records for the views tests."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from turnstream.core.constraints import (
    BlockRequest,
    CompanyRule,
    Disliked,
    Presented,
    StatedAttribute,
    StatedPreference,
    build_block,
)
from turnstream.core.derivation import Evidence, Inference
from turnstream.models.object_types import ObjectTypes, parse_types

NOW = datetime(2026, 9, 29, 14, 0, tzinfo=UTC)
COLOR = "item_variant.color"
SIZE = "item_variant.size"
PRICE = "health_plan.monthly_price"
NETWORK = "health_plan.network"


def _field(pt: str, en: str, es: str, role: str, **more: Any) -> dict[str, Any]:
    return {"labels": {"pt": pt, "en": en, "es": es}, "role": role, **more}


#: The object types of the block tests: labels in three languages, a taste, attributes
#: of the size family (an item's size in BR, the person's clothing size) and state.
TYPES: ObjectTypes = parse_types(
    {
        "types": {
            "item_variant": {
                "fields": {
                    "color": _field("cor", "colour", "color", "taste"),
                    "brand": _field("marca", "brand", "marca", "taste"),
                    "size": _field("tamanho", "size", "talla", "attribute",
                                   family="size", system="BR"),
                    "price_sale": _field("preço", "price", "precio", "state"),
                    "in_stock": _field("em estoque", "in stock", "en stock", "state"),
                }
            },
            "health_plan": {
                "fields": {
                    "monthly_price": _field("mensalidade", "monthly price", "cuota mensual",
                                            "state"),
                    "network": _field("rede", "network", "red", "taste"),
                    "copay": _field("coparticipação", "copay", "copago", "state"),
                }
            },
            "person": {
                "fields": {
                    "size": _field("tamanho", "size", "talla", "attribute", family="size"),
                    "clothing_size": _field("tamanho de roupa", "clothing size",
                                            "talla de ropa", "attribute", family="size"),
                }
            },
        }
    }
)  # fmt: skip


def ago(hours: float) -> datetime:
    """``NOW`` minus ``hours``."""
    return NOW - timedelta(hours=hours)


def pref(
    id: str,
    attr: str,
    op: str,
    values: tuple[Any, ...],
    strength: str,
    *,
    scope: str = "persistent",
    hours_ago: float = 1,
    for_: str = "self",
    session: str = "s1",
    source: str = "stated",
    category: str | None = None,
) -> StatedPreference:
    return StatedPreference(
        id=id,
        attr=attr,
        op=op,  # type: ignore[arg-type]
        values=values,
        strength=strength,  # type: ignore[arg-type]
        scope=scope,  # type: ignore[arg-type]
        category=category,
        source=source,
        for_=for_,
        occurred_at=ago(hours_ago),
        session=session,
        origin=f"event:{id}",
    )


def attribute(
    id: str,
    attr: str,
    value: Any,
    *,
    system: str | None = None,
    source: str = "stated",
    for_: str = "self",
    hours_ago: float = 1,
) -> StatedAttribute:
    return StatedAttribute(id, attr, value, system, source, for_, ago(hours_ago), f"event:{id}")


def inference(
    id: str,
    kind: str,
    attr: str,
    value: str,
    *,
    polarity: str | None = "prefer",
    weight: float = 0.5,
    confidence: float = 0.75,
    for_: str = "self",
    status: str = "active",
    profile: str = "p1",
) -> Inference:
    return Inference(
        id=id,
        space_id="acme",
        profile_id=profile,
        for_=for_,
        kind=kind,  # type: ignore[arg-type]
        attr=attr,
        value=value,
        polarity=polarity,  # type: ignore[arg-type]
        weight=weight,
        confidence=confidence,
        evidence=Evidence(),
        origin_events=("k1",),
        applies="when_asked" if kind == "attribute" else "always",
        status=status,  # type: ignore[arg-type]
        created_at=ago(48),
        updated_at=ago(48),
    )


def rule(
    id: str, rank: int, text: str, attr: str | None = None, op: str | None = None, *values: Any
) -> CompanyRule:
    return CompanyRule(id, rank, "policy:v3", attr, op, values, text)  # type: ignore[arg-type]


def block(
    preferences: Sequence[StatedPreference] = (),
    attributes: Sequence[StatedAttribute] = (),
    inferences: Sequence[Inference] = (),
    presented: Sequence[Presented] = (),
    disliked: Sequence[Disliked] = (),
    rules: Sequence[CompanyRule] = (),
    *,
    now: datetime = NOW,
    labels: dict[str, str] | None = None,
    types: ObjectTypes | None = TYPES,
    soft_max: int | None = None,
    shown: dict[str, dict[str, Any]] | None = None,
    current: dict[str, dict[str, Any]] | None = None,
    **request: Any,
) -> dict[str, Any]:
    """The block of profile p1 in space acme, with the request's fields as keywords."""
    req = BlockRequest(space_id="acme", profile_id="p1", **request)
    return build_block(
        req,
        preferences,
        attributes,
        inferences,
        presented,
        disliked,
        rules,
        now,
        labels=labels,
        types=types,
        soft_max=soft_max,
        shown=shown,
        current=current,
    )


def by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in rows}
