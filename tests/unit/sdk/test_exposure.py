"""Exposure ids (UUIDv7, RFC 9562) and tokens signed for the conversation's space."""

from __future__ import annotations

import time
import uuid

import pytest

from turnstream.core.exposure_tokens import check_token
from turnstream.errors import TurnstreamError
from turnstream.models.common import ExposureId
from turnstream.sdk import Conversation, exposure_token, uuid7

KEY = "sdk-test-key-0123456789"


def test_uuid7_version_and_variant_bits() -> None:
    for _ in range(200):
        value = uuid.UUID(uuid7())
        assert value.version == 7
        assert value.variant == uuid.RFC_4122
        assert value.int >> 76 & 0xF == 7 and value.int >> 62 & 0b11 == 0b10


def test_uuid7_carries_the_unix_milliseconds_of_delivery() -> None:
    before = time.time_ns() // 1_000_000
    minted = uuid.UUID(uuid7()).int >> 80
    after = time.time_ns() // 1_000_000
    # uuid6 moves a repeated millisecond forward by 1 ms to keep order: allow the few
    # ids minted before this one in the same process.
    assert before <= minted <= after + 1000


def test_uuid7_sorts_in_minting_order_even_within_a_millisecond() -> None:
    ids = [uuid7() for _ in range(2000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_uuid7_is_what_the_wire_takes() -> None:
    from pydantic import TypeAdapter

    value = uuid7()
    assert TypeAdapter(ExposureId).validate_python(value) == value


def test_exposure_token_explicit_space_and_key() -> None:
    exposure_id = uuid7()
    token = exposure_token(exposure_id, 4, space="acme", key=KEY)
    assert check_token(token, "acme", [KEY.encode()]).status == "valid"
    assert check_token(token, "lumen", [KEY.encode()]).status == "invalid"


def test_exposure_token_inside_a_turn_is_signed_for_the_conversation_space() -> None:
    conversation = Conversation(
        space="lumen", source="web", agent="a", profile_id="p_1", exposure_key=KEY,
        recorder=lambda _record: None,
    )  # fmt: skip
    exposure_id = uuid7()
    with conversation.turn():
        token = exposure_token(exposure_id, 1)
        with pytest.raises(TurnstreamError, match="space 'lumen', not 'acme'"):
            exposure_token(exposure_id, 1, space="acme")
    assert token == conversation.exposure_token(exposure_id, 1)
    assert check_token(token, "lumen", [KEY.encode()]).status == "valid"
    with pytest.raises(TurnstreamError, match="inside a turn"):
        exposure_token(exposure_id, 1)  # outside the turn: space and key are needed


def test_the_signing_key_comes_from_the_settings_first_key() -> None:
    from turnstream.config import Settings

    settings = Settings.model_validate(
        {"spaces": {"acme": {"exposure_keys": ["new-key-0123456789ab", KEY]}}}
    )
    conversation = Conversation(
        space="acme", source="web", agent="a", profile_id="p_1", settings=settings
    )
    token = conversation.exposure_token(uuid7(), 2)
    assert check_token(token, "acme", [b"new-key-0123456789ab"]).status == "valid"
    bare = Conversation(space="acme", source="web", agent="a", profile_id="p_1")
    with pytest.raises(TurnstreamError, match=r"\[spaces.acme\] exposure_keys"):
        bare.exposure_token(uuid7(), 2)
