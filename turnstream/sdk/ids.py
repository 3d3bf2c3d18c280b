"""Exposure ids: UUIDv7 (RFC 9562) minted at delivery.

48 bits of Unix milliseconds, then random bits, so ids sort by delivery time. Through the
``uuid6`` library: Python 3.11's ``uuid`` has no version 7, and ``uuid6`` keeps ids minted
within one millisecond in order (it moves the time forward by 1 ms instead of going back).
"""

from __future__ import annotations

from uuid6 import uuid7 as _uuid7

__all__ = ["uuid7"]


def uuid7() -> str:
    """A new UUIDv7, as the lower-case string the wire carries."""
    return str(_uuid7())
