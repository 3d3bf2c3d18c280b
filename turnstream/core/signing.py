"""Producers bound to their space: each record's value signed with the space's producer
key (an ``erase`` with its erase key), verified at the ingest gate. Pure: bytes and keys.

The signature is HMAC-SHA256 over the record's value bytes exactly as sent, in the Kafka
header :data:`HEADER` as ``v1:`` and the 32 raw bytes of the digest. The value names its
space (``space_id``), so a signature made with space A's key verifies for no other space.
Why the worker and not broker ACLs, with the figures: docs/security.md.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Sequence

__all__ = ["HEADER", "PREFIX", "sign", "signature_in", "verify"]

#: The Kafka header that carries a record's signature.
HEADER = "turnstream-sig"
#: The version of the signature scheme, before the digest.
PREFIX = b"v1:"
_LENGTH = len(PREFIX) + 32
_hmac = hmac.digest  # OpenSSL's one-shot HMAC: no Python object per record
_equal = hmac.compare_digest


def sign(value: bytes, key: bytes) -> bytes:
    """The header value signing ``value`` with ``key``."""
    return PREFIX + hmac.digest(key, value, "sha256")


def verify(value: bytes, signature: bytes, keys: Sequence[bytes]) -> bool:
    """Whether ``signature`` is ``value`` signed with one of ``keys`` (the signing key
    first: a record signed with an older key costs one more digest per key before it)."""
    if len(signature) != _LENGTH or not signature.startswith(PREFIX):
        return False
    digest = signature[len(PREFIX) :]
    # A loop, not any() over a generator: this runs once per record on the ingest path.
    for key in keys:  # noqa: SIM110
        if _equal(_hmac(key, value, "sha256"), digest):
            return True
    return False


def signature_in(headers: Iterable[tuple[str, bytes]] | None) -> bytes | None:
    """The signature among a record's headers (the first :data:`HEADER`), or None."""
    for name, value in headers or ():
        if name == HEADER:
            return value if isinstance(value, bytes) else None
    return None
