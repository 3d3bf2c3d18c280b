"""Sensitive stated values (issue 36, point 3): the agent gets what it must act on (the
act the types document declares: "sem glúten"), never the words of the condition; the
ingest rows keep only the field and put the words apart (``stated_sensitive``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.unit.core.constraints.builders import attribute, block, pref
from turnstream.config import Settings
from turnstream.core.constraints.sensitive import acts_for, normalized, withheld
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import rows_for
from turnstream.models.object_types import load_types, parse_types

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "types.toml"
TYPES = load_types(EXAMPLES)
DIET = "person.diet"
SAID = "celíaco (doença celíaca)"
#: The words of the condition, in any of their forms: none may reach the agent.
CONDITION = ("celiac", "celíac", "doença", "doenca", "celiaco")

ACTED = {
    "pt": "Obrigatório: sem glúten",
    "en": "Required: gluten-free",
    "es": "Obligatorio: sin gluten",
}


@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_the_block_serves_the_act_never_the_words(language: str) -> None:
    got = block(attributes=[attribute("a1", DIET, SAID)], types=TYPES, language=language)
    assert got["text"].split("\n") == [ACTED[language]]
    served = json.dumps(got, ensure_ascii=False).lower()
    assert not any(word in served for word in CONDITION), served
    [row] = got["hard"]
    assert (row["act"], row["relax"], row["source"]) == ("gluten_free", "never", "stated")
    assert got["attributes"] == []
    asked = block(attributes=[attribute("a1", DIET, SAID)], types=TYPES, asked=("diet", "size"))
    assert asked["ask"] == ["item_variant.size"]  # said: never asked again


def test_words_no_act_declares_are_asked_and_a_preference_on_the_field_acts_too() -> None:
    got = block(attributes=[attribute("a1", DIET, "diabetes tipo 2")], types=TYPES, language="pt")
    assert (got["text"], got["hard"], got["attributes"]) == ("Pergunte antes: dieta", [], [])
    assert got["ask"] == [DIET]
    assert "diabetes" not in json.dumps(got)
    said = [
        pref("p1", DIET, "in", ("intolerante à lactose", "vegana"), "must"),
        attribute("a1", DIET, "Celíaca", hours_ago=2),
        attribute("a2", DIET, "celiaca", hours_ago=3),  # said again: one entry
    ]
    got = block(preferences=said[:1], attributes=said[1:], types=TYPES, language="en")
    assert got["text"].split("\n") == [
        "Required: lactose-free",
        "Required: vegan products only",
        "Required: gluten-free",
    ]


def test_acts_match_whole_words_without_case_or_accents() -> None:
    assert normalized("Doença  Celíaca!") == "doenca celiaca"
    names = [n for n, _ in acts_for(TYPES, DIET, "CELÍACO; intolerância à lactose")]
    assert names == ["gluten_free", "lactose_free"]
    assert acts_for(TYPES, DIET, "veganismo") == []  # not the whole word
    assert acts_for(TYPES, "item_variant.color", "celíaco") == []


def test_acts_belong_to_sensitive_fields() -> None:
    field = {"labels": {"pt": "d", "en": "d", "es": "d"}, "role": "attribute", "family": "d"}
    act = {"labels": {"pt": "x", "en": "x", "es": "x"}, "said": ["y"]}
    with pytest.raises(ValidationError, match="sensitive fields only"):
        parse_types({"types": {"person": {"fields": {"d": {**field, "acts": {"x": act}}}}}})


def test_withheld_keeps_the_field_and_returns_the_words() -> None:
    payload = {"kind": "attribute", "attr": DIET, "value": SAID, "source": "stated"}
    kept, words = withheld(payload, lambda attr: attr == DIET) or ({}, "")
    assert kept == {**payload, "value": None, "withheld": True}
    assert json.loads(words) == SAID
    assert withheld({**payload, "attr": "person.age"}, lambda attr: attr == DIET) is None


SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret"},
        "spaces": {"acme": {"features": ["signals", "turns"], "types": str(EXAMPLES)}},
    }
)


def _item(interaction: dict[str, object], key: str = "diet-1") -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": key,
            "profile_id": "p1",
            "source": "whatsapp",
            "occurred_at": "2026-09-29T14:02:11Z",
            "interaction": interaction,
        }
    ).encode()


def test_the_ingest_rows_keep_the_field_and_put_the_words_apart() -> None:
    said = {"kind": "attribute", "attr": DIET, "value": SAID, "source": "stated"}
    decision = decide(_item(said), Source("t", 0, 7), SETTINGS, lambda _: None)
    assert decision.refusal is None
    rows = rows_for(decision, SETTINGS, datetime.now(UTC))
    [row] = rows["interactions"]
    assert json.loads(row["payload"]) == {**said, "value": None, "system": None, "withheld": True}
    assert "celíac" not in json.dumps(rows["interactions"], default=str, ensure_ascii=False)
    [apart] = rows["stated_sensitive"]
    assert (apart["id"], apart["attr"], json.loads(apart["value"])) == ("diet-1#0", DIET, SAID)
    assert (apart["_topic"], apart["_offset"]) == ("t", 7)
    size = {"kind": "attribute", "attr": "person.shoe_size", "value": 41, "source": "stated"}
    decision = decide(_item(size, "size-1"), Source("t", 0, 8), SETTINGS, lambda _: None)
    rows = rows_for(decision, SETTINGS, datetime.now(UTC))
    assert "stated_sensitive" not in rows
    assert json.loads(rows["interactions"][0]["payload"])["value"] == 41
