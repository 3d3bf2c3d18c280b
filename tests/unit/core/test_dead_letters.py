"""Dead letters of hostile input: they must never crash the writer or the producer."""

from __future__ import annotations

from datetime import UTC, datetime

from turnstream.config import Settings
from turnstream.core.ingest import Source, decide
from turnstream.core.messages import dead_letter_for
from turnstream.core.rows import rows_for
from turnstream.models.deadletter import MAX_ORIGINAL_BYTES, DeadLetter

SETTINGS = Settings()
RECEIVED = datetime(2026, 9, 29, 14, 2, 11, tzinfo=UTC)


def _decision(raw: bytes):  # type: ignore[no-untyped-def]
    return decide(raw, Source("t", 0, 1), SETTINGS, lambda _: None)


def test_a_lone_surrogate_in_the_header_still_encodes() -> None:
    raw = b'{"type": "turn", "space_id": "\\ud800", "source": "x\\udc00"}'
    [row] = rows_for(_decision(raw), SETTINGS, datetime.now(UTC))["dead_letters"]
    for value in row.values():
        if isinstance(value, str):
            value.encode("utf-8")  # would raise on a surrogate
    assert row["source"] == "x?"
    assert row["space_id"] == ""  # no space: a space's id has no surrogate


def test_a_type_or_a_space_that_is_none_is_not_kept() -> None:
    """What an invalid item has in ``type`` and ``space_id`` goes to the dead_letters
    table only when it is a type and a space's id: it may be a handle sent there."""
    raw = b'{"type": "+5511900005678", "space_id": "maria@example.com", "source": "web"}'
    [row] = rows_for(_decision(raw), SETTINGS, RECEIVED)["dead_letters"]
    assert (row["item_type"], row["space_id"], row["source"]) == ("", "", "web")
    raw = b'{"type": "turn", "space_id": "acme", "source": "web"}'
    [row] = rows_for(_decision(raw), SETTINGS, RECEIVED)["dead_letters"]
    assert (row["item_type"], row["space_id"]) == ("turn", "acme")


def test_a_huge_original_keeps_its_size_and_digest_but_not_its_bytes() -> None:
    raw = b"x" * (MAX_ORIGINAL_BYTES + 1)
    letter = DeadLetter.model_validate_json(dead_letter_for(_decision(raw), RECEIVED))
    assert letter.original == "" and letter.original_size == len(raw)
    assert len(letter.original_sha256) == 64
    small = DeadLetter.model_validate_json(dead_letter_for(_decision(b"nope"), RECEIVED))
    assert small.original_bytes() == b"nope"
    # the time is the driver's, passed in: the same decision gives the same letter
    assert letter.received_at == small.received_at == RECEIVED
    assert dead_letter_for(_decision(b"nope"), RECEIVED) == dead_letter_for(
        _decision(b"nope"), RECEIVED
    )
