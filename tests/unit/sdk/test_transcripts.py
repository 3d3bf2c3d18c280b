"""OpenAI-style transcripts (recorded, no network): each tool call recorded into the turn
through the served bindings and types, the reply checked; the tools are never called."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from turnstream.errors import TurnstreamError
from turnstream.sdk import Conversation
from turnstream.sdk.transcripts import record_openai_messages

from .test_served_profile import _profile

NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
HERE = Path(__file__).parent / "transcripts"


def _load(name: str) -> dict[str, Any]:
    return json.loads((HERE / name).read_text(encoding="utf-8"))


def _turn(transcript: dict[str, Any], profile: dict[str, Any] | None = None) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    conversation = Conversation(
        space="acme", source="web", agent="sales-assistant",
        handle={"type": "phone_e164", "value": "+5511900005678"}, conversation_id="oa-1",
        profile=profile or _profile(), recorder=records.append, context="chat", now=lambda: NOW,
    )  # fmt: skip
    with conversation.turn(language=transcript["language"]) as frame:
        reply = record_openai_messages(transcript["messages"])
        assert reply is not None
        conversation.agent(reply)
        calls = [(c.evidence.id, c.evidence.tool, dict(c.args or {})) for c in frame.calls]
    [record] = records
    return record | {"calls": calls}


def test_an_english_transcript_s_call_is_evidence_and_its_reply_is_checked() -> None:
    record = _turn(_load("en_shop.json"))
    assert record["calls"] == [
        ("call_9xQ2mZ", "search_products", {"query": "city flex", "size": "42"})
    ]
    got = [(c["category"], c["value"], c["verdict"]) for c in record["claims"]]
    assert got == [("price", "129.99", "mismatch"), ("stock", "3", "matched")]
    price = record["claims"][0]["evidence"]
    assert price["call"] == "call_9xQ2mZ" and price["expected"] == "99.90"


def test_parallel_calls_text_parts_and_an_unbound_tool() -> None:
    record = _turn(_load("pt_shop.json"))
    assert [c[:2] for c in record["calls"]] == [
        ("call_A1", "search_products"),
        ("call_A2", "reserve_item"),  # not bound: recorded, no values
    ]
    got = [(c["category"], c["verdict"]) for c in record["claims"]]
    assert got == [("price", "matched"), ("action_promise", "matched")]


def test_objects_with_model_dump_are_read_like_dicts() -> None:
    class Message:
        def __init__(self, data: dict[str, Any]) -> None:
            self.data = data

        def model_dump(self) -> dict[str, Any]:
            return self.data

    transcript = _load("en_shop.json")
    transcript["messages"] = [Message(m) for m in transcript["messages"]]
    assert _turn(transcript)["claims"][0]["verdict"] == "mismatch"


def test_a_bound_tool_without_types_is_refused_as_for_a_bound_call() -> None:
    with pytest.raises(TurnstreamError, match="no object types"):
        _turn(_load("en_shop.json"), _profile(types=None))


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ([{"role": "tool", "content": "x"}], r"messages\.0\.tool_call_id: required"),
        ([{"role": "assistant", "tool_calls": [{"id": "c", "function": {}}]}],
         r"messages\.0\.tool_calls\.0\.function\.name: required"),
        (["not a message"], "a dict or has model_dump"),
    ],
)  # fmt: skip
def test_a_broken_transcript_names_the_message(messages: list[Any], says: str) -> None:
    conversation = Conversation(space="acme", source="web", agent="a", profile_id="p",
                                recorder=lambda r: None)  # fmt: skip
    with pytest.raises(TurnstreamError, match=says), conversation.turn():
        record_openai_messages(messages)


def test_outside_a_turn_it_says_where_it_belongs() -> None:
    with pytest.raises(TurnstreamError, match=r"inside conversation\.turn"):
        record_openai_messages([])
