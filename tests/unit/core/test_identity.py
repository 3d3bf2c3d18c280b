"""Keyed hashing of handles."""

from __future__ import annotations

from turnstream.core.identity import profile_id_for
from turnstream.models import Handle


def test_profile_ids_depend_on_the_secret_and_the_space() -> None:
    handle = Handle(type="email", value="Ana@Example.com")
    same = Handle(type="email", value="ana@EXAMPLE.com")
    assert profile_id_for("acme", handle, b"k1") == profile_id_for("acme", same, b"k1")
    assert profile_id_for("acme", handle, b"k1") != profile_id_for("acme", handle, b"k2")
    assert profile_id_for("acme", handle, b"k1") != profile_id_for("lumen", handle, b"k1")
    assert "ana" not in profile_id_for("acme", handle, b"k1")
