"""Every wire rule of WIRE.md: what parses, and the exact field path of what does not."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import ValidationError

from turnstream.errors import InvalidItem
from turnstream.models import (
    Command,
    InteractionItem,
    Outcome,
    Turn,
    Verdict,
    parse_item,
)
from turnstream.models.common import UINT16_MAX, UINT32_MAX
from turnstream.models.interactions import INTERACTION_KINDS
from turnstream.models.items import MAX_ITEM_BYTES, PATH_NAME_MAX, error_pairs
from turnstream.models.requests import ConstraintsRequest

EXPOSURE_ID = "0190f5a2-7b3c-7def-8123-456789abcdef"  # a UUIDv7
UUID4 = "6ba7b810-9dad-41d1-80b4-00c04fd430c8"
PHONE = "+5511900005678"

ENVELOPE: dict[str, Any] = {
    "space_id": "acme",
    "idempotency_key": "k-1",
    "handle": {"type": "phone_e164", "value": PHONE},
    "source": "whatsapp",
    "conversation_id": "wa-8812",
    "occurred_at": "2026-09-29T14:02:11Z",
}
PREFERENCE: dict[str, Any] = {
    "kind": "preference",
    "attr": "item_variant.color",
    "op": "not_in",
    "values": ["black"],
    "strength": "must_not",
    "source": "stated",
}
PRESENTED: dict[str, Any] = {
    "kind": "presented",
    "exposure_id": EXPOSURE_ID,
    "list_id": "search-1",
    "list_kind": "search",
    "delivered_at": "2026-09-29T14:02:10Z",
    "visible_k": 3,
    "items": [
        {"pos": 1, "ref": "item_variant:acme:991", "shown": {"price_sale": 199.9}},
        {"pos": 2, "ref": "item_variant:acme:992", "shown": {"price_sale": 149.9}},
    ],
}
CLAIM: dict[str, Any] = {
    "category": "price",
    "class": "money",
    "nature": "computed",
    "role": "price_sale",
    "span": [31, 38],
    "value": "199.90",
    "verdict": "matched",
    "action": "none",
    "evidence": {"kind": "value", "call": "c1", "field": "price"},
}
CONSTRAINT: dict[str, Any] = {
    "tool": "search_plans",
    "sent": 3,
    "results_checked": 12,
    "violations": 1,
    "unverifiable": 2,
    "relaxed": False,
}

#: One valid example of each interaction kind.
KINDS: dict[str, dict[str, Any]] = {
    "presented": PRESENTED,
    "seen": {"kind": "seen", "exposure_id": EXPOSURE_ID, "max_index_seen": 2},
    "engaged": {
        "kind": "engaged",
        "exposure_id": EXPOSURE_ID,
        "ref": "item_variant:acme:991",
        "pos": 1,
        "action": "cart",
    },
    "feedback": {
        "kind": "feedback",
        "ref": "item_variant:acme:991",
        "polarity": "dislike",
        "fields": ["color"],
        "reason": "too dark",
    },
    "preference": PREFERENCE,
    "attribute": {
        "kind": "attribute",
        "attr": "person.shoe_size",
        "value": 42,
        "system": "EU",
        "source": "stated",
    },
    "watch": {
        "kind": "watch",
        "condition": {"ref": "item_variant:acme:991", "price_below": 180},
        "consent_event": "consent-1",
    },
    "unwatch": {"kind": "unwatch", "watch_id": "w-1"},
}


def interaction(**interaction_fields: Any) -> dict[str, Any]:
    """A fresh valid interaction item; ``interaction_fields`` change its preference."""
    item = {"type": "interaction", **ENVELOPE, "interaction": PREFERENCE | interaction_fields}
    return copy.deepcopy(item)


def turn(**fields: Any) -> dict[str, Any]:
    item = {"type": "turn", **ENVELOPE, "turn_id": "t-1", "agent": "sales-assistant"} | fields
    return copy.deepcopy(item)


def outcome(**fields: Any) -> dict[str, Any]:
    base = {"type": "outcome", **ENVELOPE, "outcome": "purchase", "ref": "item_variant:acme:991"}
    return base | {"order_id": "o-1"} | fields


def command(**fields: Any) -> dict[str, Any]:
    return {"type": "command", **ENVELOPE, "command": "opt_out"} | fields


def without(item: dict[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != name}


def parse(item: dict[str, Any] | bytes) -> Any:
    return parse_item(item if isinstance(item, bytes) else json.dumps(item).encode())


def errors_of(item: dict[str, Any] | bytes) -> list[tuple[str, str]]:
    with pytest.raises(InvalidItem) as caught:
        parse(item)
    assert caught.value.errors, "InvalidItem without errors"
    return caught.value.errors


def assert_error(item: dict[str, Any] | bytes, path: str, message: str) -> None:
    """The item is refused with exactly one problem, at ``path``, saying ``message``."""
    errors = errors_of(item)
    assert len(errors) == 1, errors
    assert errors[0][0] == path, errors
    assert message in errors[0][1], errors


# ----------------------------------------------------------------------------- envelope


def test_unknown_item_type() -> None:
    assert_error(interaction() | {"type": "click"}, "type", "unknown type; expected one of")


def test_missing_type() -> None:
    assert_error(without(interaction(), "type"), "type", "Field required")


@pytest.mark.parametrize("name", ["source", "idempotency_key", "space_id", "occurred_at"])
def test_missing_envelope_field(name: str) -> None:
    assert_error(without(interaction(), name), name, "Field required")


def test_int_where_string() -> None:
    assert_error(interaction() | {"source": 5}, "source", "valid string")


def test_string_where_bool() -> None:
    assert_error(turn(guard_acted="true"), "guard_acted", "valid boolean")


def test_empty_idempotency_key() -> None:
    assert_error(interaction() | {"idempotency_key": ""}, "idempotency_key", "at least 1")


def test_space_id_shape() -> None:
    assert_error(interaction() | {"space_id": "Acme Store"}, "space_id", "should match pattern")


def test_time_without_zone() -> None:
    item = interaction() | {"occurred_at": "2026-09-29T14:02:11"}
    assert_error(item, "occurred_at", "timezone")


def test_integer_timestamp() -> None:
    assert_error(interaction() | {"occurred_at": 1790690531}, "occurred_at", "valid datetime")


@pytest.mark.parametrize("epoch", ["1790690531", "1790690531000"])
def test_epoch_in_a_string_is_not_rfc3339(epoch: str) -> None:
    # WIRE.md: "Times are RFC 3339 with a zone". A Unix epoch in a string is neither.
    assert_error(interaction() | {"occurred_at": epoch}, "occurred_at", "")


def test_naive_time_inside_an_interaction() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["delivered_at"] = "2026-09-29T14:02:10"
    assert_error(item, "interaction.delivered_at", "timezone")


def test_both_handle_and_profile_id() -> None:
    item = interaction() | {"profile_id": "p_1"}
    assert_error(item, "handle", "exactly one of handle and profile_id is required (both")


def test_neither_handle_nor_profile_id() -> None:
    item = without(interaction(), "handle")
    assert_error(item, "handle", "exactly one of handle and profile_id is required (neither")


def test_profile_id_alone_is_enough() -> None:
    item = parse(without(interaction(), "handle") | {"profile_id": "p_1"})
    assert item.profile_id == "p_1" and item.handle is None


@pytest.mark.parametrize(
    ("kind", "value", "message"),
    [
        ("phone_e164", "11 90000-5678", "not an E.164 phone number"),
        ("phone_e164", "+0123456789", "not an E.164 phone number"),
        ("email", "maria.silva.example.com", "not an e-mail address"),
        ("email", "maria silva@example.com", "not an e-mail address"),
    ],
)
def test_bad_handle_message_hides_the_value(kind: str, value: str, message: str) -> None:
    item = interaction() | {"handle": {"type": kind, "value": value}}
    with pytest.raises(InvalidItem) as caught:
        parse(item)
    assert caught.value.errors == [("handle.value", caught.value.errors[0][1])]
    assert message in caught.value.errors[0][1]
    assert value not in caught.value.errors[0][1]
    assert value not in str(caught.value)


def test_unknown_handle_type() -> None:
    item = interaction() | {"handle": {"type": "fax", "value": "1"}}
    assert_error(item, "handle.type", "'phone_e164', 'email' or 'external_id'")


def test_bad_for() -> None:
    assert_error(interaction() | {"for": "my-kid"}, "for", "should match pattern")


# ----------------------------------------------------------------------------- interactions


def test_unknown_interaction_kind() -> None:
    assert_error(interaction(kind="hovered"), "interaction.kind", "unknown kind; expected one of")


def test_missing_interaction_kind() -> None:
    item = interaction()
    del item["interaction"]["kind"]
    assert_error(item, "interaction.kind", "Field required")


@pytest.mark.parametrize("values", [[100], [100, 200, 300]])
def test_between_takes_two_values(values: list[int]) -> None:
    item = interaction(attr="item_variant.price_sale", op="between", values=values)
    message = f"between takes exactly two values (got {len(values)})"
    assert_error(item, "interaction.values", message)


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "lte", "gt", "gte"])
def test_single_value_ops_take_one(op: str) -> None:
    item = interaction(attr="item_variant.size", op=op, values=["M", "L"])
    assert_error(item, "interaction.values", f"{op} takes exactly one value")


def test_in_takes_at_least_one_value() -> None:
    assert_error(interaction(op="in", values=[]), "interaction.values", "at least 1")


def test_unknown_op() -> None:
    assert_error(interaction(op="like"), "interaction.op", "Input should be 'in'")


def test_attr_must_be_type_dot_field() -> None:
    assert_error(interaction(attr="color"), "interaction.attr", "should match pattern")


@pytest.mark.parametrize("pos", [0, -1])
def test_presented_pos_below_one(pos: int) -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["items"] = [{"pos": pos, "ref": "item_variant:acme:991"}]
    assert_error(item, "interaction.items[0].pos", "greater than or equal to 1")


def test_presented_pos_in_a_later_item() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["items"][1]["pos"] = 0
    assert_error(item, "interaction.items[1].pos", "greater than or equal to 1")


def test_duplicate_pos_in_one_page() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["items"][1]["pos"] = 1
    assert_error(item, "interaction.items", "each pos may appear once in a page")


def test_presented_needs_items() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["items"] = []
    assert_error(item, "interaction.items", "at least 1")


def test_exposure_id_must_be_uuid7() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["exposure_id"] = UUID4
    assert_error(item, "interaction.exposure_id", "must be a UUIDv7 (got version 4)")


def test_exposure_id_must_be_a_uuid() -> None:
    seen = interaction() | {"interaction": KINDS["seen"] | {"exposure_id": "x"}}
    assert_error(seen, "interaction.exposure_id", "must be a UUID")


def test_seen_max_index_from_one() -> None:
    item = interaction() | {"interaction": KINDS["seen"] | {"max_index_seen": 0}}
    assert_error(item, "interaction.max_index_seen", "greater than or equal to 1")


def test_unknown_engaged_action() -> None:
    item = interaction() | {"interaction": KINDS["engaged"] | {"action": "hover"}}
    assert_error(item, "interaction.action", "Input should be 'click'")


def test_pos_must_be_an_integer_not_a_bool() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["items"][0]["pos"] = True
    assert_error(item, "interaction.items[0].pos", "valid integer")


# ----------------------------------------------------------------------------- turns


def test_unknown_claim_verdict() -> None:
    item = turn(claims=[CLAIM | {"verdict": "plausible"}])
    assert_error(item, "claims[0].verdict", "Input should be 'matched'")


def test_unknown_claim_class_uses_the_wire_name() -> None:
    assert_error(turn(claims=[CLAIM | {"class": "weight"}]), "claims[0].class", "'money'")


def test_claim_span_order() -> None:
    item = turn(claims=[CLAIM, CLAIM | {"span": [38, 31]}])
    assert_error(item, "claims[1].span", "start must not be after end")


def test_interaction_in_a_turn_has_no_kind_tag_in_its_path() -> None:
    bad = PREFERENCE | {"op": "between", "values": [1]}
    errors = errors_of(turn(interactions=[KINDS["seen"], bad]))
    assert errors == [("interactions[1].values", "between takes exactly two values (got 1)")]


def test_presented_in_a_turn_has_no_kind_tag_in_its_path() -> None:
    bad = copy.deepcopy(PRESENTED)
    bad["items"][0]["pos"] = 0
    path = errors_of(turn(interactions=[bad]))[0][0]
    assert path == "interactions[0].items[0].pos"
    assert not set(path.replace("[", ".").split(".")) & INTERACTION_KINDS


def test_unknown_kind_in_a_turn() -> None:
    item = turn(interactions=[{"kind": "hovered"}])
    assert_error(item, "interactions[0].kind", "unknown kind; expected one of")


def test_for_of_an_interaction_in_a_turn() -> None:
    item = turn(interactions=[PREFERENCE | {"for": "someone"}])
    assert_error(item, "interactions[0].for", "should match pattern")


def test_constraint_violations_within_results_checked() -> None:
    bad = CONSTRAINT | {"results_checked": 2, "violations": 2, "unverifiable": 1}
    item = turn(constraints=[bad])
    assert_error(
        item, "constraints[0].violations", "violations + unverifiable cannot exceed results_checked"
    )


def test_constraint_counts_not_negative() -> None:
    item = turn(constraints=[CONSTRAINT | {"violations": -1}])
    assert_error(item, "constraints[0].violations", "greater than or equal to 0")


@pytest.mark.parametrize("name", ["sent", "results_checked", "violations", "unverifiable"])
def test_constraint_counts_fit_the_store(name: str) -> None:
    # Past validation a count over UInt32 failed every write of its batch.
    at_limit = CONSTRAINT | {"results_checked": UINT32_MAX, name: UINT32_MAX}
    if name in ("violations", "unverifiable"):
        at_limit |= {"violations": 0, "unverifiable": 0, name: UINT32_MAX}
    assert parse(turn(constraints=[at_limit])).constraints[0].model_dump()[name] == UINT32_MAX
    over = CONSTRAINT | {name: 5_000_000_000}
    assert_error(turn(constraints=[over]), f"constraints[0].{name}", "less than or equal to")


def test_presented_page_and_positions_fit_the_store() -> None:
    item = interaction(**PRESENTED)
    item["interaction"]["page"] = UINT16_MAX
    item["interaction"]["items"][1]["pos"] = UINT32_MAX
    parsed = parse(item).interaction
    assert (parsed.page, parsed.items[1].pos) == (UINT16_MAX, UINT32_MAX)
    item["interaction"]["page"] = 70_000
    assert_error(item, "interaction.page", "less than or equal to 65535")
    item = interaction(**PRESENTED)
    item["interaction"]["items"][0]["pos"] = 2**40
    assert_error(item, "interaction.items[0].pos", "less than or equal to 4294967295")


@pytest.mark.parametrize(
    ("kind", "name"), [("seen", "max_index_seen"), ("engaged", "pos"), ("presented", "visible_k")]
)
def test_other_positions_fit_the_store(kind: str, name: str) -> None:
    item = interaction(**KINDS[kind])
    item["interaction"][name] = UINT32_MAX + 1
    assert_error(item, f"interaction.{name}", "less than or equal to 4294967295")


# ----------------------------------------------------------------------------- outcomes


@pytest.mark.parametrize(
    "token",
    [
        "nx1.bad",
        f"nx2.{EXPOSURE_ID}.3.abcdef0123456789",
        f"nx1.{UUID4}.3.abcdef0123456789",
        f"nx1.{EXPOSURE_ID}.0.abcdef0123456789",
        f"nx1.{EXPOSURE_ID}.3",
        "",
    ],
)
def test_a_malformed_exposure_token_keeps_the_outcome(token: str) -> None:
    # Issue 13: a token that fails keeps the outcome (token_status: malformed), it only
    # never attributes it; the ingest rule judges it (core/exposure_tokens).
    item = parse(outcome(exposure_token=token))
    assert isinstance(item, Outcome) and item.exposure_token == token


def test_an_exposure_token_past_256_characters_is_refused() -> None:
    assert_error(
        outcome(exposure_token="nx1." + "x" * 253), "exposure_token", "at most 256 characters"
    )
    assert_error(outcome(exposure_token=12), "exposure_token", "valid string")


def test_unknown_outcome() -> None:
    assert_error(outcome(outcome="refund"), "outcome", "'purchase', 'delivery'")


def test_outcome_needs_an_order() -> None:
    assert_error(without(outcome(), "order_id"), "order_id", "Field required")


def test_outcome_with_token_parses() -> None:
    token = f"nx1.{EXPOSURE_ID}.3.{'A' * 22}"
    item = parse(
        outcome(
            outcome="return",
            exposure_token=token,
            attrs={"size": "M"},
            reason="returned_for_size",
        )
    )
    assert isinstance(item, Outcome)
    assert item.exposure_token == token and item.attrs == {"size": "M"}


# ----------------------------------------------------------------------------- commands


@pytest.mark.parametrize("name", ["delete", "correct"])
def test_command_needs_inference_id(name: str) -> None:
    item = command(command=name, replacement=PREFERENCE if name == "correct" else None)
    assert_error(item, "inference_id", f"required for {name}")


def test_correct_needs_a_replacement() -> None:
    item = command(command="correct", inference_id="inf-1")
    assert_error(item, "replacement", "correct needs the stated preference or attribute")


def test_only_correct_takes_a_replacement() -> None:
    item = command(command="delete", inference_id="inf-1", replacement=PREFERENCE)
    assert_error(item, "replacement", "only correct takes one, not delete")


def test_replacement_is_checked_like_an_interaction() -> None:
    bad = PREFERENCE | {"op": "between"}
    item = command(command="correct", inference_id="inf-1", replacement=bad)
    assert_error(item, "replacement.values", "between takes exactly two values (got 1)")


def test_replacement_is_a_preference_or_attribute() -> None:
    item = command(command="correct", inference_id="inf-1", replacement=KINDS["seen"])
    expected = "unknown kind; expected one of 'preference', 'attribute'"
    assert_error(item, "replacement.kind", expected)


@pytest.mark.parametrize("name", ["opt_out", "erase"])
def test_commands_without_arguments(name: str) -> None:
    assert isinstance(parse(command(command=name)), Command)


def test_correct_parses() -> None:
    item = parse(command(command="correct", inference_id="inf-1", replacement=KINDS["attribute"]))
    assert isinstance(item, Command)
    assert item.replacement is not None and item.replacement.kind == "attribute"


# ----------------------------------------------------------------------------- bytes


def test_not_json() -> None:
    assert_error(b"turn acme k-1 2026-09-29", "<body>", "not valid JSON: not a JSON value")
    assert_error(b"<item/>", "<body>", "not valid JSON: a value was expected at line 1 column 1")


def test_truncated_json_names_the_field_it_ends_in() -> None:
    raw = json.dumps(turn()).encode()
    cut = raw[: raw.index(b'"agent"') + 12]  # inside the agent's name
    assert_error(cut, "agent", "not valid JSON: the text ends inside a string at line 1 column")


def test_json_but_not_an_object() -> None:
    assert_error(b"[]", "<body>", "object")


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_not_json(token: bytes) -> None:
    # WIRE.md: one JSON object per message. RFC 8259 JSON has no NaN or Infinity.
    raw = json.dumps(interaction(**PRESENTED)).encode().replace(b"199.9", token)
    assert token in raw
    errors_of(raw)  # refused, whichever path the fix names


def test_invalid_utf8() -> None:
    raw = json.dumps(interaction()).encode().replace(b"wa-8812", b"wa-\xff\xfe")
    assert_error(raw, "conversation_id", "not valid UTF-8 (byte")


def test_item_larger_than_the_limit() -> None:
    raw = json.dumps(interaction() | {"pad": ""}).encode()
    raw = raw[:-2] + b"x" * (MAX_ITEM_BYTES + 1 - len(raw)) + raw[-2:]
    assert len(raw) == MAX_ITEM_BYTES + 1
    assert_error(raw, "<body>", f"limit is {MAX_ITEM_BYTES}")


def test_item_at_the_limit_parses() -> None:
    raw = json.dumps(interaction() | {"pad": ""}).encode()
    raw = raw[:-2] + b"x" * (MAX_ITEM_BYTES - len(raw)) + raw[-2:]
    assert len(raw) == MAX_ITEM_BYTES
    assert isinstance(parse(raw), InteractionItem)


@pytest.mark.parametrize("where", ["bare", "in_a_field"])
def test_deep_nesting_is_invalid_not_a_recursion_error(where: str) -> None:
    nested = b"[" * 10_000 + b"]" * 10_000
    if where == "bare":
        raw = nested
    else:
        raw = json.dumps(turn(claims=[CLAIM | {"evidence": "@"}])).encode()
        raw = raw.replace(b'"@"', b'{"x":' + nested + b"}")
    errors = errors_of(raw)  # pytest.raises(InvalidItem): a RecursionError fails the test
    # The nearest path, cut (10,000 levels of [0] would be 30,000 characters).
    path, message = errors[0]
    assert path.startswith("[0][0]" if where == "bare" else "claims[0].evidence.x[0][0]")
    assert len(path) <= 129 and message.startswith("not valid JSON: nested too deep at line 1")


# ----------------------------------------------------------------------------- valid items


WIRE_EXAMPLE = b"""
{"type": "interaction", "space_id": "acme", "idempotency_key": "pref-8812-1",
 "handle": {"type": "phone_e164", "value": "+5511900005678"}, "source": "whatsapp",
 "conversation_id": "wa-8812", "occurred_at": "2026-09-29T14:02:11Z",
 "interaction": {"kind": "preference", "attr": "item_variant.color", "op": "not_in",
                 "values": ["black"], "strength": "must_not", "source": "stated"}}
