"""Sensitive stated values in a real chDB store (issue 36, point 3): a diet said as
"celíaco (doença celíaca)" leaves its words only in ``stated_sensitive``, absent from
every table and view an analyst reads; the block read from the store serves "sem
glúten" and never the words; the erasure of the person removes them."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.clickhouse.analysts import ANALYST_TABLES, ANALYST_VIEWS
from turnstream.adapters.clickhouse.catalog import CATALOG
from turnstream.adapters.clickhouse.erasure import erase_subject
from turnstream.adapters.clickhouse.profile_reads import load_inputs
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.config import Settings
from turnstream.core.constraints import BlockRequest, build_block
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import add_rows
from turnstream.models.object_types import load_types

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "s3cret"},
        "spaces": {"acme": {"features": ["signals", "turns"], "types": str(EXAMPLES)}},
    }
)
WORDS = ("celíac", "doença", "celiac", "doenca")


def _item(key: str, profile: str, interaction: dict[str, Any]) -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": key,
            "profile_id": profile,
            "source": "whatsapp",
            "occurred_at": datetime.now(UTC).isoformat(),
            "interaction": interaction,
        }
    ).encode()


def _write(store: Store, items: list[bytes]) -> None:
    rows: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for offset, raw in enumerate(items):
        decision = decide(raw, Source("in", 0, offset), SETTINGS, lambda _: None)
        assert decision.refusal is None, decision.refusal
        add_rows(rows, decision, SETTINGS, datetime.now(UTC))
    RawSink(store).write(dict(rows))


def _holding_words(store: Store, relation: str) -> int:
    text = json.dumps(store.query(f"SELECT * FROM {relation}").rows, default=str).lower()
    text += json.dumps(store.query(f"SELECT * FROM {relation}").rows, default=str,
                       ensure_ascii=False).lower()  # fmt: skip
    return sum(text.count(w) for w in WORDS)


def test_the_words_stay_apart_serve_the_act_and_go_with_the_person(store: Store) -> None:
    diet = {"kind": "attribute", "attr": "person.diet", "value": "celíaco (doença celíaca)",
            "source": "stated"}  # fmt: skip
    size = {"kind": "attribute", "attr": "person.shoe_size", "value": 41, "source": "stated"}
    _write(store, [_item("d1", "p1", diet), _item("s1", "p1", size), _item("d2", "p2", diet)])

    apart = store.query("SELECT profile_id, id, value FROM stated_sensitive ORDER BY id").rows
    assert [(p, i, json.loads(v)) for p, i, v in apart] == [
        ("p1", "d1#0", "celíaco (doença celíaca)"),
        ("p2", "d2#0", "celíaco (doença celíaca)"),
    ]
    visible = sorted({*ANALYST_TABLES, *ANALYST_VIEWS, *CATALOG})
    assert "stated_sensitive" not in visible
    assert "interactions" in visible and "stated" in visible
    assert {r: _holding_words(store, r) for r in visible if _holding_words(store, r)} == {}
    # The field is still there, counted, without its value.
    [(payload,)] = store.query(
        "SELECT payload FROM stated FINAL WHERE profile_id = 'p1' AND attr = 'person.diet'"
    ).rows
    assert json.loads(payload)["withheld"] is True

    types = load_types(EXAMPLES)
    inputs = load_inputs(store, "acme", "p1", "self")
    for language, line in (("pt", "Obrigatório: sem glúten"), ("en", "Required: gluten-free"),
                           ("es", "Obligatorio: sin gluten")):  # fmt: skip
        block = build_block(
            BlockRequest("acme", "p1", language=language), inputs.preferences,
            inputs.attributes, [], [], [], [], datetime.now(UTC), types=types,
        )  # fmt: skip
        assert line in block["text"].split("\n")
        assert not any(w in json.dumps(block, ensure_ascii=False).lower() for w in WORDS)
        assert "41" in block["text"]  # what is not sensitive is served as said

    erased = erase_subject(store, "acme", "p1")
    assert "stated_sensitive" in erased.tables and erased.deleted["stated_sensitive"] == 1
    left = store.query("SELECT profile_id FROM stated_sensitive").rows
    assert left == [("p2",)]
    gone = load_inputs(store, "acme", "p1", "self")
    assert gone.attributes == []


def test_words_stated_before_the_table_are_sealed_at_start(store: Store) -> None:
    """Rows written before migration 29 (here: while no field was sensitive) hold the
    words; ``seal_stated`` (run at every start) moves them apart, once."""
    from turnstream.adapters.clickhouse.sealing import seal_stated

    before = Settings.model_validate(
        {"identity": {"secret": "s3cret"}, "signals": {"sensitive": []},
         "spaces": {"acme": {"features": ["signals"]}}}
    )  # fmt: skip
    diet = {"kind": "attribute", "attr": "person.diet", "value": "doença celíaca",
            "source": "stated"}  # fmt: skip
    correct = json.dumps({
        "type": "command", "space_id": "acme", "idempotency_key": "fix-1", "profile_id": "p3",
        "source": "console", "occurred_at": datetime.now(UTC).isoformat(), "command": "correct",
        "inference_id": "inf-1",
        "replacement": {**diet, "value": "celíaca", "source": "correction"},
    }).encode()  # fmt: skip
    rows: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for offset, raw in enumerate([_item("old-1", "p3", diet), correct]):
        add_rows(rows, decide(raw, Source("in", 0, offset), before, lambda _: None), before,
                 datetime.now(UTC))  # fmt: skip
    RawSink(store).write(dict(rows))
    assert _holding_words(store, "interactions") and _holding_words(store, "commands")

    assert seal_stated(store, {"person.diet"}) == {"stated": 2, "interactions": 1, "commands": 1}
    assert seal_stated(store, {"person.diet"}) == {}  # once
    visible = sorted({*ANALYST_TABLES, *ANALYST_VIEWS, *CATALOG})
    assert {r: _holding_words(store, r) for r in visible if _holding_words(store, r)} == {}
    assert sorted(r[0] for r in store.query("SELECT id FROM stated_sensitive").rows) == [
        "fix-1", "old-1#0"
    ]  # fmt: skip
    inputs = load_inputs(store, "acme", "p3", "self")
    block = build_block(BlockRequest("acme", "p3", language="pt"), inputs.preferences,
                        inputs.attributes, [], [], [], [], datetime.now(UTC),
                        types=load_types(EXAMPLES))  # fmt: skip
    assert block["text"] == "Obrigatório: sem glúten"


def test_an_allergy_and_a_negation_read_back_from_the_store(store: Store) -> None:
    """Words read back from ``stated_sensitive``: an allergy serves its act, a newer
    negation withdraws an older condition, words nothing reads are asked; none of them
    reaches the block or an analyst's table."""
    said = [
        ("d1", "p4", "alergia grave a amendoim", "2026-12-01T10:00:00+00:00"),
        ("d2", "p4", "celíaco", "2026-12-01T10:00:00+00:00"),
        ("d3", "p5", "diabetes tipo 2", "2026-12-01T10:00:00+00:00"),
        ("d4", "p4", "não sou celíaco, só evito pão", "2026-12-02T10:00:00+00:00"),
    ]
    items = []
    for key, person, value, when in said:
        diet = {"kind": "attribute", "attr": "person.diet", "value": value, "source": "stated"}
        item = json.loads(_item(key, person, diet))
        items.append(json.dumps({**item, "occurred_at": when}).encode())
    _write(store, items)
    visible = sorted({*ANALYST_TABLES, *ANALYST_VIEWS, *CATALOG})
    for relation in visible:
        rows = json.dumps(store.query(f"SELECT * FROM {relation}").rows, default=str,
                          ensure_ascii=False).lower()  # fmt: skip
        assert not any(w in rows for w in ("amendoim", "diabetes", "evito")), relation
    types = load_types(EXAMPLES)
    texts = {}
    for person in ("p4", "p5"):
        inputs = load_inputs(store, "acme", person, "self")
        block = build_block(BlockRequest("acme", person, language="pt"), inputs.preferences,
                            inputs.attributes, [], [], [], [], datetime.now(UTC),
                            types=types)  # fmt: skip
        texts[person] = block["text"].split("\n")
        assert not any(w in json.dumps(block, ensure_ascii=False).lower()
                       for w in ("alergia", "grave", "diabetes", "celíac"))  # fmt: skip
    assert texts == {
        "p4": ["Obrigatório: sem amendoim", "Prefere evitar: pão"],
        "p5": ["Pergunte antes: dieta"],
    }
