"""A hostile tenant against the read side of a real worker (broker, chDB): an acme key
reaching for lumen's person and review request by every door (the space in the body
named twice, the query parameter given twice, lumen's ids under acme's space), keys
spelled differently, and ids no item can carry. Each answer is a refusal or acme's own
(empty) data, never lumen's, never a 5xx (docs/api-answers.md, docs/known-limits.md)."""

from __future__ import annotations

import http.client
import json
from datetime import UTC, datetime
from typing import Any

import pytest

from turnstream.core.access import Role
from turnstream_dev.deployment import Deployment, new_deployment

pytestmark = pytest.mark.integration

_UNAUTHENTICATED = 401


@pytest.fixture(scope="module")
def worker(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    deployment = new_deployment(kafka_broker, tmp_path_factory.mktemp("tenant"))
    deployment.worker.start()
    # lumen's person, known to the store, with a review request.
    seen = {"type": "interaction", "space_id": "lumen", "idempotency_key": "l-1",
            "profile_id": "p_lum", "source": "web", "conversation_id": "c1",
            "occurred_at": datetime.now(UTC).isoformat(),
            "interaction": {"kind": "engaged", "ref": "item_variant:lumen:1",
                            "action": "click"}}  # fmt: skip
    deployment.publish([json.dumps(seen).encode()])
    deployment.drain()
    yield deployment
    deployment.worker.stop()


def _call(
    deployment: Deployment, method: str, path: str, body: bytes = b"", key: str | None = None,
    authorization: str | None = None,
) -> tuple[int, Any]:  # fmt: skip
    connection = http.client.HTTPConnection("127.0.0.1", deployment.worker.web_port, timeout=60)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    headers["Authorization"] = authorization or f"Bearer {key or deployment.operator_key}"
    connection.request(method, path, body=body, headers=headers)
    answer = connection.getresponse()
    raw = answer.read()
    connection.close()
    return answer.status, json.loads(raw)


def test_an_acme_key_gets_nothing_of_lumens_person(worker: Deployment) -> None:
    lumen = worker.new_key("lumen", Role.security)
    acme = worker.new_key("acme", Role.security)
    agent = worker.new_key("acme", Role.agent)
    status, opened = _call(worker, "POST", "/v1/profiles/p_lum/review-requests",
                           b'{"space_id": "lumen", "receipts": ["r1"]}', lumen)  # fmt: skip
    assert status == 201, opened
    # The space named twice: JSON's last wins, and the key is checked on that one.
    status, body = _call(worker, "POST", "/v1/constraints",
                         b'{"space_id": "acme", "space_id": "lumen", "profile_id": "p_lum"}',
                         agent)  # fmt: skip
    assert status == 403, body
    # The query parameter given twice: the first is checked and read, never the other.
    twice = "/v1/profiles/p_lum/inferences?space_id={}&space_id={}"
    status, body = _call(worker, "GET", twice.format("lumen", "acme"), key=acme)
    assert status == 403, body
    status, body = _call(worker, "GET", twice.format("acme", "lumen"), key=acme)
    assert (status, body) == (200, {"profile_id": "p_lum", "inferences": []})
    # lumen's ids under acme's space: unknown there.
    resolve = f"/v1/profiles/p_lum/review-requests/{opened['id']}/resolve"
    decision = b'{"space_id": "acme", "decision": "upheld", "explanation": []}'
    status, body = _call(worker, "POST", resolve, decision, acme)
    assert status == 404 and body["errors"][0]["field"] == "request_id", body
    status, body = _call(worker, "POST", "/v1/profiles/p_lum/review-requests",
                         b'{"space_id": "acme", "receipts": ["r1"]}', acme)  # fmt: skip
    assert status == 404 and body["errors"][0]["field"] == "profile_id", body
    # And lumen's own key still resolves it: nothing above touched it.
    status, body = _call(worker, "POST", resolve, decision.replace(b"acme", b"lumen"), lumen)
    assert status == 200 and body["status"] == "resolved", body


@pytest.mark.parametrize(
    ("spelling", "status"),
    [
        ("Bearer {key}", 200),
        ("bearer {key}", 200),  # the scheme is case-insensitive (RFC 9110)
        ("Bearer  {key}  ", 200),  # spaces around the key are not part of it
        ("Bearer {upper}", _UNAUTHENTICATED),  # the key is
        ("Bearer {key}x", _UNAUTHENTICATED),
        ("Bearer {key} {key}", _UNAUTHENTICATED),
        ("Basic {key}", _UNAUTHENTICATED),
        ("{key}", _UNAUTHENTICATED),
        ("Bearer", _UNAUTHENTICATED),
    ],
)
def test_a_key_is_its_exact_bytes(worker: Deployment, spelling: str, status: int) -> None:
    agent = worker.new_key("acme", Role.agent)
    header = spelling.format(key=agent, upper=agent.upper())
    block = b'{"space_id": "acme", "profile_id": "p1"}'
    got, body = _call(worker, "POST", "/v1/constraints", block, authorization=header)
    assert got == status, body
    if status == _UNAUTHENTICATED:
        assert body == {"error": "a valid API key is required: Authorization: Bearer <key>"}


@pytest.mark.parametrize(
    "profile_path", ["..%2F..%2Fv1%2Fsql", "%2e%2e", "p%00x", "p'%20OR%201=1--", "p" * 2000]
)
def test_a_hostile_profile_id_reads_as_an_unknown_person(
    worker: Deployment, profile_path: str
) -> None:
    status, body = _call(worker, "GET", f"/v1/profiles/{profile_path}/inferences?space_id=acme")
    assert status == 200 and body["inferences"] == [], body


def test_a_command_for_an_id_no_item_can_carry_is_refused_naming_it(worker: Deployment) -> None:
    status, body = _call(worker, "POST", f"/v1/profiles/{'p' * 300}/traits/opt-out",
                         b'{"space_id": "acme"}')  # fmt: skip
    assert status == 422, body
    assert [e["field"] for e in body["errors"]] == ["profile_id"], body
