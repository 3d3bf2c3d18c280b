"""The accepted message, serialized by a serializer of the item's fields made once per
type, is byte for byte what ``model_dump_json`` with an exclude set gave."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic_core import to_json

from turnstream.config import Settings
from turnstream.core.ingest import Decision, Source, decide
from turnstream.core.messages import accepted_for
from turnstream.models import Turn
from turnstream_dev.sample import mixed_items

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret"},
        "spaces": {
            "acme": {"features": ["signals", "claims", "turns"]},
            "lumen": {"features": ["signals", "claims", "turns"]},
            "vida": {"features": ["claims", "turns"]},
        },
    }
)
SRC = Source("turnstream.interactions", 0, 7)
EXPOSURE = "0190d5a4-1c2b-7d3e-8f4a-123456789abc"


def _spelled_by_model_dump_json(decision: Decision) -> bytes:
    """The accepted message as ``accepted_for`` spelled it before its own serializer."""
    item = decision.item
    assert item is not None and decision.profile_id is not None
    exclude = {"handle", "profile_id"}
    drop = isinstance(item, Turn) and not decision.keep_interactions
    if drop:
        exclude.add("interactions")
    token = decision.token
    if token is not None and not token.attributes:
        exclude.add("exposure_token")
    body = item.model_dump_json(by_alias=True, exclude=exclude).encode()
    tail = b',"profile_id":' + to_json(decision.profile_id)
    if token is not None:
        tail += b',"token_status":' + to_json(token.status)
    if drop:
        tail += b',"interactions":[]'
    return body[:-1] + tail + b"}"


def _envelope(kind: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "space_id": "acme",
        "idempotency_key": "k-" + "ü" * 250,  # 256 characters, not ASCII
        "handle": {"type": "email", "value": "Ana.Souza@Example.com"},
        "source": "web",
        "session_id": "s-日本語",
        "occurred_at": "2026-09-29T14:02:11.123456789+05:30",
        **fields,
    }


_EVERY_KIND = [
    {
        "kind": "presented",
        "for": "gift",
        "exposure_id": EXPOSURE,
        "list_id": "l1",
        "list_kind": "search",
        "delivered_at": "2026-09-29 14:02:10Z",
        "visible_k": 3,
        "items": [
            {"pos": i, "ref": f"item:{i}", "shown": {"price": 9.9, "name": "açaí", "n": None}}
            for i in range(1, 1001)
        ],
    },
    {"kind": "seen", "exposure_id": EXPOSURE, "max_index_seen": 2},
    {"kind": "engaged", "ref": "item:1", "pos": 1, "action": "click"},
    {"kind": "feedback", "ref": "item:1", "polarity": "dislike", "fields": ["x"], "reason": "—"},
    {
        "kind": "preference",
        "attr": "item_variant.color",
        "op": "in",
        "values": ["negro", 1, 2.5, True] * 64,
        "strength": "prefer",
        "source": "stated",
        "scope": "persistent",
    },
    {"kind": "attribute", "attr": "person.size", "value": "M", "source": "kept"},
    {
        "kind": "watch",
        "condition": {"price": {"lt": 100.5, "in": [1, "dos", None, {"deep": [True]}]}},
        "consent_event": "c1",
    },
    {"kind": "unwatch", "watch_id": "w1"},
]

_ITEMS = [
    _envelope("turn", turn_id="t1", agent="a", interactions=_EVERY_KIND, claims=[
        {"category": "price", "class": "money", "nature": "quoted", "span": [0, 4],
         "verdict": "matched", "action": "none", "evidence": {"k": [1, 2.0, "ß"]}},
    ], constraints=[{"tool": "t", "sent": 2**32 - 1, "results_checked": 3, "violations": 1,
                     "unverifiable": 2}], experiment={"id": "e", "arm": "b"}),
    *(_envelope("interaction", interaction=one) for one in _EVERY_KIND),
    {**_envelope("interaction", interaction=_EVERY_KIND[1]), "for": "beneficiary:kid-1"},
    _envelope("outcome", outcome="kept", ref="r", order_id="o", attrs={"größe": 42},
              exposure_token="nx1.not-a-token", reason="x" * 4096, **{"for": "gift"}),
    _envelope("command", command="correct", inference_id="i1", replacement=_EVERY_KIND[4]),
    _envelope("command", command="erase"),
    # A turn of a space without signals: its interactions refused, the turn kept.
    {**_envelope("turn", turn_id="t2", agent="a", interactions=_EVERY_KIND[1:3]),
     "space_id": "vida"},
    {**_envelope("turn", turn_id="t3", agent="a"), "handle": None, "profile_id": "p_1"},
]  # fmt: skip


@pytest.mark.parametrize("item", _ITEMS, ids=lambda item: item["type"])
def test_every_kind_of_item_is_spelled_as_before(item: dict[str, Any]) -> None:
    raw = json.dumps({k: v for k, v in item.items() if v is not None}).encode()
    decision = decide(raw, SRC, SETTINGS, lambda _: None)
    assert decision.item is not None, decision.refusal
    assert accepted_for(decision) == _spelled_by_model_dump_json(decision)


def test_the_mixed_sample_is_spelled_as_before() -> None:
    for n, raw in enumerate(mixed_items(1500, bad=0).lines):
        decision = decide(raw, Source("t", 0, n), SETTINGS, lambda _: None)
        if decision.item is not None:
            assert accepted_for(decision) == _spelled_by_model_dump_json(decision), raw
