"""The ingest rule against a space's object types: an unknown ``type.field`` in a
preference, an attribute or a correction is refused with its path (issue #17)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.test_ingest import SRC, _pref, never
from turnstream.config import Settings
from turnstream.core.ingest import Reason, decide
from turnstream.core.messages import accepted_for

EXAMPLE_TYPES = Path(__file__).resolve().parents[3] / "examples" / "types.toml"


@pytest.fixture(scope="module")
def settings() -> Settings:
    features = ["signals", "claims", "turns"]
    return Settings.model_validate(
        {
            "identity": {"secret": "s3cret"},
            "spaces": {
                "acme": {"features": features, "types": str(EXAMPLE_TYPES)},
                "loose": {"features": features},
            },
        }
    )


def _interaction(**interaction: Any) -> dict[str, Any]:
    body = json.loads(_pref())
    body["interaction"] = interaction
    return body


def test_a_declared_field_is_accepted(settings: Settings) -> None:
    decision = decide(_pref(), SRC, settings, never)
    assert decision.item is not None and decision.refusal is None


@pytest.mark.parametrize(
    ("interaction", "message"),
    [
        (
            {"kind": "preference", "attr": "item_variant.colour", "op": "eq",
             "values": ["navy"], "strength": "prefer", "source": "stated"},
            "unknown field item_variant.colour: 'item_variant' declares no field 'colour'",
        ),
        (
            {"kind": "attribute", "attr": "shopper.size", "value": "M", "source": "stated"},
            "unknown field shopper.size: type 'shopper' is not declared",
        ),
    ],
)  # fmt: skip
def test_an_unknown_field_goes_to_dead_letters_with_its_path(
    settings: Settings, interaction: dict[str, Any], message: str
) -> None:
    raw = json.dumps(_interaction(**interaction)).encode()
    decision = decide(raw, SRC, settings, never)
    assert decision.item is None
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.unknown_field
    assert decision.refusal.field_path == "interaction.attr"
    assert decision.refusal.message.startswith(message)
    # A space without a types document checks nothing: the same item is accepted.
    loose = json.loads(raw) | {"space_id": "loose"}
    assert decide(json.dumps(loose).encode(), SRC, settings, never).refusal is None


def test_a_turn_stands_without_its_interactions_when_one_names_an_unknown_field(
    settings: Settings,
) -> None:
    good = json.loads(_pref())["interaction"]
    bad = good | {"attr": "item_variant.price_tier"}
    turn = {
        "type": "turn", "space_id": "acme", "idempotency_key": "turn-9", "profile_id": "p_1",
        "source": "web", "occurred_at": "2026-09-29T14:02:11Z", "turn_id": "t9",
        "agent": "sales", "interactions": [good, bad],
    }  # fmt: skip
    decision = decide(json.dumps(turn).encode(), SRC, settings, never)
    assert decision.item is not None  # the turn is kept
    assert decision.refusal is not None
    assert decision.refusal.reason is Reason.unknown_field
    assert decision.refusal.field_path == "interactions.1.attr"
    assert "2 interactions refused" in decision.refusal.message
    assert not decision.keep_interactions
    assert json.loads(accepted_for(decision))["interactions"] == []


def test_a_correction_to_an_unknown_field_is_refused(settings: Settings) -> None:
    command = {
        "type": "command", "space_id": "acme", "idempotency_key": "c-1", "profile_id": "p_1",
        "source": "profile-api", "occurred_at": "2026-09-29T14:02:11Z", "command": "correct",
        "inference_id": "inf_1",
        "replacement": {"kind": "attribute", "attr": "person.shoesize", "value": 42,
                        "source": "correction"},
    }  # fmt: skip
    decision = decide(json.dumps(command).encode(), SRC, settings, never)
    assert decision.refusal is not None and decision.item is None
    assert decision.refusal.field_path == "replacement.attr"
