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


def test_a_cached_profile_id_is_the_hmac_of_the_normalized_handle() -> None:
    import hmac

    # The same handle again (served from the cache), then after another secret: each id is
    # still the HMAC of space, type and normalized value under its own secret.
    for secret in (b"k1", b"k2", b"k1"):
        for value in ("ANA@example.COM", "ana@example.com", "Ana@Example.com"):
            handle = Handle(type="email", value=value)
            expected = hmac.new(secret, b"acme\x1femail\x1fana@example.com", "sha256").hexdigest()
            assert profile_id_for("acme", handle, secret) == "p_" + expected[:32]
    phone = Handle(type="phone_e164", value="+5511912345678")
    digest = hmac.new(b"k1", b"acme\x1fphone_e164\x1f+5511912345678", "sha256").hexdigest()
    assert profile_id_for("acme", phone, b"k1") == "p_" + digest[:32]


def test_an_email_in_nfd_is_the_person_it_is_in_nfc() -> None:
    """macOS keyboards and some forms send "josé" decomposed (e + U+0301): the same
    address, the same person; an external id is opaque and stays as sent."""
    import unicodedata

    nfc, nfd = (unicodedata.normalize(form, "José.Núñez@example.com") for form in ("NFC", "NFD"))
    assert nfc != nfd
    ids = {profile_id_for("acme", Handle(type="email", value=v), b"k1") for v in (nfc, nfd)}
    assert len(ids) == 1
    opaque = {
        profile_id_for(
            "acme", Handle(type="external_id", value=unicodedata.normalize(f, "josé")), b"k1"
        )
        for f in ("NFC", "NFD")
    }
    assert len(opaque) == 2
