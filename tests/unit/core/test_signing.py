"""Producers bound to their space: the signature rule and the ingest gate that applies it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from turnstream.config import Settings
from turnstream.core.ingest import Gate, Reason, Source, dedup_key_for, judge
from turnstream.core.signing import HEADER, PREFIX, sign, signature_in, verify

A_KEY = b"producer-key-of-space-a-0001"
A_OLD = b"producer-key-of-space-a-0000"
A_ERASE = b"erase-key-of-space-a-00000001"
B_KEY = b"producer-key-of-space-b-0001"

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret-identity"},
        "spaces": {
            "a": {
                "features": ["signals", "turns"],
                "producer_keys": [A_KEY.decode(), A_OLD.decode()],
                "erase_keys": [A_ERASE.decode()],
            },
            "b": {"features": ["signals", "turns"], "producer_keys": [B_KEY.decode()]},
            "open": {"features": ["signals", "turns"]},
        },
    }
)
SRC = Source("turnstream.commands", 0, 7)


def _item(space: str, **changes: Any) -> bytes:
    item = {
        "type": "command",
        "space_id": space,
        "idempotency_key": "cmd-1",
        "profile_id": "p_1",
        "source": "crm",
        "occurred_at": "2026-09-29T14:02:11Z",
        "command": "opt_out",
    }
    item.update(changes)
    return json.dumps(item).encode()


def _erase(space: str) -> bytes:
    return _item(space, command="erase", idempotency_key="erase-1")


def test_a_signature_verifies_with_its_key_only() -> None:
    raw = _item("a")
    assert verify(raw, sign(raw, A_KEY), [A_KEY])
    assert not verify(raw, sign(raw, B_KEY), [A_KEY])
    assert not verify(raw + b" ", sign(raw, A_KEY), [A_KEY])  # a byte added after signing


@pytest.mark.parametrize(
    "signature",
    [b"", PREFIX, b"v2:" + b"\0" * 32, PREFIX + b"\0" * 31, PREFIX + b"\0" * 33, b"x" * 10_000],
)
def test_malformed_signatures_never_verify(signature: bytes) -> None:
    assert not verify(b"{}", signature, [A_KEY])


def test_the_signature_is_found_among_the_headers() -> None:
    assert signature_in(None) is None
    assert signature_in([("other", b"x")]) is None
    assert signature_in([("other", b"x"), (HEADER, b"sig"), (HEADER, b"second")]) == b"sig"
    assert signature_in([(HEADER, None)]) is None  # type: ignore[list-item]


def test_a_record_signed_with_its_space_s_key_is_accepted() -> None:
    raw = _item("a")
    decision = judge(raw, SRC, SETTINGS, signature=sign(raw, A_KEY))
    assert decision.item is not None and decision.refusal is None


def test_an_older_key_still_verifies_during_a_rotation() -> None:
    raw = _item("a")
    assert judge(raw, SRC, SETTINGS, signature=sign(raw, A_OLD)).refusal is None


def test_space_a_s_key_cannot_land_an_item_in_space_b() -> None:
    raw = _item("b")
    decision = judge(raw, SRC, SETTINGS, signature=sign(raw, A_KEY))
    assert decision.item is None
    assert decision.refusal is not None and decision.refusal.reason is Reason.bad_signature
    # The digest of the bytes, not b's idempotency key: the real item still lands.
    assert decision.dedup_key == dedup_key_for(None, raw)


def test_an_unsigned_record_of_a_keyed_space_is_refused_and_an_open_space_takes_it() -> None:
    refused = judge(_item("a"), SRC, SETTINGS)
    assert refused.refusal is not None and refused.refusal.reason is Reason.unsigned
    assert refused.item is None
    assert judge(_item("open"), SRC, SETTINGS).refusal is None


def test_an_erase_needs_the_erase_key_not_a_producer_key() -> None:
    raw = _erase("a")
    by_producer = judge(raw, SRC, SETTINGS, signature=sign(raw, A_KEY))
    assert by_producer.refusal is not None
    assert by_producer.refusal.reason is Reason.bad_signature
    assert "erase key" in by_producer.refusal.message
    assert judge(raw, SRC, SETTINGS, signature=sign(raw, A_ERASE)).refusal is None


def test_an_erase_key_signs_no_ordinary_item() -> None:
    raw = _item("a")
    decision = judge(raw, SRC, SETTINGS, signature=sign(raw, A_ERASE))
    assert decision.refusal is not None and decision.refusal.reason is Reason.bad_signature


def test_a_space_with_producer_keys_and_no_erase_keys_takes_no_erase() -> None:
    raw = _erase("b")
    decision = judge(raw, SRC, SETTINGS, signature=sign(raw, B_KEY))
    assert decision.refusal is not None and decision.refusal.reason is Reason.unsigned
    assert decision.refusal.field_path == "command"


def test_a_signature_is_checked_before_the_features() -> None:
    # An unsigned interaction of a keyed space is unsigned, whatever else is wrong with it.
    raw = _item("a", type="turn", turn_id="t", agent="x")
    assert judge(raw, SRC, SETTINGS).refusal.reason is Reason.unsigned  # type: ignore[union-attr]


def test_a_replay_gate_takes_unsigned_items() -> None:
    gate = Gate(SETTINGS, signed=False)
    assert judge(_erase("a"), SRC, SETTINGS, gate).refusal is None
