"""Nothing an analyst's request does changes the worker's store: on a real broker and a
chDB worker, a key for every space with the analyst and operator roles sends each kind of
refused statement (writes, file reads and writes, URL fetches, session changes, several
statements at once); then 300 items land, derivation runs and an erase is applied.
Nothing was written to disk, no URL was fetched, no secret came back in an error."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.http import call
from turnstream.adapters.worker_client import read_query
from turnstream.core.access import ALL_SPACES, Role
from turnstream_dev.deployment import Deployment

pytestmark = pytest.mark.integration

FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"


class _Counter(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"fetched")

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def http_target() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Counter.hits = 0
    yield f"http://127.0.0.1:{server.server_port}/x"
    server.shutdown()
    server.server_close()


def _hostile(deployment: Deployment, out: Path, url: str) -> list[tuple[str, str]]:
    """Each kind of refused statement and a word its refusal names."""
    config, keys = deployment.config, deployment.settings.keys_path()
    return [
        ("SELECT 1; CREATE TABLE default.x (a Int32) ENGINE = Memory; SELECT 2", "statement"),
        (f"SELECT 1; INSERT INTO FUNCTION file('{keys}', 'RawBLOB') SELECT 'x'; SELECT 2",
         "statement"),
        (f"SELECT 1; SELECT * FROM file('{config}', 'RawBLOB'); SELECT 2", "statement"),
        (f"SELECT 1; SELECT * FROM url('{url}', 'RawBLOB')", "statement"),
        (f"SELECT 'x' INTO OUTFILE '{out}'", "INTO OUTFILE"),
        (f"INSERT INTO FUNCTION file('{out}', 'RawBLOB') SELECT 'x'", "Insert"),
        (f"DESCRIBE file('{config}', 'JSONEachRow')", "DESCRIBE"),
        (f"SELECT * FROM file('{config}', 'RawBLOB')", "file()"),
        (f"SELECT file('{config}')", "file()"),
        (f"DESCRIBE url('{url}', 'RawBLOB')", "DESCRIBE"),
        (f"SELECT * FROM url('{url}', 'RawBLOB')", "url()"),
        ("SET max_threads = 1", "Set"),
        ("SET readonly = 0", "Set"),
        ("DROP TABLE turns", "Drop"),
        ("KILL QUERY WHERE 1", "Kill"),
        ("ALTER TABLE interactions DELETE WHERE 1", "Alter"),
        ("INSERT INTO dead_letters (reason) VALUES ('forged')", "Insert"),
        ("TRUNCATE TABLE interactions", "Drop"),
        ("SELECT 1 SETTINGS readonly = 0, max_execution_time = 0", "SETTINGS"),
        ("SELECT * FROM system.processes", "system.processes"),
        ("SELECT table, command FROM system.mutations", "system.mutations"),
        ("SELECT fullHostName()", "fullHostName()"),
        ("SELECT * FROM remote('127.0.0.1', system.one)", "remote()"),
    ]  # fmt: skip


def _click(profile: str, i: int, at: datetime) -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": "acme",
            "profile_id": profile,
            "source": "web",
            "session_id": f"{profile}-s",
            "occurred_at": (at + timedelta(seconds=i)).isoformat(),
            "idempotency_key": f"gate-{profile}-{i}",
            "interaction": {"kind": "engaged", "ref": "item_variant:acme:1", "action": "click"},
        }
    ).encode()


def _secrets(deployment: Deployment) -> list[str]:
    settings = deployment.settings
    found = [
        deployment.operator_key,
        deployment.operator_key.split("_", 2)[2],
    ]  # its secret part may hold "_"
    if settings.identity.secret is not None:
        found.append(settings.identity.secret.get_secret_value())
    for space in settings.spaces.values():
        found += [k.get_secret_value() for k in space.exposure_keys]
    found += [r["sha256"] for r in json.loads(settings.keys_path().read_text()).get("keys", [])]
    return [s for s in found if s]


def _rows(deployment: Deployment, sql: str, **parameters: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in read_query(deployment.settings, sql, parameters or None).rows]


def test_refused_statements_change_nothing_and_ingestion_goes_on(  # type: ignore[no-untyped-def]
    deployment_factory, tmp_path: Path, http_target: str
) -> None:
    deployment = deployment_factory(extra=FAST_TRIGGERS)
    deployment.worker.start()
    deployment.worker.wait_healthy(timeout=90)
    key = deployment.new_key(ALL_SPACES, Role.analyst, Role.operator)
    secrets = _secrets(deployment)
    keys_before = deployment.settings.keys_path().read_bytes()
    tables = "SELECT database, name FROM system.tables WHERE database != 'system' ORDER BY ALL"
    tables_before = _rows(deployment, tables)
    out = tmp_path / "written-by-an-analyst"

    for sql, named in _hostile(deployment, out, http_target):
        status, answer, _ = call(deployment, "POST", "/v1/sql", {"sql": sql}, key)
        assert status == 400 and named in answer["error"], (sql, answer)
        text = json.dumps(answer)
        leaked = [s for s in secrets if s in text]
        assert not leaked, (sql, "a secret in the answer")
        assert "identity" not in text and "[api]" not in text, (sql, answer)

    assert not out.exists()
    assert deployment.settings.keys_path().read_bytes() == keys_before
    assert _Counter.hits == 0, "a statement fetched the URL"
    assert _rows(deployment, tables) == tables_before

    # 300 items land; derivation runs; an erase is applied.
    at = datetime.now(UTC) - timedelta(minutes=10)
    items = [_click(f"p_gate_{p}", i, at) for p in range(29) for i in range(10)]
    items += [_click("p_gate_erase", i, at) for i in range(10)]
    assert len(items) == 300
    before = deployment.counts().get("interactions", 0)
    deployment.publish(items)
    deployment.drain(timeout=120)
    assert deployment.counts()["interactions"] == before + 300
    deployment.drain_signals(timeout=120)
    derived = _rows(
        deployment,
        "SELECT count() FROM signal_state FINAL WHERE startsWith(profile_id, 'p_gate_')",
    )
    assert derived[0][0] == 30, derived

    erase = {
        "type": "command",
        "space_id": "acme",
        "idempotency_key": "gate-erase",
        "profile_id": "p_gate_erase",
        "source": "privacy-desk",
        "occurred_at": datetime.now(UTC).isoformat(),
        "command": "erase",
    }
    deployment.publish([json.dumps(erase).encode()])
    deployment.drain(timeout=120)
    deployment.drain_signals(timeout=120)
    left = "SELECT count() FROM interactions WHERE profile_id = {p:String}"
    deadline = time.monotonic() + 60
    while _rows(deployment, left, p="p_gate_erase")[0][0] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _rows(deployment, left, p="p_gate_erase") == [(0,)]
    assert _rows(deployment, left, p="p_gate_0") == [(10,)]
    tombstones = "SELECT count() FROM erase_tombstones WHERE profile_id = {p:String}"
    assert _rows(deployment, tombstones, p="p_gate_erase")[0][0] >= 1
    status, body, _ = call(deployment, "GET", "/v1/status")
    assert status == 200 and body["healthy"] is True and body["failing"] == []
