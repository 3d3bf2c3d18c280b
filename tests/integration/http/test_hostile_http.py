"""Hostile HTTP: schemathesis drives every operation of the OpenAPI document against a
running worker (real broker, real chDB) with a valid key, valid and invalid inputs alike
(positive and negative generation): no answer is a 5xx, every 4xx is JSON that says why,
and every refusal of the input names the field. Bounded per operation so the run fits CI;
the counts are printed at the end (``-s``) and recorded in docs/performance.md."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode

from turnstream.entrypoints.http.openapi import openapi_document
from turnstream_dev.deployment import new_deployment

# serial: in one process (tests/conftest.py); SEEN adds up what every item of it saw.
pytestmark = [pytest.mark.integration, pytest.mark.serial]

#: Examples per operation (positive and negative): 12 operations x 20 keeps the run
#: near a minute and a half on this shared 2-core machine, the worker's start included.
EXAMPLES = 20

schema = schemathesis.openapi.from_dict(openapi_document())
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=EXAMPLES
)

_DOC = Path(__file__).parents[3] / "examples" / "measurement.toml"

#: What the run saw, over every operation.
SEEN: Counter[str] = Counter()
SERVER_ERRORS: list[str] = []

#: 4xx answers about the request itself rather than one of its fields.
_NOT_ABOUT_A_FIELD = {401, 403, 405, 409}


@pytest.fixture(scope="module")
def worker(kafka_broker, tmp_path_factory):  # type: ignore[no-untyped-def]
    # The example measurement document, so the experiments' routes have something to read.
    deployment = new_deployment(
        kafka_broker, tmp_path_factory.mktemp("hostile"), extra=f'[jobs]\nmeasurement = "{_DOC}"\n'
    )
    deployment.worker.start()
    yield deployment
    deployment.worker.stop()


def _check(status: int, body: Any, label: str) -> None:
    if status >= 500:
        SERVER_ERRORS.append(f"{label}: {status} {body!r}"[:500])
    assert status < 500, body
    if status < 400:
        return
    assert isinstance(body, dict) and isinstance(body.get("error"), str), body
    if status in _NOT_ABOUT_A_FIELD or body["error"] == "no such route":
        return
    errors = body.get("errors")
    assert errors, f"a {status} without the field it refuses: {body}"
    assert all(isinstance(e.get("field"), str) and e["field"] for e in errors), body


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_no_5xx_and_every_refusal_names_its_field(case, worker) -> None:  # type: ignore[no-untyped-def]
    response = case.call(
        base_url=f"http://127.0.0.1:{worker.worker.web_port}",
        headers=worker.headers(),
        timeout=60,
    )
    SEEN["requests"] += 1
    SEEN[f"{response.status_code // 100}xx"] += 1
    SEEN[str(response.status_code)] += 1
    try:
        body = response.json()
    except ValueError:
        body = response.text
    _check(response.status_code, body, f"{case.method} {case.path}")


#: Bodies no schema generates: nesting past Python's recursion limit, bytes that are not
#: UTF-8, a body over aiohttp's 1 MiB limit, an empty one, a lone surrogate escape.
_RAW_BODIES = {
    "deep nesting": b"[" * 100_000 + b"]" * 100_000,
    "deep objects": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "not UTF-8": b'{"space_id": "\xff\xfe"}',
    "over 1 MiB": b'{"space_id": "' + b"a" * (1 << 20) + b'"}',
    "empty": b"",
    "lone surrogate": b'{"space_id": "\\udcff", "sql": "SELECT \'\\udcff\'"}',
}


@pytest.mark.parametrize("what", sorted(_RAW_BODIES))
def test_raw_hostile_bodies_are_4xx_json_on_every_route_with_a_body(worker, what: str) -> None:  # type: ignore[no-untyped-def]
    import urllib.error
    import urllib.request

    document = openapi_document()
    routes = [
        (method.upper(), path)
        for path, ops in document["paths"].items()
        for method, op in ops.items()
        if method in ("post", "put", "patch")
    ]
    assert routes
    for method, path in routes:
        concrete = path.format(profile_id="p_raw", inference_id="i1", request_id="r1", name="x")
        request = urllib.request.Request(
            f"http://127.0.0.1:{worker.worker.web_port}{concrete}",
            data=_RAW_BODIES[what],
            headers={"Content-Type": "application/json", **worker.headers()},
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        SEEN["requests"] += 1
        SEEN[f"{status // 100}xx"] += 1
        assert 400 <= status < 500, (method, path, status, raw[:300])
        body = json.loads(raw)
        assert isinstance(body.get("error"), str), (method, path, body)


def test_the_run_tried_every_operation_and_saw_no_5xx() -> None:
    print(f"\nhostile HTTP: {dict(sorted(SEEN.items()))}")
    operations = sum(len(ops) for ops in openapi_document()["paths"].values())
    assert SEEN["requests"] >= operations * 5, SEEN
    assert SEEN["4xx"] > 0 and SEEN["2xx"] > 0, SEEN  # both kinds of input were tried
    assert SEEN["5xx"] == 0 and not SERVER_ERRORS, SERVER_ERRORS
