"""The ingest rule: validation, the features gate and idempotency keys."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from turnstream.config import Settings, SpaceConfig
from turnstream.core.identity import profile_id_for
from turnstream.core.ingest import (
    Decision,
    Reason,
    Source,
    decide,
    dedup_key_for,
    dedupe,
    first_correction,
    refused_by_store,
    refused_key_for,
    refused_length,
    too_large_to_fan_out,
)
from turnstream.core.messages import accepted_for
from turnstream.core.rows import rows_for
from turnstream.models import Handle

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret"},
        "spaces": {
            "acme": {"features": ["signals", "claims", "turns"]},
            "quiet": {"features": []},
            "turnsonly": {"features": ["turns"]},
        },
    }
)
SRC = Source("turnstream.interactions", 2, 41)


def _pref(**changes: Any) -> bytes:
    item = {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": "pref-1",
        "handle": {"type": "phone_e164", "value": "+5511900005678"},
        "source": "whatsapp",
        "conversation_id": "wa-1",
        "occurred_at": "2026-09-29T14:02:11Z",
        "interaction": {
            "kind": "preference",
            "attr": "item_variant.color",
            "op": "not_in",
            "values": ["black"],
            "strength": "must_not",
            "source": "stated",
        },
    }
    item.update(changes)
    return json.dumps(item).encode()


def _turn(space: str, interactions: int = 0) -> bytes:
    presented = {
        "kind": "seen",
        "exposure_id": "0190d5a4-1c2b-7d3e-8f4a-123456789abc",
        "max_index_seen": 3,
    }
    return json.dumps(
        {
            "type": "turn",
            "space_id": space,
            "idempotency_key": "turn-1",
            "profile_id": "p_1",
            "source": "web",
            "occurred_at": "2026-09-29T14:02:11Z",
            "turn_id": "t1",
            "agent": "sales",
            "interactions": [presented] * interactions,
        }
    ).encode()


def never(_: str) -> Source | None:
    return None


def test_a_valid_item_is_accepted_with_its_hashed_profile() -> None:
    decision = decide(_pref(), SRC, SETTINGS, never)
    assert decision.item is not None and decision.refusal is None
    handle = Handle(type="phone_e164", value="+5511900005678")
    assert decision.profile_id == profile_id_for("acme", handle, b"s3cret")
    assert decision.profile_id.startswith("p_") and "5678" not in decision.profile_id


def test_invalid_bytes_are_refused_with_the_field_path() -> None:
    decision = decide(_pref(occurred_at="2026-09-29T14:02:11"), SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.invalid
    assert decision.refusal.field_path == "occurred_at"
    assert "timezone" in decision.refusal.message


def test_unknown_space_is_refused() -> None:
    decision = decide(_pref(space_id="ghost"), SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None and decision.refusal.reason is Reason.unknown_space


def test_interaction_for_a_space_without_signals_is_refused() -> None:
    decision = decide(_pref(space_id="quiet"), SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.signals_disabled


def test_turn_for_a_space_without_turns_is_refused() -> None:
    decision = decide(_turn("quiet"), SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None and decision.refusal.reason is Reason.turns_disabled


def test_interactions_inside_a_turn_without_signals_are_refused_but_the_turn_kept() -> None:
    decision = decide(_turn("turnsonly", interactions=2), SRC, SETTINGS, never)
    assert decision.item is not None
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.signals_disabled
    assert decision.refusal.field_path == "interactions"
    assert not decision.keep_interactions


def test_a_turn_without_interactions_in_a_turns_only_space_is_clean() -> None:
    decision = decide(_turn("turnsonly"), SRC, SETTINGS, never)
    assert decision.item is not None and decision.refusal is None and decision.keep_interactions


def test_a_key_taken_by_another_message_is_a_duplicate() -> None:
    first = decide(_pref(), SRC, SETTINGS, never)
    taken = {first.dedup_key: SRC}
    again = decide(_pref(), Source(SRC.topic, SRC.partition, 99), SETTINGS, taken.get)
    assert again.duplicate and again.item is None and again.refusal is None


def test_the_same_message_redelivered_is_not_a_duplicate() -> None:
    first = decide(_pref(), SRC, SETTINGS, never)
    redelivered = decide(_pref(), SRC, SETTINGS, {first.dedup_key: SRC}.get)
    assert not redelivered.duplicate and redelivered.item is not None


def test_keys_are_per_space() -> None:
    a = decide(_pref(), SRC, SETTINGS, never)
    b = decide(_pref(space_id="quiet"), SRC, SETTINGS, never)
    assert a.dedup_key != b.dedup_key


def test_the_same_invalid_bytes_twice_are_one_dead_letter() -> None:
    raw = b'{"type": "turn", "broken": '
    first = decide(raw, SRC, SETTINGS, never)
    again = decide(raw, Source(SRC.topic, 0, 7), SETTINGS, {first.dedup_key: SRC}.get)
    assert first.refusal is not None and again.duplicate


#: When the rule tests below judge the time edges: _pref occurred an hour before.
RECEIVED = datetime(2026, 9, 29, 15, 2, 11, tzinfo=UTC)
_SCOPED = {
    "kind": "preference",
    "attr": "item_variant.color",
    "op": "not_in",
    "values": ["black"],
    "strength": "must_not",
    "source": "stated",
    "scope": "turn",
}


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (_pref(occurred_at="2350-01-01T00:00:00Z"), Reason.ahead_of_clock),
        (_pref(occurred_at="1850-01-01T00:00:00Z"), Reason.past_retention),
        (_pref(space_id="nowhere"), Reason.unknown_space),
        (_pref(space_id="quiet"), Reason.signals_disabled),
        (_turn("quiet"), Reason.turns_disabled),
        (_pref(interaction=_SCOPED), Reason.turn_scope),
    ],
    ids=["ahead", "past", "unknown-space", "signals-off", "turns-off", "turn-scope"],
)
def test_a_refusal_its_sender_can_correct_takes_the_digest_of_its_bytes(
    raw: bytes, reason: Reason
) -> None:
    refused = decide(raw, SRC, SETTINGS, never, RECEIVED)
    assert refused.refusal is not None and refused.refusal.reason is reason
    assert refused.item is None and refused.correctable
    assert refused.taken_key == dedup_key_for(None, raw) != refused.dedup_key
    rows = rows_for(refused, SETTINGS, RECEIVED)
    assert set(rows) == {"dead_letters", "idempotency_keys"}
    assert rows["idempotency_keys"][0]["dedup_key"] == refused.taken_key


def test_an_item_refused_at_a_time_edge_then_sent_again_fixed_is_accepted_once() -> None:
    wrong = _pref(occurred_at="2350-01-01T00:00:00Z")
    taken: dict[str, Source] = {}
    decisions = []
    for offset, raw in enumerate([wrong, wrong, _pref(), _pref(), wrong]):
        d = decide(raw, Source(SRC.topic, SRC.partition, offset), SETTINGS, taken.get, RECEIVED)
        if d.taken_key is not None:  # what the ingest use case records
            taken.setdefault(d.taken_key, d.source)
        decisions.append(d)
    first, same_bytes, fixed, again, wrong_again = decisions
    assert first.refusal is not None and first.refusal.reason is Reason.ahead_of_clock
    # The same wrong bytes again: one dead letter, not two.
    assert same_bytes.duplicate and same_bytes.taken_key is None
    assert fixed.item is not None and fixed.refusal is None
    assert fixed.taken_key == fixed.dedup_key == first.dedup_key
    # Once accepted, the key is taken: neither copy counts again.
    assert again.duplicate and again.taken_key is None
    assert wrong_again.duplicate and wrong_again.refusal is None


def test_what_is_kept_or_refused_for_its_bytes_takes_its_key() -> None:
    partial = decide(_turn("turnsonly", interactions=2), SRC, SETTINGS, never)
    assert partial.refusal is not None and partial.refusal.reason is Reason.signals_disabled
    assert partial.item is not None and partial.taken_key == partial.dedup_key  # kept
    invalid = decide(b'{"type": "turn", "broken": ', SRC, SETTINGS, never)
    assert invalid.refusal is not None and invalid.taken_key == invalid.dedup_key  # a digest
    # As the prepare process hands a decision back (no item): the person tells a turn
    # kept without its interactions from an item refused whole.
    assert partial.refusal is not None
    kept = Decision(SRC, partial.raw, partial.dedup_key, profile_id="p_1", refusal=partial.refusal)
    whole = Decision(SRC, partial.raw, partial.dedup_key, refusal=partial.refusal)
    assert kept.taken_key == partial.dedup_key and not kept.correctable
    assert whole.correctable and whole.taken_key == dedup_key_for(None, partial.raw)


def test_a_message_the_store_refuses_takes_the_digest_of_its_bytes_not_its_key() -> None:
    accepted = decide(_pref(), SRC, SETTINGS, never)
    stored = refused_by_store(accepted, "interactions refused it")
    assert stored.refusal is not None and stored.refusal.reason is Reason.store_refused
    assert stored.correctable and stored.taken_key == refused_key_for(accepted.raw)
    # Neither the item's key nor the digest a refusal at the gate takes.
    assert stored.taken_key not in (accepted.dedup_key, dedup_key_for(None, accepted.raw))
    assert refused_length(stored.taken_key) == len(accepted.raw)
    rows = rows_for(stored, SETTINGS, RECEIVED)
    assert set(rows) == {"dead_letters", "idempotency_keys"}
    assert [r["dedup_key"] for r in rows["idempotency_keys"]] == [stored.taken_key]


def _at(offset: int) -> Source:
    return Source(SRC.topic, SRC.partition, offset)


def test_the_bytes_the_store_refused_are_a_duplicate_and_the_item_corrected_is_not() -> None:
    wrong, fixed = _pref(source="web"), _pref()
    taken = {refused_key_for(wrong): _at(0)}  # what the refusal at offset 0 left
    lengths = {refused_length(k) for k in taken}

    def judged(raw: bytes, offset: int) -> Decision:
        return dedupe(decide(raw, _at(offset), SETTINGS, never, RECEIVED), taken.get, lengths)

    again = judged(wrong, 1)
    assert again.duplicate and again.taken_key is None  # one dead letter, no row
    corrected = judged(fixed, 2)  # the same key: it is free
    assert not corrected.duplicate and corrected.taken_key == corrected.dedup_key
    # Redelivered, the refused message is not a duplicate of itself.
    assert not judged(wrong, 0).duplicate
    # The digest is looked for only among messages of a refused length.
    assert not dedupe(decide(wrong, _at(3), SETTINGS, never), taken.get, ()).duplicate
    # A plain copy of an accepted item is still a duplicate.
    taken[corrected.dedup_key] = corrected.source
    assert judged(fixed, 4).duplicate


def test_bytes_the_gate_refused_are_accepted_once_valid_but_not_bytes_the_store_refused() -> None:
    raw = _pref()
    gate = dedup_key_for(None, raw)  # as if refused at the gate first (the space unknown)
    decision = decide(raw, _at(1), SETTINGS, never, RECEIVED)
    assert not dedupe(decision, {gate: _at(0)}.get, {len(raw)}).duplicate
    assert dedupe(decision, {refused_key_for(raw): _at(0)}.get, {len(raw)}).duplicate


def test_a_correction_is_the_first_line_whose_key_an_earlier_one_has_with_other_bytes() -> None:
    wrong, fixed, other = _pref(source="web"), _pref(), _pref(idempotency_key="pref-2")
    decide_all = [
        decide(raw, _at(i), SETTINGS, never, RECEIVED)
        for i, raw in enumerate([wrong, other, wrong, fixed, fixed])
    ]
    assert first_correction(decide_all) == 3  # a copy of the same bytes is not one
    assert first_correction(decide_all[:3]) is None
    assert first_correction(decide_all[3:]) is None


def test_a_handle_without_a_secret_is_a_config_error() -> None:
    from turnstream.errors import ConfigError

    settings = Settings(spaces={"acme": SpaceConfig(features=frozenset({"signals"}))})
    with pytest.raises(ConfigError, match=r"identity\.secret"):
        decide(_pref(), SRC, settings, never)


def _legacy_accepted(decision: Any) -> dict[str, Any]:
    """The accepted message as a plain ``model_dump`` spells it (the reference form)."""
    body = decision.item.model_dump(mode="json", by_alias=True, exclude={"handle"})
    body["profile_id"] = decision.profile_id
    if not decision.keep_interactions and "interactions" in body:
        body["interactions"] = []
    return body


@pytest.mark.parametrize(
    "raw",
    [_pref(), _turn("acme", interactions=2), _turn("turnsonly", interactions=2), _turn("acme")],
    ids=["hashed-handle", "turn-with-interactions", "interactions-refused", "plain-turn"],
)
def test_the_accepted_message_is_the_item_without_its_handle(raw: bytes) -> None:
    decision = decide(raw, SRC, SETTINGS, never)
    message = json.loads(accepted_for(decision))
    assert message == _legacy_accepted(decision)
    assert "handle" not in message and message["profile_id"] == decision.profile_id
    assert b"+5511900005678" not in accepted_for(decision)


def test_a_message_the_store_refuses_keeps_its_key_and_becomes_a_dead_letter() -> None:
    accepted = decide(_pref(), SRC, SETTINGS, lambda _: None)
    refused = refused_by_store(accepted, "interactions refused it: Code: 469 ...")
    assert refused.item is None and refused.profile_id is None and not refused.duplicate
    assert (refused.source, refused.raw, refused.dedup_key) == (
        accepted.source,
        accepted.raw,
        accepted.dedup_key,  # a copy of it is a duplicate, in a replay as the first time
    )
    assert refused.refusal is not None
    assert refused.refusal.reason is Reason.store_refused
    assert refused.refusal.message == "interactions refused it: Code: 469 ..."
    rows = rows_for(refused, SETTINGS, datetime.now(UTC))
    assert set(rows) == {"idempotency_keys", "dead_letters"}
    assert rows["dead_letters"][0]["reason"] == "store_refused"
    assert rows["dead_letters"][0]["idempotency_key"] == "pref-1"  # read from the bytes


def test_an_item_too_large_to_fan_out_is_refused_before_anything_is_written() -> None:
    accepted = decide(_pref(), SRC, SETTINGS, lambda _: None)
    refused = too_large_to_fan_out(accepted, 1_573_214, 1_047_564)
    assert refused.refusal is not None and refused.refusal.reason is Reason.too_large
    assert refused.refusal.message == (
        "its accepted message would be 1573214 bytes; the accepted topic takes 1047564"
    )
    assert refused.dedup_key == accepted.dedup_key and refused.item is None
    # A smaller item sent again with the key is not a duplicate of it.
    assert refused.correctable and refused.taken_key != refused.dedup_key
    rows = rows_for(refused, SETTINGS, datetime.now(UTC))
    assert [row["dedup_key"] for row in rows["idempotency_keys"]] == [refused.taken_key]


# --------------------------------------------------------------------------- exposure tokens

_EXPOSURE = "019a22bc-6f90-7c28-81e1-6dad0003138d"
_KEYS = {
    "acme": ["acme-current-key-000000", "acme-previous-key-11111"],
    "lumen": ["lumen-key-2222222222"],
}
TOKEN_SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret"},
        "spaces": {
            space: {"features": ["signals", "turns"], "exposure_keys": keys}
            for space, keys in _KEYS.items()
        }
        | {"nokeys": {"features": ["signals", "turns"]}},
    }
)


def _outcome(space: str = "acme", token: str | None = None) -> bytes:
    item: dict[str, Any] = {
        "type": "outcome",
        "space_id": space,
        "idempotency_key": f"o-{token}",
        "profile_id": "p_1",
        "source": "web",
        "occurred_at": "2026-09-29T15:00:00Z",
        "outcome": "purchase",
        "ref": "item_variant:acme:991",
        "order_id": "ord-1",
    }
    if token is not None:
        item["exposure_token"] = token
    return json.dumps(item).encode()


def _signed(space: str, pos: int, key: str) -> str:
    from turnstream.core.exposure_tokens import mint_token

    return mint_token(space, _EXPOSURE, pos, key.encode())


@pytest.mark.parametrize(
    ("space", "token", "status"),
    [
        ("acme", _signed("acme", 2, _KEYS["acme"][0]), "valid"),
        ("acme", _signed("acme", 2, _KEYS["acme"][1]), "valid"),  # the previous key
        ("acme", _signed("lumen", 2, _KEYS["lumen"][0]), "invalid"),  # another space's
        ("acme", _signed("acme", 2, "a-forger-s-own-key-000"), "invalid"),
        ("acme", _signed("acme", 2, _KEYS["acme"][0]).replace(".2.", ".5."), "invalid"),
        ("nokeys", _signed("nokeys", 2, _KEYS["acme"][0]), "invalid"),  # no key to verify
        ("acme", "nx1.not-a-token", "malformed"),
        ("acme", None, "absent"),
    ],
    ids=["valid", "previous-key", "another-space", "forged", "other-pos", "no-keys",
         "malformed", "absent"],
)  # fmt: skip
def test_an_outcome_is_kept_with_its_token_status_and_attributed_only_when_valid(
    space: str, token: str | None, status: str
) -> None:
    decision = decide(_outcome(space, token), SRC, TOKEN_SETTINGS, never)
    assert decision.refusal is None and decision.token is not None
    assert decision.token.status == status
    (row,) = rows_for(decision, TOKEN_SETTINGS, datetime.now(UTC))["outcomes"]
    assert row["token_status"] == status
    assert row["exposure_token"] == (token or "")
    valid = status == "valid"
    assert (row["exposure_id"], row["exposure_pos"]) == ((_EXPOSURE, 2) if valid else ("", 0))
    message = json.loads(accepted_for(decision))
    assert message["token_status"] == status
    # Derivation reads the token from the accepted message: only a valid one travels on.
    assert message.get("exposure_token") == (token if valid else None)


def test_other_items_carry_no_token_status() -> None:
    decision = decide(_pref(), SRC, SETTINGS, never)
    assert decision.token is None
    assert "token_status" not in json.loads(accepted_for(decision))


@pytest.mark.parametrize(
    ("key", "attributed"),
    [(_KEYS["acme"][0], True), ("a-forger-s-own-key-000", False)],
    ids=["valid", "forged"],
)
def test_derivation_follows_only_a_valid_token(key: str, attributed: bool) -> None:
    """Ingest → accepted message → derivation, as live and replay both run it: a gift's
    list; the purchase's token leads to the gift's bucket only when it verifies."""
    from turnstream.config import SignalsConfig
    from turnstream.core.derivation import ProfileState, events_from_accepted, fold
    from turnstream.core.derivation.state import resolved

    shown = {
        "type": "interaction", "space_id": "acme", "idempotency_key": "p-1", "profile_id": "p_1",
        "source": "web", "occurred_at": "2026-09-29T14:59:00Z", "for": "gift",
        "interaction": {
            "kind": "presented", "exposure_id": _EXPOSURE, "list_id": "l1", "list_kind": "search",
            "delivered_at": "2026-09-29T14:59:00Z", "visible_k": 2,
            "items": [{"pos": 2, "ref": "item_variant:acme:991", "shown": {"color": "red"}}],
        },
    }  # fmt: skip
    state, config = ProfileState(), SignalsConfig()
    for offset, raw in enumerate(
        [json.dumps(shown).encode(), _outcome("acme", _signed("acme", 2, key))]
    ):
        decision = decide(raw, Source("t", 0, offset), TOKEN_SETTINGS, never)
        for event in events_from_accepted(json.loads(accepted_for(decision))):
            fold(state, event, config)
    buckets = resolved(state, config).buckets
    gift_outcomes = buckets["gift"].event_counts.get("outcome", 0)
    own_outcomes = buckets["self"].event_counts.get("outcome", 0) if "self" in buckets else 0
    assert (gift_outcomes, own_outcomes) == ((1, 0) if attributed else (0, 1))


def test_a_batch_judged_through_one_gate_is_judged_as_message_by_message() -> None:
    from turnstream.core.ingest import Gate, judge
    from turnstream_dev.sample import mixed_items

    lines = [
        *mixed_items(n=2_000, bad=40, seed=5).lines,
        _pref(space_id="quiet"),  # signals off
        _pref(space_id="nowhere"),  # not configured
        _pref(space_id="turnsonly"),
    ]
    settings = Settings.model_validate(
        {
            "identity": {"secret": "s3cret"},
            "spaces": {
                "acme": {"features": ["signals", "claims", "turns"]},
                "lumen": {"features": ["signals", "turns"]},
                "vida": {"features": ["claims"]},  # turns refused
                "quiet": {"features": []},
                "turnsonly": {"features": ["turns"]},
            },
        }
    )
    gate = Gate(settings)
    shared = [judge(raw, Source("t", 0, i), settings, gate) for i, raw in enumerate(lines)]
    alone = [judge(raw, Source("t", 0, i), settings) for i, raw in enumerate(lines)]
    assert shared == alone
    reasons = {d.refusal.reason for d in shared if d.refusal is not None}
    assert {Reason.invalid, Reason.unknown_space, Reason.signals_disabled} <= reasons
    assert Reason.turns_disabled in reasons


def test_a_gate_without_a_secret_refuses_at_the_first_handle_as_before() -> None:
    from turnstream.core.ingest import Gate, judge
    from turnstream.errors import ConfigError

    settings = Settings.model_validate({"spaces": {"acme": {"features": ["signals"]}}})
    gate = Gate(settings)
    assert judge(b"{", SRC, settings, gate).refusal is not None  # invalid: no secret read
    with pytest.raises(ConfigError, match=r"identity\.secret is not set"):
        judge(_pref(), SRC, settings, gate)
