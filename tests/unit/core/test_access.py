"""Who may call which route: the pure rules on key records."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from turnstream.core.access import (
    ALL_SPACES,
    ApiKey,
    Refusal,
    Role,
    RouteAccess,
    authenticate,
    authorize,
    authorize_space,
    bootstrap_outcome,
    hash_key,
    key_record,
    mint_key,
)


def _mint(space: str = "acme", *roles: Role, seed: int = 1) -> tuple[str, ApiKey]:
    return mint_key(
        bytes([seed] * 6), bytes([seed + 1] * 32), space, frozenset(roles or {Role.agent}), "t0"
    )


def test_a_minted_key_is_kept_as_its_sha256_only() -> None:
    key, record = _mint("acme", Role.agent, Role.security)
    assert key.startswith(f"tsk_{record.id}_") and len(key) == 4 + 12 + 1 + 43
    assert record.sha256 == hashlib.sha256(key.encode()).hexdigest()
    assert key not in repr(record)  # the record never holds the key
    assert record.roles == {Role.agent, Role.security} and record.active


def test_mint_refuses_short_randomness_and_no_role() -> None:
    with pytest.raises(ValueError):
        mint_key(b"12345", bytes(32), "acme", frozenset({Role.agent}), "t0")
    with pytest.raises(ValueError):
        mint_key(bytes(6), bytes(32), "acme", frozenset(), "t0")


def test_the_right_key_authenticates() -> None:
    key, record = _mint()
    assert authenticate(f"Bearer {key}", {record.id: record}) == record
    assert authenticate(f"bearer   {key}  ", {record.id: record}) == record


def test_every_failure_is_the_same_401() -> None:
    key, record = _mint()
    other_key, _ = _mint(seed=9)
    revoked = ApiKey(**{**record.__dict__, "revoked_at": "t1"})
    wrong_secret = key[:-1] + ("A" if key[-1] != "A" else "B")
    cases = [
        (None, {record.id: record}),
        ("", {record.id: record}),
        (f"Basic {key}", {record.id: record}),
        ("Bearer not-a-key", {record.id: record}),
        (f"Bearer {wrong_secret}", {record.id: record}),
        (f"Bearer {other_key}", {record.id: record}),  # unknown id
        (f"Bearer {key}", {record.id: revoked}),
    ]
    answers = {authenticate(header, keys) for header, keys in cases}
    assert len(answers) == 1
    (refusal,) = answers
    assert isinstance(refusal, Refusal) and refusal.status == 401
    assert "Bearer" in refusal.reason and refusal.challenge


def test_a_route_needs_its_role() -> None:
    _, record = _mint("acme", Role.agent)
    assert authorize(record, RouteAccess(Role.agent)) is None
    refusal = authorize(record, RouteAccess(Role.security))
    assert refusal is not None and refusal.status == 403 and "security" in refusal.reason


def test_routes_over_every_space_need_an_operators_key() -> None:
    _, one_space = _mint("acme", Role.analyst)
    _, every_space = _mint(ALL_SPACES, Role.analyst)
    sql = RouteAccess(Role.analyst, all_spaces=True)
    refusal = authorize(one_space, sql)
    assert refusal is not None and refusal.status == 403 and "every space" in refusal.reason
    assert authorize(every_space, sql) is None


def test_a_key_speaks_for_its_space_only_and_says_nothing_of_others() -> None:
    _, acme = _mint("acme", Role.security)
    _, operator = _mint(ALL_SPACES, Role.security)
    assert authorize_space(acme, "acme") is None
    assert authorize_space(operator, "lumen") is None
    configured = authorize_space(acme, "lumen")
    unknown = authorize_space(acme, "no-such-space")
    assert configured == unknown  # the same answer whether the space exists or not
    assert configured is not None and configured.status == 403


def test_bootstrap_outcome_is_decided_on_the_records_alone() -> None:
    key = "tsk_00000000000a_" + "k" * 43
    record = key_record(key, ALL_SPACES, frozenset({Role.operator}), "2026-11-30T17:00:00+00:00")
    one_space = key_record("tsk_00000000000b_" + "b" * 43, "acme", frozenset(Role), "t")
    no_operator = key_record(
        "tsk_00000000000c_" + "c" * 43, ALL_SPACES, frozenset({Role.analyst}), "t"
    )
    operator = key_record(
        "tsk_00000000000d_" + "d" * 43, ALL_SPACES, frozenset({Role.operator}), "t"
    )
    revoked_operator = dataclasses.replace(operator, revoked_at="t2")
    assert bootstrap_outcome([], record) == ("added", record)
    # Neither a key of one space, nor one without the role, nor a revoked one counts.
    assert bootstrap_outcome([one_space, no_operator, revoked_operator], record)[0] == "added"
    assert bootstrap_outcome([one_space, operator], record) == ("other", operator)
    # This key itself wins over another operator's key: its state is what is said.
    kept = dataclasses.replace(record, created_at="earlier", revoked_at="t3")
    assert bootstrap_outcome([operator, kept], record) == ("revoked", kept)
    assert bootstrap_outcome([dataclasses.replace(kept, revoked_at=None)], record)[0] == "present"
    forged = dataclasses.replace(record, sha256=hash_key("tsk_00000000000a_" + "x" * 43))
    with pytest.raises(ValueError, match="another key has the id 00000000000a"):
        bootstrap_outcome([forged], record)
