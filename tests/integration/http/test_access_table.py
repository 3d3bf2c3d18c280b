"""The routes the worker serves are the route table's (entrypoints/http/route_table.py), each with
its row of access, and every operation of the OpenAPI document is one of them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import faust
import pytest

from tests.fixtures.store import MigratedTemplate
from turnstream.adapters.api_key_file import KeyFile
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.config import load_settings
from turnstream.entrypoints.bootstrap import build_parts
from turnstream.entrypoints.http.access import OPEN, ROUTES
from turnstream.entrypoints.http.openapi import openapi_document
from turnstream.entrypoints.http.route_table import ROUTE_TABLE
from turnstream.entrypoints.worker_app import build_app


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, chdb_path: Path, migrated_template: MigratedTemplate
) -> Iterator[faust.App]:
    home = tmp_path_factory.mktemp("routes")
    config = home / "turnstream.toml"
    # The session's chDB path, a database of its own: chDB opens one path per process.
    section = f'[store]\ndsn = "chdb://{chdb_path}"\ndatabase = "routes_{uuid.uuid4().hex[:12]}"\n'
    config.write_text(section + '[identity]\nsecret = "x"\n')
    settings = load_settings(config, environ={})
    store = AsyncStore.open(settings.store.dsn, settings.store.database)
    store.call(migrated_template.copy_into, store.store)  # the session's migrations, copied
    parts = build_parts(settings, store)
    built = build_app(
        settings, store, parts.ingest, parts.derivation, parts.producer,
        lambda *_: {}, KeyFile(Path(home) / "keys.json"),
    )  # fmt: skip
    built.web.init_server()  # what the worker does at start: blueprints and all
    yield built
    store.call(store.store.command, f"DROP DATABASE IF EXISTS {settings.store.database}")
    store.call(store.store.close)
    store.shutdown()


def _served(app: faust.App) -> set[tuple[str, str]]:
    return {
        (route.method, route.resource.canonical)
        for route in app.web.web_app.router.routes()
        if route.resource is not None and route.method != "HEAD"  # Faust adds HEAD to all
    }


def test_the_served_routes_are_the_route_table(app: faust.App) -> None:
    table = [(route.method, route.path) for route in ROUTE_TABLE]
    assert len(table) == len(set(table)), "a route twice in the table"
    assert _served(app) == set(table)


def test_every_row_of_the_table_has_its_access_row() -> None:
    assert list(ROUTES) == [(route.method, route.path) for route in ROUTE_TABLE]
    for route in ROUTE_TABLE:
        assert ROUTES[route.method, route.path] == route.access
        assert (route.access is OPEN) == (route.role is None)


def test_every_served_route_declares_its_role(app: faust.App) -> None:
    served = _served(app)
    assert served, "no route found: the test would prove nothing"
    undeclared = served - set(ROUTES)
    assert not undeclared, f"routes without a role in entrypoints/http/access.ROUTES: {undeclared}"
    unserved = set(ROUTES) - served
    assert not unserved, f"declared but not served: {unserved}"


def test_every_operation_of_the_document_declares_its_role() -> None:
    document = openapi_document()
    operations = {
        (method.upper(), path) for path, ops in document["paths"].items() for method in ops
    }
    assert operations == set(ROUTES)
    for (method, path), access in ROUTES.items():
        operation = document["paths"][path][method.lower()]
        if access is OPEN:
            assert operation["security"] == []
        else:
            assert operation["x-role"] == access.role.value
            assert {"401", "403"} <= set(operation["responses"])
    for route in ROUTE_TABLE:
        operation = document["paths"][route.path][route.method.lower()]
        assert operation.get("x-space", "none") == route.space.value


def test_only_the_status_probe_and_the_console_shell_are_open() -> None:
    open_routes = [route for route, access in ROUTES.items() if access is OPEN]
    assert open_routes == [("GET", "/v1/status"), ("GET", "/console")]
