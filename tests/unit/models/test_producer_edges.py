"""A hostile or sloppy producer at the contract's edges: each value is accepted as sent
or refused with its field path, and a refusal never repeats the input (a dead letter's
message reaches the store's ``dead_letters`` table)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from tests.unit.models.builders import interaction_item
from turnstream.config import Settings
from turnstream.core.ingest import Reason, Source, judge
from turnstream.core.rows import rows_for
from turnstream.errors import InvalidItem
from turnstream.models import parse_item

PHONE = "+5511900005678"
EMAIL = "maria.souza@example.com"
NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)
SETTINGS = Settings.model_validate(
    {"identity": {"secret": "s"}, "spaces": {"acme": {"features": ["signals", "turns"]}}}
)
EXPOSURE_ID = "0190f5a2-7b3c-7def-8123-456789abcdef"
#: An integer no double holds (a JSON number of 400 digits): the read side compares
#: values as doubles, and ``float()`` of it raises ``OverflowError``.
HUGE = 10**400


def _item(**fields: Any) -> dict[str, Any]:
    return interaction_item() | fields


def _errors(item: dict[str, Any] | bytes) -> list[tuple[str, str]]:
    raw = item if isinstance(item, bytes) else json.dumps(item).encode()
    with pytest.raises(InvalidItem) as caught:
        parse_item(raw)
    return caught.value.errors


# ------------------------------------------------------------ a handle where a tag goes


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"type": EMAIL}, "type"),
        ({"type": PHONE}, "type"),
        ({"interaction": {"kind": EMAIL, "ref": "item:1"}}, "interaction.kind"),
        ({"interaction": {"kind": [PHONE], "ref": "item:1"}}, "interaction.kind"),
        (
            {"type": "turn", "turn_id": "t", "agent": "a", "interactions": [{"kind": EMAIL}]},
            "interactions[0].kind",
        ),
        (
            {
                "type": "command",
                "command": "correct",
                "inference_id": "i",
                "replacement": {"kind": {"phone": PHONE}},
            },
            "replacement.kind",
        ),
    ],
)
def test_an_unknown_tag_is_refused_without_repeating_it(fields: dict[str, Any], path: str) -> None:
    [(where, message)] = _errors(_item(**fields))
    assert where == path
    assert "expected one of" in message
    assert EMAIL not in message and "5511900005678" not in message


def test_the_dead_letter_row_of_an_unknown_tag_holds_no_handle() -> None:
    raw = json.dumps(_item(type=EMAIL, interaction={"kind": PHONE})).encode()
    decision = judge(raw, Source("t", 0, 1), SETTINGS, now=NOW)
    assert decision.refusal is not None and decision.refusal.reason is Reason.invalid
    rows = rows_for(decision, SETTINGS, NOW)
    assert sorted(rows) == ["dead_letters", "idempotency_keys"]
    assert EMAIL not in repr(rows) and "5511900005678" not in repr(rows)


# ------------------------------------------------------------ zones


@pytest.mark.parametrize("zone", ["+00:60", "+05:75", "-00:99", "+23:60"])
@pytest.mark.parametrize("field", ["occurred_at", "delivered_at"])
def test_a_zone_with_minutes_past_59_is_refused_not_read_as_another_hour(
    zone: str, field: str
) -> None:
    at = f"2026-12-04T11:00:00{zone}"
    if field == "occurred_at":
        item, path = _item(occurred_at=at), "occurred_at"
    else:
        presented = {
            "kind": "presented",
            "exposure_id": EXPOSURE_ID,
            "list_id": "l",
            "list_kind": "search",
            "delivered_at": at,
            "visible_k": 1,
            "items": [{"pos": 1, "ref": "item:1"}],
        }
        item, path = _item(interaction=presented), "interaction.delivered_at"
    [(where, message)] = _errors(item)
    assert where == path
    assert "zone" in message


@pytest.mark.parametrize("zone", ["+14:00", "-12:00", "+05:45", "+23:59", "-00:00", "Z", "+00:00"])
def test_every_real_zone_is_read_at_its_instant(zone: str) -> None:
    item = parse_item(json.dumps(_item(occurred_at=f"2026-12-04T11:00:00{zone}")).encode())
    hours, minutes = (0, 0) if zone == "Z" else (int(zone[1:3]), int(zone[4:6]))
    sign = -1 if zone.startswith("-") else 1
    offset = sign * (hours * 3600 + minutes * 60)
    assert item.occurred_at.utcoffset().total_seconds() == offset  # type: ignore[union-attr]


# ------------------------------------------------------------ numbers no double holds


@pytest.mark.parametrize(
    ("interaction", "path"),
    [
        (
            {
                "kind": "preference",
                "attr": "item.price",
                "op": "lt",
                "values": [HUGE],
                "strength": "must",
                "source": "stated",
            },
            "interaction.values[0]",
        ),
        (
            {"kind": "attribute", "attr": "person.size", "value": -HUGE, "source": "stated"},
            "interaction.value",
        ),
        (
            {
                "kind": "presented",
                "exposure_id": EXPOSURE_ID,
                "list_id": "l",
                "list_kind": "search",
                "delivered_at": "2026-12-04T11:00:00Z",
                "visible_k": 1,
                "items": [{"pos": 1, "ref": "item:1", "shown": {"price": HUGE}}],
            },
            "interaction.items[0].shown.price",
        ),
        (
            {"kind": "watch", "condition": {"below": {"price": [HUGE]}}, "consent_event": "c"},
            "interaction.condition",
        ),
    ],
)
def test_an_integer_past_a_double_is_refused_as_1e309_is(
    interaction: dict[str, Any], path: str
) -> None:
    [(where, message)] = _errors(_item(interaction=interaction))
    assert where == path
    assert "finite number" in message


def test_an_outcome_attr_past_a_double_is_refused() -> None:
    outcome = _item(type="outcome", outcome="purchase", ref="item:1", order_id="o")
    outcome["attrs"] = {"n": HUGE}
    [(where, message)] = _errors(outcome)
    assert where == "attrs.n"
    assert "finite number" in message


@pytest.mark.parametrize(
    "value", [2**63, 2**64, -(2**63) - 1, 2**1023, int(1.7976931348623157e308)]
)
def test_an_integer_a_double_holds_is_kept_exactly(value: int) -> None:
    attribute = {"kind": "attribute", "attr": "person.size", "value": value, "source": "stated"}
    item = parse_item(json.dumps(_item(interaction=attribute)).encode())
    assert item.interaction.value == value  # type: ignore[union-attr]


# ------------------------------------------------------------ a byte order mark


def test_a_byte_order_mark_is_named_as_such() -> None:
    raw = b"\xef\xbb\xbf" + json.dumps(_item()).encode()
    [(where, message)] = _errors(raw)
    assert where == "<body>"
    assert "byte order mark" in message


@pytest.mark.parametrize(
    "value",
    ["maria\u200b@example.com", "\ufeffmaria@example.com", "maria@exam\x00ple.com",
     "maria@example.com\u200e", "ma\u00adria@example.com", "maria@example.\x7fcom"],
)  # fmt: skip
def test_an_email_with_an_invisible_or_control_character_is_refused(value: str) -> None:
    item = _item(profile_id=None, handle={"type": "email", "value": value})
    [(where, message)] = _errors(item)
    assert where == "handle.value"
    assert message == "not an e-mail address"


@pytest.mark.parametrize("value", ["maría.núñez@ejemplo.es", "ユーザー@例え.jp", "user+tag@x.io"])
def test_an_email_in_any_script_is_a_handle(value: str) -> None:
    parse_item(
        json.dumps(_item(profile_id=None, handle={"type": "email", "value": value})).encode()
    )
