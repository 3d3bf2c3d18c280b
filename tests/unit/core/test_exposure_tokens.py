"""Signed exposure tokens: mint, verify, rotation, forgery, another space, malformed."""

from __future__ import annotations

import base64
import re
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turnstream.core.exposure_tokens import (
    MAX_POS,
    VERIFIER_CHARS,
    TokenCheck,
    check_token,
    mint_token,
    parse_token,
)
from turnstream.models.outcomes import EXPOSURE_TOKEN_PATTERN

EXPOSURE = "019a22bc-6f90-7c28-81e1-6dad0003138d"
OLD, NEW = b"acme-old-key-0123456789", b"acme-new-key-9876543210"


def test_a_minted_token_has_the_wire_shape_and_verifies() -> None:
    token = mint_token("acme", EXPOSURE, 3, NEW)
    prefix, exposure_id, pos, verifier = token.split(".")
    assert (prefix, exposure_id, pos) == ("nx1", EXPOSURE, "3")
    assert len(verifier) == VERIFIER_CHARS == 22
    assert len(base64.urlsafe_b64decode(verifier + "==")) == 16  # 128 bits of the MAC
    assert re.match(EXPOSURE_TOKEN_PATTERN, token)
    assert check_token(token, "acme", [NEW]) == TokenCheck("valid", EXPOSURE, 3)
    assert mint_token("acme", EXPOSURE, 3, NEW) == token  # deterministic


def test_rotation_the_previous_key_still_verifies() -> None:
    old_token = mint_token("acme", EXPOSURE, 1, OLD)
    new_token = mint_token("acme", EXPOSURE, 1, NEW)
    assert old_token != new_token
    keys = [NEW, OLD]  # the first signs, every one verifies
    assert check_token(old_token, "acme", keys).status == "valid"
    assert check_token(new_token, "acme", keys).status == "valid"
    assert check_token(old_token, "acme", [NEW]).status == "invalid"  # old key retired


def test_another_space_never_verifies_even_under_the_same_key() -> None:
    token = mint_token("lumen", EXPOSURE, 2, NEW)
    assert check_token(token, "lumen", [NEW]).status == "valid"
    assert check_token(token, "acme", [NEW]) == TokenCheck("invalid")


@pytest.mark.parametrize(
    "forge",
    [
        lambda t: t.replace(".3.", ".4."),  # another position, same verifier
        lambda t: t.replace(EXPOSURE, EXPOSURE[:-1] + "e"),  # another exposure
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # one character of the verifier
        lambda t: t.rsplit(".", 1)[0] + "." + "A" * 22,  # a verifier of the right shape
    ],
)
def test_a_forged_token_is_invalid_and_names_no_exposure(forge) -> None:  # type: ignore[no-untyped-def]
    token = forge(mint_token("acme", EXPOSURE, 3, NEW))
    result = check_token(token, "acme", [NEW, OLD])
    assert result == TokenCheck("invalid")
    assert (result.exposure_id, result.pos, result.attributes) == ("", 0, False)


def test_a_space_without_keys_verifies_nothing() -> None:
    assert check_token(mint_token("acme", EXPOSURE, 3, NEW), "acme", []).status == "invalid"


@pytest.mark.parametrize(
    "token",
    [
        "",
        "nx1.bad",
        f"nx2.{EXPOSURE}.3.{'A' * 22}",
        f"nx1.{uuid.UUID(int=0x1234, version=4)}.3.{'A' * 22}",  # a UUIDv4
        f"nx1.{EXPOSURE.upper()}.3.{'A' * 22}",
        f"nx1.{EXPOSURE}.0.{'A' * 22}",
        f"nx1.{EXPOSURE}.03.{'A' * 22}",
        f"nx1.{EXPOSURE}.1000000.{'A' * 22}",
        f"nx1.{EXPOSURE}.3.{'A' * 21}",
        f"nx1.{EXPOSURE}.3.{'A' * 23}",
        f"nx1.{EXPOSURE}.3.{'A' * 21}=",
        f"nx1.{EXPOSURE}.3.{'A' * 22}\n",
        f"nx1.{EXPOSURE}.3",
        "abcdef0123456789",  # the unsigned sample's old 16-hex verifier alone
    ],
)
def test_malformed_tokens(token: str) -> None:
    assert check_token(token, "acme", [NEW]) == TokenCheck("malformed")
    assert parse_token(token) is None


def test_no_token_is_absent() -> None:
    assert check_token(None, "acme", [NEW]) == TokenCheck("absent")


@pytest.mark.parametrize(
    ("exposure_id", "pos", "key"),
    [
        ("not-a-uuid", 1, NEW),
        (str(uuid.UUID(int=5, version=4)), 1, NEW),
        (EXPOSURE, 0, NEW),
        (EXPOSURE, MAX_POS + 1, NEW),
        (EXPOSURE, True, NEW),
        (EXPOSURE, 1, b""),
    ],
)
def test_mint_refuses_what_no_token_can_carry(exposure_id: str, pos: int, key: bytes) -> None:
    with pytest.raises(ValueError):
        mint_token("acme", exposure_id, pos, key)


# --------------------------------------------------------------------------- properties

_uuid7s = st.builds(
    lambda ms, rand: str(uuid.UUID(int=ms << 80 | 0x7 << 76 | 0b10 << 62 | rand)),
    st.integers(0, (1 << 48) - 1),
    st.integers(0, (1 << 62) - 1).map(lambda r: (r & 0xFFF) << 64 | r >> 12),
)
_spaces = st.from_regex(r"[a-z0-9][a-z0-9_-]{0,63}", fullmatch=True)
_keys = st.binary(min_size=16, max_size=64)
_positions = st.integers(1, MAX_POS)


@given(_spaces, _uuid7s, _positions, _keys, _keys)
def test_every_minted_token_verifies_with_its_key_only(
    space: str, exposure_id: str, pos: int, key: bytes, other: bytes
) -> None:
    token = mint_token(space, exposure_id, pos, key)
    assert check_token(token, space, [key]) == TokenCheck("valid", exposure_id, pos)
    assert check_token(token, space, [other, key]).status == "valid"
    if other != key:
        assert check_token(token, space, [other]).status == "invalid"


@given(_spaces, _spaces, _uuid7s, _positions, _keys)
def test_a_token_never_crosses_spaces(
    space: str, elsewhere: str, exposure_id: str, pos: int, key: bytes
) -> None:
    token = mint_token(space, exposure_id, pos, key)
    expected = "valid" if elsewhere == space else "invalid"
    assert check_token(token, elsewhere, [key]).status == expected


@given(_uuid7s, _positions, _keys, st.integers(0, 69), st.characters(codec="ascii"))
def test_changing_any_character_never_gives_another_valid_token(
    exposure_id: str, pos: int, key: bytes, where: int, char: str
) -> None:
    token = mint_token("acme", exposure_id, pos, key)
    where %= len(token)
    changed = token[:where] + char + token[where + 1 :]
    result = check_token(changed, "acme", [key])
    if changed == token:
        assert result.status == "valid"
    else:
        assert result.status in ("invalid", "malformed")


@given(st.text(max_size=120))
def test_any_string_is_judged_never_raises(text: str) -> None:
    assert check_token(text, "acme", [NEW]).status in ("invalid", "malformed")
