"""One event file, two drivers: the live worker (real broker, processing time) and
``turnstream replay`` (no broker, event time) end with the same exposures and inferences,
although live, outcomes and commands (their own topics) overtake the interactions they
follow."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from turnstream.dev.sample import sample_day

pytestmark = pytest.mark.integration

FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"
EXPOSURE_SQL = (
    "SELECT space_id, profile_id, `for`, ref, effective_exposure, exposures "
    "FROM effective_exposure ORDER BY ALL"
)
INFERENCE_SQL = (
    "SELECT id, space_id, profile_id, `for`, kind, attr, value, polarity, weight, confidence, "
    "effective_exposure, weighted_signal, events, sessions, lift, exposures, origin_events, "
    "applies, status FROM inferences FINAL WHERE status != 'retracted' ORDER BY id"
)


def _sql(config: Path, dsn: str, sql: str) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "turnstream", "sql", "--config", str(config), "--dsn", dsn,
         "--format", "json", sql],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(out.stdout)


def test_live_and_replay_derive_the_same(deployment_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    day = (datetime.now(UTC) - timedelta(days=1)).date()
    lines = sample_day(day, seed=21)
    events = tmp_path / "day.jsonl"
    events.write_bytes(b"\n".join(lines) + b"\n")

    live = deployment_factory(extra=FAST_TRIGGERS)
    live.worker.start()
    live.publish(lines)
    live.drain()
    live.drain_signals()
    assert live.worker.stats()["derivations"] > 0
    live.worker.stop()

    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True,
    )  # fmt: skip

    live_dsn = live.settings.store.dsn
    exposures = _sql(live.config, live_dsn, EXPOSURE_SQL)
    inferences = _sql(live.config, live_dsn, INFERENCE_SQL)
    assert len(exposures) > 100 and len(inferences) > 50  # the day really derives things
    assert {i["kind"] for i in inferences} >= {"affinity", "interest", "implicit_negative"}
    assert _sql(live.config, replay_dsn, EXPOSURE_SQL) == exposures
    assert _sql(live.config, replay_dsn, INFERENCE_SQL) == inferences
    raw = "SELECT count() AS n FROM interactions"
    assert _sql(live.config, replay_dsn, raw) == _sql(live.config, live_dsn, raw)
