"""Turn-scope constraints never reach the server: refused at the ingest edge."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

from tests.unit.core.test_ingest import SETTINGS, SRC, _pref, never
from tests.unit.core.test_ingest_types import EXAMPLE_TYPES
from turnstream.config import Settings
from turnstream.core.ingest import Reason, decide, turn_scoped
from turnstream.core.messages import accepted_for, dead_letter_for
from turnstream.core.rows import rows_for
from turnstream.models import parse_item

NOW = datetime(2026, 9, 29, 14, 3, tzinfo=UTC)


def _scoped(scope: str | None, **more: Any) -> dict[str, Any]:
    pref = {
        "kind": "preference",
        "attr": "item_variant.color",
        "op": "in",
        "values": ["azul", "blue", "añil"],
        "strength": "prefer",
        "source": "stated",
        **more,
    }
    return pref if scope is None else {**pref, "scope": scope}


def _turn(*interactions: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "type": "turn",
            "space_id": "acme",
            "idempotency_key": "turn-scope-1",
            "profile_id": "p_1",
            "source": "whatsapp",
            "occurred_at": "2026-09-29T14:02:11Z",
            "turn_id": "t1",
            "agent": "sales",
            "interactions": list(interactions),
        }
    ).encode()


def test_a_batch_preference_of_turn_scope_is_refused_naming_the_field() -> None:
    decision = decide(_pref(interaction=_scoped("turn")), SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.turn_scope
    assert decision.refusal.field_path == "interaction.scope"
    assert "never reaches the server" in decision.refusal.message
    rows = rows_for(decision, SETTINGS, NOW)
    assert rows["interactions"] == []
    [letter] = rows["dead_letters"]
    assert (letter["reason"], letter["field_path"]) == ("turn_scope", "interaction.scope")


def test_its_dead_letter_keeps_the_digest_not_the_bytes() -> None:
    raw = _pref(interaction=_scoped("turn"))
    letter = json.loads(dead_letter_for(decide(raw, SRC, SETTINGS, never), NOW))
    assert letter["original"] == "" and letter["original_size"] == len(raw)
    assert "añil" not in json.dumps(letter) and "blue" not in json.dumps(letter)
    # Another refusal keeps its bytes (that is the dead-letter topic's job).
    other = _pref(occurred_at="yesterday")
    kept = json.loads(dead_letter_for(decide(other, SRC, SETTINGS, never), NOW))
    assert base64.b64decode(kept["original"]) == other


def test_session_and_persistent_scopes_are_kept() -> None:
    for scope in (None, "session", "persistent"):
        decision = decide(_pref(interaction=_scoped(scope)), SRC, SETTINGS, never)
        assert decision.item is not None and decision.refusal is None, scope


def test_a_turn_stands_without_its_turn_scope_preferences() -> None:
    seen = {"kind": "seen", "exposure_id": "0190d5a4-1c2b-7d3e-8f4a-123456789abc",
            "max_index_seen": 3}  # fmt: skip
    raw = _turn(seen, _scoped("turn"), _scoped("session", values=["verde"]), _scoped("turn"))
    decision = decide(raw, SRC, SETTINGS, never)
    assert decision.item is not None and decision.keep_interactions
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.turn_scope
    assert decision.refusal.field_path == "interactions.1.scope"
    assert "(2 dropped)" in decision.refusal.message
    rows = rows_for(decision, SETTINGS, NOW)
    assert [r["kind"] for r in rows["interactions"]] == ["seen", "preference"]
    assert "verde" in rows["interactions"][1]["payload"]
    assert rows["turns"][0]["interactions"] == 2
    assert [r["reason"] for r in rows["dead_letters"]] == ["turn_scope"]
    fanned = accepted_for(decision)
    assert b'"turn"' not in fanned.replace(b'"type":"turn"', b"") and b"blue" not in fanned
    assert b"verde" in fanned


def test_a_correction_of_turn_scope_is_refused() -> None:
    raw = _pref(
        type="command",
        command="correct",
        inference_id="inf_1",
        replacement=_scoped("turn", source="correction"),
    )
    decision = decide(raw, SRC, SETTINGS, never)
    assert decision.item is None
    assert decision.refusal is not None
    assert (decision.refusal.reason, decision.refusal.field_path) == (
        Reason.turn_scope,
        "replacement.scope",
    )


def test_turn_scoped_lists_every_path() -> None:
    item = parse_item(_turn(_scoped("turn"), _scoped(None), _scoped("turn")))
    assert turn_scoped(item) == ["interactions.0.scope", "interactions.2.scope"]
    assert turn_scoped(parse_item(_pref())) == []


def test_a_later_error_names_the_producers_index_not_the_filtered_one() -> None:
    # Item 0 is dropped (turn scope), item 2 names a field the types do not declare: the
    # path counts the producer's list (2), not the list left after the drop (1).
    settings = Settings.model_validate(
        {
            "identity": {"secret": "s3cret"},
            "spaces": {"acme": {"features": ["signals", "turns"], "types": str(EXAMPLE_TYPES)}},
        }
    )
    raw = _turn(
        _scoped("turn"),
        _scoped("session", values=["verde"]),
        _scoped("session", attr="item_variant.flavour"),
    )
    decision = decide(raw, SRC, settings, never)
    assert decision.item is not None and not decision.keep_interactions  # the turn stands
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.unknown_field
    assert decision.refusal.field_path == "interactions.2.attr"
    assert "item_variant.flavour" in decision.refusal.message
    [letter] = rows_for(decision, settings, NOW)["dead_letters"]
    assert letter["field_path"] == "interactions.2.attr"
    # Without a drop the same item is at the same index.
    kept = decide(
        _turn(_scoped("session"), _scoped("session"), _scoped(None, attr="item_variant.flavour")),
        SRC,
        settings,
        never,
    )
    assert kept.refusal is not None and kept.refusal.field_path == "interactions.2.attr"
