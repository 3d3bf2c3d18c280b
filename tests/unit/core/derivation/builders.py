"""Factories of signal events and states for the signals tests."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from turnstream.core.derivation import ProfileState, SignalEvent, SignalsConfig, fold
from turnstream.models.object_types import ObjectTypes, parse_types

T0 = datetime(2026, 9, 29, 14, 0, tzinfo=UTC)
CONFIG = SignalsConfig()


def _field(role: str, **more: Any) -> dict[str, Any]:
    return {"labels": {"pt": "x", "en": "x", "es": "x"}, "role": role, **more}


#: The types the derivation tests fold with: colour and brand carry a taste, size is an
#: attribute, price and stock are state.
TYPES: ObjectTypes = parse_types(
    {
        "types": {
            "item_variant": {
                "fields": {
                    "color": _field("taste"),
                    "brand": _field("taste"),
                    "size": _field("attribute", family="size", system="BR"),
                    "price_sale": _field("state", **{"class": "money"}),
                    "in_stock": _field("state"),
                    "sku": _field("identifier"),
                }
            },
            "health_plan": {"fields": {"network": _field("taste")}},
        }
    }
)
#: The space's rates: red is rarely chosen, the other colours often.
PRIORS = {
    ("item_variant.color", "red"): 0.1,
    ("item_variant.color", "blue"): 0.4,
    ("item_variant.color", "green"): 0.4,
    ("item_variant.color", "white"): 0.4,
}
E1 = "0190f5a2-7b3c-7def-8123-456789abcde1"
E2 = "0190f5a2-7b3c-7def-8123-456789abcde2"
E3 = "0190f5a2-7b3c-7def-8123-456789abcde3"
A = "item_variant:acme:1"
B = "item_variant:acme:2"
C = "item_variant:acme:3"
D = "item_variant:acme:4"


def at(seconds: float) -> datetime:
    """``T0`` plus ``seconds``."""
    return T0 + timedelta(seconds=seconds)


def event(
    kind: str,
    payload: dict[str, Any],
    key: str,
    *,
    t: float = 0,
    for_: str = "self",
    session: str = "s1",
    profile: str = "p1",
    space: str = "acme",
) -> SignalEvent:
    return SignalEvent(kind, space, profile, for_, session, at(t), key, payload)  # type: ignore[arg-type]


def item(pos: int, ref: str, **shown: Any) -> dict[str, Any]:
    return {"pos": pos, "ref": ref, "shown": shown}


def presented(
    key: str,
    exposure_id: str,
    items: list[dict[str, Any]],
    *,
    visible_k: int = 3,
    page: int = 1,
    method: str = "bridge",
    list_id: str = "results-1",
    t: float = 0,
    **kw: Any,
) -> SignalEvent:
    payload = {
        "kind": "presented",
        "exposure_id": exposure_id,
        "list_id": list_id,
        "list_kind": "search_products",
        "page": page,
        "delivered_at": (at(t) - timedelta(seconds=1)).isoformat(),
        "visible_k": visible_k,
        "method": method,
        "items": items,
    }
    return event("interaction", payload, key, t=t, **kw)


def seen(key: str, exposure_id: str, max_index_seen: int, **kw: Any) -> SignalEvent:
    payload = {"kind": "seen", "exposure_id": exposure_id, "max_index_seen": max_index_seen}
    return event("interaction", payload, key, **kw)


def engaged(key: str, ref: str, action: str = "click", **kw: Any) -> SignalEvent:
    payload = {"kind": "engaged", "exposure_id": None, "ref": ref, "pos": None, "action": action}
    return event("interaction", payload, key, **kw)


def feedback(
    key: str, ref: str, polarity: str, fields: list[str] | None = None, **kw: Any
) -> SignalEvent:
    payload = {"kind": "feedback", "ref": ref, "polarity": polarity, "fields": fields}
    return event("interaction", payload, key, **kw)


def outcome(
    key: str,
    ref: str,
    what: str,
    *,
    size: str | None = None,
    reason: str | None = None,
    token: str | None = None,
    whose: str | None = None,
    **kw: Any,
) -> SignalEvent:
    """An outcome; ``whose`` is its wire ``for`` (the event's bucket too, when given)."""
    payload = {
        "outcome": what,
        "ref": ref,
        "order_id": "o-1",
        "exposure_token": token,
        "attrs": {} if size is None else {"size": size},
        "reason": reason,
        "for": whose,
    }
    if whose is not None:
        kw.setdefault("for_", whose)
    return event("outcome", payload, key, **kw)


def command(key: str, what: str, inference_id: str | None = None, **kw: Any) -> SignalEvent:
    payload = {"command": what, "inference_id": inference_id, "replacement": None}
    return event("command", payload, key, **kw)


def preference(key: str, **kw: Any) -> SignalEvent:
    payload = {
        "kind": "preference",
        "attr": "item_variant.color",
        "op": "not_in",
        "values": ["black"],
        "strength": "must_not",
        "scope": "session",
        "category": None,
        "source": "stated",
    }
    return event("interaction", payload, key, **kw)


def fold_all(
    events: Iterable[SignalEvent],
    config: SignalsConfig = CONFIG,
    state: ProfileState | None = None,
) -> ProfileState:
    state = ProfileState() if state is None else state
    for one in events:
        fold(state, one, config)
    return state