"""


def test_the_wire_example_parses() -> None:
    item = parse(WIRE_EXAMPLE)
    assert isinstance(item, InteractionItem)
    assert item.interaction.kind == "preference"
    assert item.interaction.values == ["black"]
    assert item.interaction.scope == "session"
    assert item.for_ == "self"
    assert item.occurred_at.utcoffset() is not None


def test_every_kind_is_covered() -> None:
    assert set(KINDS) == INTERACTION_KINDS


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_parses_as_a_batch_item(kind: str) -> None:
    item = parse({"type": "interaction", **ENVELOPE, "interaction": KINDS[kind]})
    assert isinstance(item, InteractionItem)
    assert item.interaction.kind == kind


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_parses_inside_a_turn(kind: str) -> None:
    item = parse(turn(interactions=[KINDS[kind] | {"for": "beneficiary:kid-1"}]))
    assert isinstance(item, Turn)
    assert item.interactions[0].kind == kind
    assert item.interactions[0].for_ == "beneficiary:kid-1"


def test_presented_defaults() -> None:
    item = parse(interaction(**PRESENTED))
    assert item.interaction.page == 1 and item.interaction.method == "bridge"


def test_turn_with_claims_constraints_experiment() -> None:
    item = parse(
        turn(
            build="b-1",
            contract_version="c3",
            claims=[CLAIM, CLAIM | {"class": None, "verdict": "unsupported", "span": None}],
            constraints=[CONSTRAINT],
            experiment={"id": "ranker", "arm": "B"},
            interactions=[PREFERENCE],
        )
    )
    assert isinstance(item, Turn)
    assert item.claims[0].verdict is Verdict.matched
    assert item.claims[0].class_ == "money"
    assert item.claims[0].span == (31, 38)
    assert item.claims[1].class_ is None
    assert item.constraints[0].violations == 1 and item.constraints[0].relaxed is False
    assert item.experiment is not None and item.experiment.arm == "B"
    assert item.guard_acted is False and item.guard_budget_exceeded is False


def test_session_defaults_to_conversation() -> None:
    assert parse(interaction()).session == "wa-8812"
    assert parse(interaction() | {"session_id": "s-1"}).session == "s-1"
    assert parse(without(interaction(), "conversation_id")).session is None


def test_unknown_fields_are_accepted() -> None:
    item = turn(sdk="py-1.4", claims=[CLAIM | {"confidence": 0.9}])
    item["interactions"] = [PREFERENCE | {"ui": {"chip": True}}]
    parsed = parse(item)
    assert isinstance(parsed, Turn)
    assert parsed.claims[0].verdict is Verdict.matched


def test_gift_and_beneficiary() -> None:
    assert parse(interaction() | {"for": "gift"}).for_ == "gift"
    assert parse(interaction() | {"for": "beneficiary:kid-1"}).for_ == "beneficiary:kid-1"


def test_other_zones_are_accepted() -> None:
    item = parse(interaction() | {"occurred_at": "2026-09-29T11:02:11-03:00"})
    assert item.occurred_at.utcoffset() is not None
    assert item.occurred_at == parse(interaction()).occurred_at


def test_an_error_path_never_carries_a_made_up_key_back_whole() -> None:
    """A 10,000-character key the sender made up is cut in the error's field path (the
    422 answer, a dead letter's reason), which still says where the problem is."""
    with pytest.raises(ValidationError) as caught:
        ConstraintsRequest(
            space_id="acme", profile_id="p1", current={"item_variant:acme:1": {"f" * 10_000: 1}}
        )
    [(path, message)] = error_pairs(caught.value)
    assert path == "current.item_variant:acme:1." + "f" * PATH_NAME_MAX + "….[key]"
    assert "128" in message
