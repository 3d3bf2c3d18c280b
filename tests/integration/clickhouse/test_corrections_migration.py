"""Migration 18: correction rows written before migration 13 (all ``self``) restated in
the bucket of the inference they correct, as migration 13's rule states new ones."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.schema import MIGRATIONS, apply_migrations
from turnstream.adapters.clickhouse.store import Store

pytestmark = pytest.mark.integration

NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
KID = "beneficiary:kid"
STATED = "SELECT id, profile_id, `for` FROM stated FINAL ORDER BY id"


def _inference(store: Store, space: str, profile: str, inference_id: str, for_: str) -> None:
    columns = ["id", "space_id", "profile_id", "for", "kind", "attr", "value", "status",
               "created_at", "updated_at", "version"]  # fmt: skip
    row = [inference_id, space, profile, for_, "affinity", "item_variant.color", "azul",
           "active", NOW, NOW, 1]  # fmt: skip
    store.insert("inferences", [row], columns)


def _correction(
    store: Store, key: str, space: str, profile: str, inference_id: str, for_: str | None = None
) -> None:
    replacement = {"kind": "preference", "attr": "item_variant.color", "op": "in",
                   "values": ["verde", "green", "añil"], "strength": "prefer",
                   "source": "correction"}  # fmt: skip
    if for_ is not None:
        replacement["for"] = for_
    columns = ["space_id", "profile_id", "source", "idempotency_key", "occurred_at",
               "command", "inference_id", "replacement", "ingested_at", "_topic",
               "_partition", "_offset"]  # fmt: skip
    row = [space, profile, "privacy-desk", key, NOW, "correct", inference_id,
           json.dumps(replacement, ensure_ascii=False), NOW, "t.commands", 0,
           int(uuid.uuid4().int % 1_000_000)]  # fmt: skip
    store.insert("commands", [row], columns)


def test_pre_13_corrections_are_restated_in_the_corrected_bucket_once(chdb_path: Path) -> None:
    store = Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}")
    try:
        assert apply_migrations(store, until=12)[-1] == 12
        _inference(store, "acme", "p_ana", "inf_kid", KID)
        _inference(store, "acme", "p_ana", "inf_own", "self")
        # The same inference id of the same profile in another space is another inference.
        _inference(store, "lumen", "p_ana", "inf_kid", "self")
        _correction(store, "c1", "acme", "p_ana", "inf_kid")  # a beneficiary's: was `self`
        _correction(store, "c2", "acme", "p_ana", "inf_own")  # the person's own: stays
        _correction(store, "c3", "acme", "p_ana", "inf_gone")  # unknown inference: `self`
        _correction(store, "c4", "acme", "p_ana", "inf_own", for_="gift")  # its own `for`
        _correction(store, "c5", "lumen", "p_ana", "inf_kid")  # lumen's is `self`
        # No merge collapses the replaced rows while the test counts them.
        store.command("SYSTEM STOP MERGES stated")
        before = store.query(STATED).rows
        assert {for_ for _, _, for_ in before} == {"self"}  # what migration 6 wrote

        applied = apply_migrations(store)
        assert 13 in applied and 18 in applied
        # A correction stated after migration 13, by its rule (the read side fills `for`).
        _correction(store, "c6", "acme", "p_ana", "inf_kid", for_=KID)
        expected = [
            ("c1", "p_ana", KID),
            ("c2", "p_ana", "self"),
            ("c3", "p_ana", "self"),
            ("c4", "p_ana", "gift"),
            ("c5", "p_ana", "self"),
            ("c6", "p_ana", KID),
        ]
        assert store.query(STATED).rows == expected
        # Only the rows whose bucket changed were written again (c1, c4).
        raw = store.scalar("SELECT count() FROM stated")
        assert raw == 6 + 2

        # Idempotent: its statements again change nothing, not even the raw row count.
        [migration] = [m for m in MIGRATIONS if m.version == 18]
        for statement in migration.statements:
            store.command(statement)
        assert store.query(STATED).rows == expected
        assert store.scalar("SELECT count() FROM stated") == raw
        # The payload and the time are the correction's own.
        [(payload, occurred_at)] = store.query(
            "SELECT payload, occurred_at FROM stated FINAL WHERE id = 'c1'"
        ).rows
        assert json.loads(payload)["values"] == ["verde", "green", "añil"]
        assert occurred_at.replace(tzinfo=UTC) == NOW
    finally:
        store.command(f"DROP DATABASE IF EXISTS {store.database}")
        store.close()
