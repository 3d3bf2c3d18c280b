"""Keys and roles against a running worker on the real broker: every route with the right
key, no key, a bad key, a key without the role, another space's key; revocation through
the CLI without a restart; ``/v1/sql`` kept read-only by the SQL gate, and ingestion
going on after its refusals."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fixtures.http import call
from turnstream.adapters.api_key_file import KeyFile
from turnstream.core.access import ALL_SPACES, Role, mint_key
from turnstream.entrypoints.cli.main import app
from turnstream.entrypoints.http.access import ROUTES
from turnstream.entrypoints.http.route_table import ROUTE_TABLE, Space
from turnstream_dev.deployment import Deployment, new_deployment

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Case:
    """One route: how to call it for a space, and what a permitted call answers."""

    method: str
    template: str
    call: Callable[[str], tuple[str, Any]]  # space -> (path, body)
    allowed: int

    @property
    def per_space(self) -> bool | None:
        """From the table's space rule: False for routes over every space (their space is
        not the request's); None for a route whose space is the named object's (an
        experiment's arms: another space's key gets the 404 of a missing one,
        test_experiments_http.py)."""
        [route] = [r for r in ROUTE_TABLE if (r.method, r.path) == (self.method, self.template)]
        return {Space.every: False, Space.of_object: None}.get(route.space, True)


REPLACEMENT = {"kind": "preference", "attr": "item_variant.color", "op": "in",
               "values": ["blue"], "strength": "prefer", "source": "stated"}  # fmt: skip
P = "/v1/profiles/p_roles"
CASES = [
    Case("POST", "/v1/constraints",
         lambda s: ("/v1/constraints", {"space_id": s, "profile_id": "p_roles"}), 200),
    Case("GET", "/v1/profiles/{profile_id}/inferences",
         lambda s: (f"{P}/inferences?space_id={s}", None), 200),
    Case("POST", "/v1/profiles/{profile_id}/inferences/{inference_id}/correct",
         lambda s: (f"{P}/inferences/inf_1/correct",
                    {"space_id": s, "replacement": REPLACEMENT}), 404),  # passed: no such
    Case("DELETE", "/v1/profiles/{profile_id}/inferences/{inference_id}",
         lambda s: (f"{P}/inferences/inf_1?space_id={s}", None), 404),  # passed: no such
    Case("POST", "/v1/profiles/{profile_id}/traits/opt-out",
         lambda s: (f"{P}/traits/opt-out", {"space_id": s}), 202),
    Case("POST", "/v1/profiles/{profile_id}/review-requests",
         lambda s: ("/v1/profiles/p_nobody/review-requests",
                    {"space_id": s, "receipts": ["r1"]}),
         404),  # passed the keys: nobody the store knows (p_roles's opt-out makes it known)
    Case("POST", "/v1/profiles/{profile_id}/review-requests/{request_id}/resolve",
         lambda s: (f"{P}/review-requests/rr_none/resolve",
                    {"space_id": s, "decision": "upheld"}), 404),  # passed the keys: no such
    Case("GET", "/v1/context-use", lambda s: (f"/v1/context-use?space_id={s}", None), 200),
    Case("GET", "/v1/sdk/profile",
         lambda s: (f"/v1/sdk/profile?space_id={s}&source=web", None), 200),
    Case("GET", "/v1/experiments", lambda s: (f"/v1/experiments?space_id={s}", None), 200),
    Case("GET", "/v1/experiments/{experiment_id}/arms",
         lambda s: ("/v1/experiments/no_such/arms", None), 404),
    Case("POST", "/v1/sql", lambda s: ("/v1/sql", {"sql": "SELECT 1 AS one"}), 200),
    Case("POST", "/v1/jobs/{name}/", lambda s: ("/v1/jobs/no-such-job/", {}), 400),
]  # fmt: skip


@pytest.fixture(scope="module")
def worker(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    deployment = new_deployment(kafka_broker, tmp_path_factory.mktemp("roles"))
    deployment.worker.start()
    yield deployment
    deployment.worker.stop()


def test_every_route_is_in_the_cases() -> None:
    protected = {route for route, access in ROUTES.items() if access is not None}
    assert {(c.method, c.template) for c in CASES} == protected


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.method} {c.template}")
def test_each_route_allows_its_role_and_refuses_the_rest(worker: Deployment, case: Case) -> None:
    access = ROUTES[case.method, case.template]
    assert access is not None
    path, body = case.call("acme")

    # No key, a malformed key, an unknown key: the same 401, with a challenge.
    no_key = call(worker, case.method, path, body)
    assert no_key[0] == 401 and no_key[2]["WWW-Authenticate"].startswith("Bearer")
    fake = "tsk_000000000000_" + "A" * 43
    for bad in ("not-a-key", fake, worker.operator_key[:-2] + "xx"):
        status, answer, _ = call(worker, case.method, path, body, bad)
        assert (status, answer) == (401, no_key[1])

    # The right role: for routes of a space, a key of that space; else an operator's.
    right = worker.new_key("acme" if case.per_space else ALL_SPACES, access.role)
    status, answer, _ = call(worker, case.method, path, body, right)
    assert status == case.allowed, answer

    # Every other role, but not this one: 403 naming the role.
    others = [r for r in Role if r != access.role]
    wrong = worker.new_key(ALL_SPACES, *others)
    status, answer, _ = call(worker, case.method, path, body, wrong)
    assert status == 403 and access.role.value in answer["error"]

    if case.per_space:
        # Another space's key with the right role: 403, the same for a space that does
        # not exist (nothing tells which spaces there are).
        lumen = worker.new_key("lumen", access.role)
        other = call(worker, case.method, path, body, lumen)
        assert other[0] == 403 and "space" in other[1]["error"]
        ghost_path, ghost_body = case.call("ghost")
        assert call(worker, case.method, ghost_path, ghost_body, right)[:2] == other[:2]
        # The operator's key reaches every space.
        status, answer, _ = call(worker, case.method, path, body, worker.operator_key)
        assert status == case.allowed, answer
    elif case.per_space is False:
        # A key of one space, even with the role, cannot reach every space's tables.
        one_space = worker.new_key("acme", access.role)
        status, answer, _ = call(worker, case.method, path, body, one_space)
        assert status == 403 and "every space" in answer["error"]


def test_status_is_open_and_shows_no_store_or_error_text_without_a_key(worker) -> None:  # type: ignore[no-untyped-def]
    worker.worker.wait_healthy(timeout=90)  # each loop has reached the broker
    status, open_body, _ = call(worker, "GET", "/v1/status")
    assert status == 200 and "ingest" in open_body and "messages" in open_body
    assert open_body["healthy"] is True and open_body["failing"] == []
    assert open_body["store"]["state"] == "reachable" and "address" not in open_body["store"]
    assert open_body["ingest"]["state"] == "running"
    assert open_body["ingest"]["last_error"] is None
    status, full, _ = call(worker, "GET", "/v1/status", key=worker.operator_key)
    assert status == 200 and full["store"]["address"].startswith("chdb://")
    # A key without the operator role sees what anyone sees.
    agent = worker.new_key("acme", Role.agent)
    assert "address" not in call(worker, "GET", "/v1/status", key=agent)[1]["store"]


def test_faust_own_pages_are_not_served(worker) -> None:  # type: ignore[no-untyped-def]
    for path in ("/", "/router/", "/table/", "/stats/", "/graph/", "/v1/nothing"):
        assert call(worker, "GET", path)[0] == 401  # no key: nothing said, not even 404
        assert call(worker, "GET", path, key=worker.operator_key)[0] == 404


def _cli(worker: Deployment, *args: str) -> str:
    """``turnstream keys ...`` on the deployment's config, its stdout. In this process
    (a start of ``python -m turnstream`` is 2-8 s), without the environment's
    ``TURNSTREAM_*`` variables: the config file alone configures it."""
    unset: dict[str, str | None] = {k: None for k in os.environ if k.startswith("TURNSTREAM")}
    done = CliRunner(env=unset).invoke(app, ["keys", *args, "--config", str(worker.config)])
    assert done.exit_code == 0, (done.output, done.exception)
    return done.stdout


def test_keys_from_the_cli_and_revocation_within_a_second(worker) -> None:  # type: ignore[no-untyped-def]
    key = _cli(worker, "create", "--space", "acme", "--role", "agent,security").strip()
    assert key.startswith("tsk_")
    key_id = key.split("_")[1]
    listed = _cli(worker, "list", "--format", "csv")
    assert key_id in listed and key not in listed and key.split("_", 2)[2] not in listed
    assert key not in worker.settings.keys_path().read_text()

    body = {"space_id": "acme", "profile_id": "p_revoke"}
    assert call(worker, "POST", "/v1/constraints", body, key)[0] == 200
    _cli(worker, "revoke", key_id)
    revoked_at = time.monotonic()
    status = call(worker, "POST", "/v1/constraints", body, key)[0]
    elapsed = time.monotonic() - revoked_at
    # The first request after the command returns is refused: no restart, no wait.
    print(f"\nrevoked, then refused {elapsed * 1000:.0f} ms later (one request)")
    assert status == 401 and elapsed < 1.0, (status, elapsed)
    assert f"{key_id},acme" in _cli(worker, "list", "--format", "csv")


def test_the_operators_first_key_from_a_file_is_added_once(worker, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = worker.settings.keys_path()
    saved = path.read_bytes()
    key, _ = mint_key(os.urandom(6), os.urandom(32), ALL_SPACES, frozenset(Role), "now")
    secret = tmp_path / "turnstream_operator_key"
    secret.write_text(key + "\n")
    bootstrap = ("bootstrap", "--key-file", str(secret))
    # The deployment has an operator's key: nothing added, the file's key refused.
    said = _cli(worker, *bootstrap)
    assert "has an operator key" in said and "nothing added" in said
    assert "address" not in call(worker, "GET", "/v1/status", key=key)[1]["store"]
    assert call(worker, "POST", "/v1/sql", {"sql": "SELECT 1"}, key)[0] == 401
    try:
        # Without one (every operator's key revoked, the module's other tests made some),
        # the next start adds it, and the running worker takes it.
        keys = KeyFile(path)
        for held in keys.list():
            if held.active and held.space == ALL_SPACES and Role.operator in held.roles:
                keys.revoke(held.id)
        said = [_cli(worker, *bootstrap) for _ in range(2)]
        assert said[0].startswith(f"added the operator key {key.split('_')[1]}")
        assert "already in" in said[1] and "nothing to do" in said[1]
        assert all(key not in s and key.split("_", 2)[2] not in s for s in said)
        assert key not in path.read_text()
        status, full, _ = call(worker, "GET", "/v1/status", key=key)
        assert status == 200 and full["store"]["address"].startswith("chdb://")
        assert call(worker, "POST", "/v1/sql", {"sql": "SELECT 1 AS one"}, key)[0] == 200
        assert (
            "address" not in call(worker, "GET", "/v1/status", key=worker.operator_key)[1]["store"]
        )
    finally:  # the module's other tests use the deployment's operator key
        restored = path.with_name(".restored")
        restored.write_bytes(saved)
        os.replace(restored, path)
    assert call(worker, "POST", "/v1/sql", {"sql": "SELECT 1"}, key)[0] == 401


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        ("INSERT INTO dead_letters (reason) VALUES ('forged')", "Insert"),
        ("DROP TABLE turns", "Drop"),
        ("CREATE TABLE forged (a Int32) ENGINE = Memory", "Create"),
        ("ALTER TABLE turns DELETE WHERE 1", "Alter"),
        ("TRUNCATE TABLE turns", "Drop"),
        ("SELECT * FROM file('/etc/hostname', 'LineAsString')", "file()"),
        ("SELECT 1 SETTINGS readonly = 0", "SETTINGS"),
        ("SET readonly = 0", "Set"),
        ("SET max_threads = 1", "Set"),
        ("KILL QUERY WHERE 1", "Kill"),
    ],
)
def test_sql_writes_ddl_and_table_functions_are_refused(worker, sql: str, named: str) -> None:  # type: ignore[no-untyped-def]
    count = {"sql": "SELECT count() FROM system.tables WHERE database = currentDatabase()"}
    before = call(worker, "POST", "/v1/sql", count, worker.operator_key)[1]["rows"]
    status, answer, _ = call(worker, "POST", "/v1/sql", {"sql": sql}, worker.operator_key)
    # Refused by the gate, which names what (ClickHouse's parse, not a reading of the text).
    assert status == 400 and named in answer["error"], answer
    assert answer["errors"] == [{"field": "sql", "message": answer["error"]}]
    after = call(worker, "POST", "/v1/sql", count, worker.operator_key)[1]["rows"]
    assert after == before


def test_ingestion_goes_on_after_the_refused_statements(worker) -> None:  # type: ignore[no-untyped-def]
    # Before the gate, one refused INSERT or SET left the worker's own store session
    # read-only: every later insert failed. Refuse each kind again, then publish.
    for sql in ("INSERT INTO dead_letters (reason) VALUES ('x')", "SET max_threads = 1",
                "SELECT 1; DROP TABLE turns"):  # fmt: skip
        assert call(worker, "POST", "/v1/sql", {"sql": sql}, worker.operator_key)[0] == 400
    before = worker.counts().get("interactions", 0)
    at = "2026-12-01T10:00:00Z"
    worker.publish(
        [
            json.dumps(
                {"type": "interaction", "space_id": "acme", "profile_id": f"p_after_{i}",
                 "source": "web", "session_id": "s", "occurred_at": at,
                 "idempotency_key": f"after-refusals-{i}",
                 "interaction": {"kind": "engaged", "ref": "item_variant:acme:1",
                                 "action": "click"}}
            ).encode()
            for i in range(20)
        ]
    )  # fmt: skip
    worker.drain(timeout=90)
    assert worker.counts()["interactions"] == before + 20
    assert call(worker, "GET", "/v1/status")[1]["healthy"] is True
