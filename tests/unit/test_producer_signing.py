"""The producer signs what it sends with its space's key (no broker: the header it would
send), and refuses to send an erase it could not sign."""

from __future__ import annotations

import json

import pytest

from turnstream.adapters.kafka.producer import Producer
from turnstream.config import Settings
from turnstream.core.signing import HEADER, verify
from turnstream.errors import TurnstreamError
from turnstream.models import parse_item

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "producer-test-secret"},
        "spaces": {
            "a": {"producer_keys": ["a-producer-key-0001", "a-producer-key-0000"],
                  "erase_keys": ["a-erase-key-00000001"]},
            "b": {"producer_keys": ["b-producer-key-0001"]},
            "open": {},
        },
    }
)  # fmt: skip


def _command(space: str, command: str) -> bytes:
    return json.dumps(
        {
            "type": "command",
            "space_id": space,
            "idempotency_key": "c-1",
            "profile_id": "p-1",
            "source": "crm",
            "occurred_at": "2026-11-29T10:00:00Z",
            "command": command,
        }
    ).encode()


def _header(raw: bytes) -> list[tuple[str, bytes]] | None:
    return Producer(SETTINGS)._signed(parse_item(raw), raw)


def test_an_item_is_signed_with_the_space_s_first_producer_key() -> None:
    raw = _command("a", "opt_out")
    [(name, signature)] = _header(raw) or []
    assert name == HEADER
    assert verify(raw, signature, [b"a-producer-key-0001"])
    assert not verify(raw, signature, [b"a-producer-key-0000", b"a-erase-key-00000001"])


def test_an_erase_is_signed_with_the_erase_key() -> None:
    raw = _command("a", "erase")
    [(_, signature)] = _header(raw) or []
    assert verify(raw, signature, [b"a-erase-key-00000001"])
    assert not verify(raw, signature, [b"a-producer-key-0001"])


def test_an_erase_it_cannot_sign_is_refused_before_it_is_sent() -> None:
    with pytest.raises(TurnstreamError, match=r"spaces\.b\.erase_keys.*TURNSTREAM_ERASE_KEYS_B"):
        _header(_command("b", "erase"))


def test_an_open_or_unknown_space_s_items_go_unsigned() -> None:
    assert _header(_command("open", "erase")) is None
    assert _header(_command("elsewhere", "opt_out")) is None
