"""The served profile is all an agent needs: ``Conversation(profile=...)`` takes the
contract, the object types and the tool bindings ``GET /v1/sdk/profile`` serves; a bound
tool's results become the claims' evidence through them (stock included); what is missing
is a clear error, never a silent ``unsupported``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from turnstream.core.constraints import parse_bindings
from turnstream.core.constraints.bindings import profile_for
from turnstream.errors import TurnstreamError
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation, tool

NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
PHONE = {"type": "phone_e164", "value": "+5511900005678"}
CONTRACT = json.loads(Path("examples/claims/retail.json").read_text(encoding="utf-8"))
TYPES = load_types("examples/types.toml").model_dump(mode="json", by_alias=True)
BINDING = {
    "tool": "search_products",
    "args": [{"attr": "item_variant.size", "param": "size"}],
    "results": {"path": "$.items", "type": "item_variant", "namespace": "acme", "id": "sku",
                "fields": {"price_sale": "price"}},
}  # fmt: skip
ITEMS = [
    {"sku": "ar-1", "name": "Aero Runner", "price": 129.99, "stock": 7},
    {"sku": "cf-2", "name": "City Flex", "price": 99.90, "stock": 3},
]


@tool("search_products")
def search_products(query: str = "", size: str | None = None) -> dict[str, Any]:
    return {"items": [dict(i) for i in ITEMS]}


def _profile(**changes: Any) -> dict[str, Any]:
    served = profile_for("acme", "web", parse_bindings([BINDING]), CONTRACT, TYPES)
    served.update(changes)
    return json.loads(json.dumps(served))  # as it comes over HTTP


def _conversation(profile: dict[str, Any], records: list[dict[str, Any]]) -> Conversation:
    return Conversation(
        space="acme", source="web", agent="sales-assistant", handle=PHONE,
        conversation_id="web-1", profile=profile, recorder=records.append, language="en",
        context="chat", now=lambda: NOW,
    )  # fmt: skip


def _turn(profile: dict[str, Any], reply: str) -> dict[str, Any]:
    records: list[dict[str, Any]] = []
    conversation = _conversation(profile, records)
    with conversation.turn():
        search_products("shoes")
        conversation.agent(reply)
    [record] = records
    return record


def test_the_profile_s_contract_types_and_bindings_check_a_turn():
    record = _turn(_profile(), "The City Flex is now $129.99. Only 3 left in stock.")
    assert record["contract_version"] == CONTRACT["version"]
    got = [(c["category"], c["value"], c["verdict"]) for c in record["claims"]]
    assert got == [("price", "129.99", "mismatch"), ("stock", "3", "matched")]
    assert record["claims"][0]["evidence"]["object"] == "item_variant:acme:cf-2"
    assert record["claims"][0]["evidence"]["expected"] == "99.90"


def test_the_profile_s_contract_guards_inside_the_turn():
    records: list[dict[str, Any]] = []
    conversation = _conversation(_profile(), records)
    with conversation.turn():
        search_products("shoes")
        guarded = conversation.claims.guard_text("The City Flex is now $129.99.")
        conversation.agent(guarded.text)
    assert guarded.text == "The City Flex is now $99.90."
    assert records[0]["guard_acted"] is True


def test_code_wins_over_the_profile():
    conversation = _conversation(_profile(), [])
    assert conversation.contract is not None and conversation.types is not None
    plain = Conversation(
        space="acme", source="web", agent="a", handle=PHONE, profile=_profile(),
        contract=None, types=load_types("examples/types.toml"),
    )  # fmt: skip
    assert plain.contract is not None  # None means "not given": the profile's


def test_a_bound_tool_without_types_is_a_clear_error_before_the_call():
    conversation = _conversation(_profile(types=None), [])
    with conversation.turn(), pytest.raises(TurnstreamError, match="no object types"):
        search_products("shoes")


def test_a_results_type_the_types_do_not_declare_is_a_clear_error():
    bad = {**BINDING, "results": {**BINDING["results"], "type": "gadget"}}
    profile = _profile(tool_bindings=[bad])
    with _conversation(profile, []).turn(), pytest.raises(TurnstreamError, match="'gadget'"):
        search_products("shoes")


def test_without_a_contract_a_bound_tool_needs_no_types():
    profile = _profile(types=None, claim_contract=None, contract_version=None)
    record = _turn(profile, "The City Flex is now $129.99.")
    assert record["claims"] == [] and record.get("contract_version") is None


def test_a_served_version_without_its_contract_is_an_error():
    with pytest.raises(TurnstreamError, match="without claim_contract"):
        _conversation(_profile(claim_contract=None), [])


def test_a_bad_served_contract_names_its_field():
    broken = {**CONTRACT, "categories": [{**CONTRACT["categories"][0], "evidence": {}}]}
    with pytest.raises(TurnstreamError, match=r"claim_contract: .*categories\.0\.evidence"):
        _conversation(_profile(claim_contract=broken), [])


def test_no_contract_anywhere_says_how_to_give_one():
    conversation = _conversation(_profile(claim_contract=None, contract_version=None), [])
    with pytest.raises(TurnstreamError, match="contract=load_contract"):
        conversation.claims.check("It is $1.00.")


def test_evidence_recorded_by_hand_needs_no_types():
    records: list[dict[str, Any]] = []
    conversation = Conversation(
        space="acme", source="web", agent="sales-assistant", handle=PHONE,
        profile=_profile(types=None),
        recorder=records.append, language="en", context="chat", now=lambda: NOW,
        tool_evidence=False,
    )  # fmt: skip
    with conversation.turn() as frame:
        search_products("shoes")
        frame.record_call("lookup", [{"object": "item_variant:acme:cf-2", "field": "price_sale",
                                      "class": "money", "value": 99.9}])  # fmt: skip
        conversation.agent("It is now $99.90.")
    assert [c["verdict"] for c in records[0]["claims"]] == ["matched"]
