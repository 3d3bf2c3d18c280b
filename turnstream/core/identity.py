"""Handles become profile ids by keyed hash; the raw handle is never stored."""

from __future__ import annotations

import hmac

from turnstream.models.common import Envelope, Handle, HandleType

__all__ = ["normalize_handle", "profile_id_for", "resolve_profile"]


def normalize_handle(handle: Handle) -> str:
    """The canonical spelling of a handle, so one person hashes to one id."""
    value = handle.value.strip()
    if handle.type is HandleType.email:
        return value.lower()
    return value


def profile_id_for(space_id: str, handle: Handle, secret: bytes) -> str:
    """``p_`` and 32 hex digits of HMAC-SHA256 over the space, handle type and value.

    The space is part of the key: tenants never share a profile id.
    """
    message = "\x1f".join((space_id, handle.type.value, normalize_handle(handle))).encode()
    return "p_" + hmac.digest(secret, message, "sha256").hex()[:32]


def resolve_profile(item: Envelope, secret: bytes) -> str:
    """The item's profile id: given, or hashed from its handle."""
    if item.profile_id is not None:
        return item.profile_id
    assert item.handle is not None  # the envelope guarantees exactly one
    return profile_id_for(item.space_id, item.handle, secret)
