"""Whose rows in the store: an outcome's and a correction's ``for`` reach their tables,
and the gift bucket's rows go after ``gift_days`` (migration 13), on real chDB."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.config import Settings
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import rows_for

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {"identity": {"secret": "k"}, "spaces": {"acme": {"features": ["signals", "turns"]}}}
)
NOW = datetime.now(UTC)


def _write(store: Store, *items: dict) -> None:
    rows: dict[str, list] = {}
    for offset, item in enumerate(items):
        raw = json.dumps(item).encode()
        decision = decide(raw, Source("turnstream.x", 0, offset), SETTINGS, lambda _: None)
        assert decision.item is not None, decision.refusal
        for table, batch in rows_for(decision, SETTINGS, NOW).items():
            rows.setdefault(table, []).extend(batch)
    RawSink(store).write(rows)


def _envelope(key: str, kind: str) -> dict:
    return {"type": kind, "space_id": "acme", "idempotency_key": key, "profile_id": "p_1",
            "source": "web", "occurred_at": NOW.isoformat()}  # fmt: skip


def test_an_outcomes_for_and_a_corrections_for_are_kept(store: Store) -> None:
    purchase = {**_envelope("o1", "outcome"), "outcome": "purchase", "ref": "item_variant:a:1",
                "order_id": "ord-1", "for": "beneficiary:kid", "attrs": {"size": "P"}}  # fmt: skip
    plain = {**_envelope("o2", "outcome"), "outcome": "kept", "ref": "item_variant:a:1",
             "order_id": "ord-1"}  # fmt: skip
    replacement = {"kind": "attribute", "attr": "person.clothing_size", "value": "P",
                   "source": "correction", "for": "beneficiary:kid"}  # fmt: skip
    correct = {**_envelope("c1", "command"), "command": "correct", "inference_id": "inf_1",
               "replacement": replacement}  # fmt: skip
    old = {**_envelope("c2", "command"), "command": "correct", "inference_id": "inf_2",
           "replacement": {**replacement, "for": None}}  # fmt: skip
    _write(store, purchase, plain, correct, old)
    found = store.query("SELECT order_id, idempotency_key, `for` FROM outcomes ORDER BY 2").rows
    assert found == [("ord-1", "o1", "beneficiary:kid"), ("ord-1", "o2", "self")]
    stated = store.query("SELECT id, `for` FROM stated FINAL ORDER BY id").rows
    assert stated == [("c1", "beneficiary:kid"), ("c2", "self")]


def test_the_gift_buckets_rows_go_after_seven_days(store: Store) -> None:
    old, fresh = NOW - timedelta(days=8), NOW - timedelta(days=6)
    columns = ["space_id", "profile_id", "for", "exposure_id", "list_id", "page", "pos", "ref",
               "weight", "method", "delivered_at", "version"]  # fmt: skip
    store.insert(
        "exposure_items",
        [["acme", "p_1", whose, f"e-{whose}-{i}", "l", 1, 1, "r", 1.0, "bridge", when, 1]
         for i, when in enumerate((old, fresh)) for whose in ("gift", "self")],
        columns,
    )  # fmt: skip
    store.command("OPTIMIZE TABLE exposure_items FINAL")
    kept = store.query("SELECT exposure_id FROM exposure_items ORDER BY 1").rows
    assert kept == [("e-gift-1",), ("e-self-0",), ("e-self-1",)]
