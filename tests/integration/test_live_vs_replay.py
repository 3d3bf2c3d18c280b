"""One event file, two drivers: the live worker (real broker, processing time) and
``turnstream replay`` (no broker, event time) end with the same exposures and inferences,
although live, outcomes and commands (their own topics) overtake the interactions they
follow; and with an ``erase`` in the stream, with the same rows everywhere (one erase
policy, :mod:`turnstream.core.erasure`, for both), also when events of the erased person
that occurred before the erase arrive after it, before and after a restart."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.fixtures.queries import read_many, read_one
from turnstream.adapters.clickhouse.summary import SUMMARY_SQL
from turnstream.core.identity import resolve_profile
from turnstream.core.sql_gate import PRIVATE_TABLES
from turnstream.errors import InvalidItem
from turnstream.models import InteractionItem, parse_item
from turnstream_dev.sample import sample_day

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
    stats = live.worker.stats()
    assert stats["derivations"] > 0
    assert stats["derivation_cpu_seconds"] > 0  # the store thread's time for them
    live.worker.stop()

    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True,
    )  # fmt: skip

    queries = {
        "exposures": EXPOSURE_SQL,
        "inferences": INFERENCE_SQL,
        "raw": "SELECT count() AS n FROM interactions",
    }
    live_rows = read_many(live.config, live.settings.store.dsn, queries)
    assert len(live_rows["exposures"]) > 100 and len(live_rows["inferences"]) > 50
    kinds = {i["kind"] for i in live_rows["inferences"]}
    assert kinds >= {"affinity", "interest", "implicit_negative"}  # the day derives things
    assert read_many(live.config, replay_dsn, queries) == live_rows


def _most_active(lines: list[bytes], space_id: str, secret: bytes) -> str:
    """The profile id with the most interaction items in ``space_id``."""
    counts: dict[str, int] = {}
    for raw in lines:
        try:
            item = parse_item(raw)
        except InvalidItem:
            continue
        if isinstance(item, InteractionItem) and item.space_id == space_id:
            profile_id = resolve_profile(item, secret)
            counts[profile_id] = counts.get(profile_id, 0) + 1
    return max(counts, key=lambda p: (counts[p], p))


TABLES_WITH_PROFILE_SQL = (
    "SELECT c.table AS table FROM system.columns AS c INNER JOIN system.tables AS t "
    "ON c.database = t.database AND c.table = t.name WHERE c.database = currentDatabase() "
    "AND c.name = 'profile_id' AND t.engine NOT IN ('View', 'MaterializedView') "
    "ORDER BY c.table"
)


def _rows_of_sql(tables: list[str], profile_id: str) -> str:
    """The person's rows in each of ``tables`` (those with a profile id, not views)."""
    assert re.fullmatch(r"p_[0-9a-f]{32}", profile_id)  # safe to write into the query
    # The analysts' SQL (`turnstream sql`) refuses the tables no analyst reads; an erase
    # reaching them is tested in tests/integration/clickhouse/test_sensitive_stated.py.
    return " UNION ALL ".join(
        f"SELECT '{t}' AS t, count() AS n FROM {t} WHERE profile_id = '{profile_id}'"
        for t in tables
        if t not in PRIVATE_TABLES
    )


def _counts(rows: list[dict]) -> dict[str, int]:
    return {r["t"]: int(r["n"]) for r in rows}


def _late_copies(lines: list[bytes], subject: str, secret: bytes, n: int) -> list[bytes]:
    """``n`` of the subject's interaction items again under new keys: events that
    occurred before the erase (the day's) but arrive after it."""
    out = []
    for raw in lines:
        try:
            item = parse_item(raw)
        except InvalidItem:
            continue
        if isinstance(item, InteractionItem) and resolve_profile(item, secret) == subject:
            data = json.loads(raw)
            data["idempotency_key"] = f"late-{len(out)}"
            out.append(json.dumps(data).encode())
            if len(out) == n:
                return out
    raise AssertionError("the subject has too few interactions")


def _not_kept(rows: dict[str, int]) -> dict[str, int]:
    """The person's rows but their erase tombstone (which holds the profile id alone)."""
    return {t: n for t, n in rows.items() if t != "erase_tombstones"}


def test_live_and_replay_erase_the_same(deployment_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    day = (datetime.now(UTC) - timedelta(days=1)).date()
    lines = sample_day(day, seed=5)
    live = deployment_factory(extra=FAST_TRIGGERS)
    subject = _most_active(lines, "lumen", live.settings.secret_bytes())
    erase = json.dumps(
        {
            "type": "command",
            "space_id": "lumen",
            "idempotency_key": "erase-the-most-active",
            "profile_id": subject,
            "source": "privacy-desk",
            "occurred_at": f"{day.isoformat()}T23:59:59Z",
            "command": "erase",
        }
    ).encode()
    late = _late_copies(lines, subject, live.settings.secret_bytes(), 2)
    events = tmp_path / "day.jsonl"
    events.write_bytes(b"\n".join([*lines, erase, *late]) + b"\n")

    # Live: the day, derived; then the erase (commands have a topic of their own, so it
    # is published after the rest has landed: the file's order, which replay follows).
    live.worker.start()
    live.publish(lines)
    live.drain()
    live.drain_signals()
    live_dsn = live.settings.store.dsn
    tables = [r["table"] for r in read_one(live.config, live_dsn, TABLES_WITH_PROFILE_SQL)]
    before = _counts(read_one(live.config, live_dsn, _rows_of_sql(tables, subject)))
    assert before["interactions"] > 0 and before["exposure_items"] > 0  # something to erase
    live.publish([erase])
    live.drain()
    live.drain_signals()
    # Late: one of their events from before the erase, then another after a restart
    # (the tombstone is read back from the store).
    live.publish(late[:1])
    live.drain()
    live.drain_signals()
    assert live.worker.stats()["erased_before_arrival"] == 1
    live.worker.stop()
    live.worker.start()
    live.publish(late[1:])
    live.drain()
    live.drain_signals()
    assert live.worker.stats()["erased_before_arrival"] == 1
    live.worker.stop()

    replay_dsn = f"chdb://{tmp_path / 'replayed'}"
    replayed = subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(live.config),
         "--dsn", replay_dsn, str(events)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    assert "1 erasures, 2 forgotten" in replayed.stdout

    queries = {
        "rows": _rows_of_sql(tables, subject),
        "tombstones": "SELECT profile_id, toString(max(erased_through)) AS through "
        "FROM erase_tombstones GROUP BY profile_id",
        "summary": SUMMARY_SQL,
        "exposures": EXPOSURE_SQL,
        "inferences": INFERENCE_SQL,
    }
    read = {dsn: read_many(live.config, dsn, queries) for dsn in (live_dsn, replay_dsn)}
    for dsn, found in read.items():
        rows = _counts(found["rows"])
        assert set(_not_kept(rows).values()) == {0}, dsn
        assert rows["erase_tombstones"] >= 1, dsn
        through = f"{day.isoformat()} 23:59:59.000000"
        assert found["tombstones"] == [{"profile_id": subject, "through": through}], dsn

    def counts(dsn: str) -> dict[str, int]:
        return {r["table"]: int(r["rows"]) for r in read[dsn]["summary"]}

    assert counts(replay_dsn) == counts(live_dsn)
    assert counts(live_dsn)["interactions"] > 0
    exposures = read[live_dsn]["exposures"]
    assert len(exposures) > 100  # the others' exposures stay
    assert read[replay_dsn]["exposures"] == exposures
    assert read[replay_dsn]["inferences"] == read[live_dsn]["inferences"]
