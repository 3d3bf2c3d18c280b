"""Signal events from the accepted items the worker fans out."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.unit.core.derivation.builders import CONFIG, E1, fold_all
from turnstream.core.derivation import SignalEvent, events_from_accepted
from turnstream.models import parse_item

ENVELOPE: dict[str, Any] = {
    "space_id": "acme",
    "idempotency_key": "k-1",
    "handle": {"type": "phone_e164", "value": "+5511900005678"},
    "source": "whatsapp",
    "conversation_id": "wa-8812",
    "occurred_at": "2026-09-29T14:02:11-03:00",
}
PRESENTED: dict[str, Any] = {
    "kind": "presented",
    "exposure_id": E1,
    "list_id": "results-1",
    "list_kind": "search_products",
    "delivered_at": "2026-09-29T14:02:10-03:00",
    "visible_k": 1,
    "items": [
        {"pos": 1, "ref": "item_variant:acme:991", "shown": {"color": "red"}},
        {"pos": 2, "ref": "item_variant:acme:992", "shown": {"color": "blue"}},
    ],
}


def accepted(item: dict[str, Any]) -> dict[str, Any]:
    """What the worker fans out: the validated item as JSON, without handle, with profile."""
    model = parse_item(json.dumps(item).encode())
    body = model.model_dump(mode="json", by_alias=True, exclude={"handle"})
    body["profile_id"] = "p1"
    return json.loads(json.dumps(body))


def test_a_batch_interaction_gives_one_event_in_the_items_bucket() -> None:
    message = accepted({**ENVELOPE, "type": "interaction", "for": "gift", "interaction": PRESENTED})
    [event] = events_from_accepted(message)
    assert (event.kind, event.name, event.for_, event.idempotency_key) == (
        "interaction",
        "presented",
        "gift",
        "k-1",
    )
    assert (event.space_id, event.profile_id, event.session) == ("acme", "p1", "wa-8812")
    assert event.occurred_at == datetime(2026, 9, 29, 17, 2, 11, tzinfo=UTC)
    assert event.payload["items"][1]["shown"] == {"color": "blue"}
    assert "for" not in event.payload


def test_a_batch_interaction_defaults_to_self() -> None:
    message = accepted({**ENVELOPE, "type": "interaction", "interaction": PRESENTED})
    assert [e.for_ for e in events_from_accepted(message)] == ["self"]


def test_a_turn_gives_one_event_per_interaction_in_its_own_bucket() -> None:
    message = accepted(
        {
            **ENVELOPE,
            "type": "turn",
            "session_id": "sess-9",
            "turn_id": "t-1",
            "agent": "seller",
            "interactions": [
                PRESENTED,
                {"kind": "seen", "exposure_id": E1, "max_index_seen": 2, "for": "beneficiary:kid"},
                {
                    "kind": "engaged",
                    "ref": "item_variant:acme:992",
                    "action": "cart",
                    "for": "gift",
                },
            ],
            "claims": [
                {"category": "price", "nature": "quoted", "verdict": "matched", "action": "none"}
            ],
            "constraints": [
                {
                    "tool": "search",
                    "sent": 1,
                    "results_checked": 2,
                    "violations": 0,
                    "unverifiable": 0,
                }
            ],
        }
    )
    events = events_from_accepted(message)
    assert [(e.idempotency_key, e.name, e.for_) for e in events] == [
        ("k-1#0", "presented", "self"),
        ("k-1#1", "seen", "beneficiary:kid"),
        ("k-1#2", "engaged", "gift"),
    ]
    assert {e.session for e in events} == {"sess-9"}


def test_a_turn_without_interactions_gives_nothing() -> None:
    message = accepted({**ENVELOPE, "type": "turn", "turn_id": "t-1", "agent": "seller"})
    assert events_from_accepted(message) == []


def test_an_outcome_gives_one_event_with_its_fields() -> None:
    message = accepted(
        {
            **ENVELOPE,
            "type": "outcome",
            "outcome": "return",
            "ref": "item_variant:acme:991",
            "order_id": "o-1",
            "attrs": {"size": "M"},
            "reason": "returned_for_size",
        }
    )
    [event] = events_from_accepted(message)
    assert (event.kind, event.name, event.for_) == ("outcome", "outcome", "self")
    assert event.payload == {
        "outcome": "return",
        "ref": "item_variant:acme:991",
        "order_id": "o-1",
        "exposure_token": None,
        "attrs": {"size": "M"},
        "reason": "returned_for_size",
        "for": None,
    }


def test_an_outcome_keeps_its_for() -> None:
    message = accepted(
        {
            **ENVELOPE,
            "type": "outcome",
            "outcome": "purchase",
            "ref": "item_variant:acme:991",
            "order_id": "o-1",
            "for": "beneficiary:kid",
        }
    )
    [event] = events_from_accepted(message)
    assert event.for_ == "beneficiary:kid"
    assert event.payload["for"] == "beneficiary:kid"


def test_a_command_gives_one_event() -> None:
    message = accepted(
        {**ENVELOPE, "type": "command", "command": "delete", "inference_id": "inf_abc"}
    )
    [event] = events_from_accepted(message)
    assert (event.kind, event.name, event.payload["inference_id"]) == (
        "command",
        "delete",
        "inf_abc",
    )


@pytest.mark.parametrize(
    ("ids", "session"),
    [
        ({"session_id": "s", "conversation_id": "c"}, "s"),
        ({"conversation_id": "c"}, "c"),
        ({}, "-"),
    ],
)
def test_the_session_falls_back_to_the_conversation_then_a_dash(
    ids: dict[str, str], session: str
) -> None:
    envelope = {k: v for k, v in ENVELOPE.items() if k != "conversation_id"}
    message = accepted({**envelope, **ids, "type": "interaction", "interaction": PRESENTED})
    assert events_from_accepted(message)[0].session == session


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="not an accepted item type"):
        events_from_accepted({"type": "telegram", "idempotency_key": "k"})


def test_an_event_round_trips_through_json() -> None:
    message = accepted({**ENVELOPE, "type": "interaction", "interaction": PRESENTED})
    [event] = events_from_accepted(message)
    assert SignalEvent.from_dict(json.loads(json.dumps(event.to_dict()))) == event


def test_accepted_items_fold_into_exposures() -> None:
    seen = {"kind": "seen", "exposure_id": E1, "max_index_seen": 2}
    events = [
        *events_from_accepted(
            accepted({**ENVELOPE, "type": "interaction", "interaction": PRESENTED})
        ),
        *events_from_accepted(
            accepted(
                {**ENVELOPE, "idempotency_key": "k-2", "type": "interaction", "interaction": seen}
            )
        ),
    ]
    state = fold_all(events, CONFIG)
    assert [(e.pos, e.ref, e.delivered_at) for e in state.exposures("self")] == [
        (1, "item_variant:acme:991", datetime(2026, 9, 29, 17, 2, 10, tzinfo=UTC)),
        (2, "item_variant:acme:992", datetime(2026, 9, 29, 17, 2, 10, tzinfo=UTC)),
    ]
