"""Exposures in the agent's process: UUIDv7 ids at delivery (``turnstream.sdk.ids``) and
signed exposure tokens.

``exposure_token(exposure_id, pos)`` signs one position of an exposure for the current
conversation's space (inside ``conversation.turn()``), or for an explicit ``space`` and
``key``. The token goes on the card and comes back, copied by the app, on the outcome;
the worker verifies it (``turnstream.core.exposure_tokens``).
"""

from __future__ import annotations

from pydantic import SecretStr

from turnstream.core.exposure_tokens import mint_token
from turnstream.errors import TurnstreamError
from turnstream.sdk.frame import current_frame
from turnstream.sdk.ids import uuid7

__all__ = ["exposure_token", "key_bytes", "uuid7"]


def key_bytes(key: str | bytes | SecretStr) -> bytes:
    """A token key as bytes (a ``SecretStr`` from the configuration is unwrapped)."""
    if isinstance(key, SecretStr):
        key = key.get_secret_value()
    return key.encode() if isinstance(key, str) else key


def exposure_token(
    exposure_id: str,
    pos: int,
    *,
    space: str | None = None,
    key: str | bytes | SecretStr | None = None,
) -> str:
    """``nx1.<exposure_id>.<pos>.<verifier>`` for position ``pos`` of an exposure.

    Without ``space`` and ``key``, the conversation of the turn in progress signs it (its
    space and its signing key); outside a turn both are required. Raises ``ValueError``
    for an id that is not a UUIDv7 or a position outside 1..999999.
    """
    if space is not None and key is not None:
        return mint_token(space, exposure_id, pos, key_bytes(key))
    frame = current_frame()
    if frame is None or key is not None:
        raise TurnstreamError("exposure_token: give space= and key=, or call it inside a turn")
    conversation = frame.conversation
    if space is not None and space != conversation.space:
        raise TurnstreamError(
            f"exposure_token: the turn is in space {conversation.space!r}, not {space!r}"
        )
    return conversation.exposure_token(exposure_id, pos)
