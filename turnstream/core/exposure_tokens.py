"""Signed exposure tokens: ``nx1.<exposure_id>.<pos>.<verifier>``. Pure: keys are passed in.

The verifier is HMAC-SHA256 over the space, the exposure id and the position, truncated
to 128 bits and written in base64url without padding (22 characters). 128 bits is the
shortest truncation RFC 2104 (section 5) and NIST SP 800-107 (section 5.3.3) allow
without a further argument (at least half the hash, and at least 80 bits): a forger
succeeds with probability 2^-128 per guess, and the whole token stays ~70 characters, the
length of a cart line's opaque field. The space is inside the MAC, so a token minted for
one space never verifies in another, even under the same key.

The SDK mints (``turnstream.sdk.exposure``), the ingest rule checks (``core/ingest``):
an outcome's token is ``valid``, ``invalid`` (well formed, but no key of the space
verifies it: forged, altered, another space's, or the space has no key), ``malformed``
(not the shape above) or ``absent``; only a valid token names an exposure and position.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from turnstream.models.outcomes import EXPOSURE_TOKEN_PATTERN

__all__ = [
    "MAX_POS",
    "TOKEN_PREFIX",
    "VERIFIER_CHARS",
    "TokenCheck",
    "TokenStatus",
    "check_token",
    "mint_token",
    "parse_token",
]

TOKEN_PREFIX = "nx1"
#: 16 bytes of the MAC: base64url of 128 bits is 22 characters without padding.
_VERIFIER_BYTES = 16
VERIFIER_CHARS = 22
#: The largest position a token names (six digits: the wire's ``pos`` of a long list).
MAX_POS = 999_999
TokenStatus = Literal["valid", "invalid", "malformed", "absent"]

_SHAPE = re.compile(EXPOSURE_TOKEN_PATTERN)


@dataclass(frozen=True, slots=True)
class TokenCheck:
    """What a token is worth: its status and, only when valid, the exposure and position."""

    status: TokenStatus
    exposure_id: str = ""
    pos: int = 0

    @property
    def attributes(self) -> bool:
        """Whether the outcome may be attributed to the exposure and position."""
        return self.status == "valid"


_ABSENT = TokenCheck("absent")
_MALFORMED = TokenCheck("malformed")
_INVALID = TokenCheck("invalid")


def _verifier(key: bytes, space_id: str, exposure_id: str, pos: int) -> str:
    # Unit separators keep the fields apart: no space id can end where an exposure starts.
    message = f"{TOKEN_PREFIX}\x1f{space_id}\x1f{exposure_id}\x1f{pos}".encode()
    mac = hmac.new(key, message, hashlib.sha256).digest()[:_VERIFIER_BYTES]
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode("ascii")


def parse_token(token: str) -> tuple[str, int, str] | None:
    """``(exposure_id, pos, verifier)`` of a well-formed token, else None."""
    match = _SHAPE.fullmatch(token)  # fullmatch: no trailing newline slips past `$`
    if match is None:
        return None
    return match[1], int(match[2]), match[3]


def mint_token(space_id: str, exposure_id: str, pos: int, key: bytes) -> str:
    """The token of position ``pos`` of exposure ``exposure_id`` (a UUIDv7) in a space.

    Raises ``ValueError`` for an exposure id that is not a lower-case UUIDv7, a position
    outside 1..999999 or an empty key.
    """
    if not key:
        raise ValueError("an exposure key cannot be empty")
    if isinstance(pos, bool) or not isinstance(pos, int) or not 1 <= pos <= MAX_POS:
        raise ValueError(f"pos: a position from 1 to {MAX_POS}, got {pos!r}")
    token = f"{TOKEN_PREFIX}.{exposure_id}.{pos}.{_verifier(key, space_id, exposure_id, pos)}"
    if parse_token(token) is None:
        raise ValueError(f"exposure_id: not a lower-case UUIDv7: {exposure_id!r}")
    return token


def check_token(token: str | None, space_id: str, keys: Sequence[bytes]) -> TokenCheck:
    """Whether any of the space's ``keys`` (the signing one first, then older ones still
    accepted) verifies ``token``; None is ``absent``."""
    if token is None:
        return _ABSENT
    parts = parse_token(token)
    if parts is None:
        return _MALFORMED
    exposure_id, pos, verifier = parts
    for key in keys:
        if key and hmac.compare_digest(_verifier(key, space_id, exposure_id, pos), verifier):
            return TokenCheck("valid", exposure_id, pos)
    return _INVALID
