"""The OpenAPI document of the worker's HTTP API, built from the route table
(:data:`turnstream.entrypoints.http.route_table.ROUTE_TABLE`) and its request models.

Every operation says the role it needs (``x-role``) and which space its key must speak
for (``x-space``: the route table's rule), and answers 401 and 403; the open
``/v1/status`` and ``/console`` say ``security: []``.
``turnstream docs openapi`` writes it to docs/openapi.json; a test keeps it in step.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from turnstream import __version__
from turnstream.entrypoints.http.route_table import ROUTE_TABLE, Route

__all__ = ["openapi_document", "openapi_json"]

_ERROR = {
    "type": "object",
    "properties": {
        "error": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _body(model: type[BaseModel]) -> dict[str, Any]:
    return {"required": True, "content": {"application/json": {"schema": _ref(model)}}}


def _responses(ok: str, *errors: str) -> dict[str, Any]:
    out: dict[str, Any] = {ok: {"description": "done", "content": {"application/json": {}}}}
    text = {
        "400": "the body is not JSON; or the store refused the query (field sql); or no such "
        "job (field name)",
        "404": "unknown space, or its signals feature is off, or no such record",
        "401": "no valid API key (absent, malformed, unknown or revoked: one answer)",
        "403": "the key lacks the route's role, or is not for the space asked for",
        "409": "already resolved: a decision is recorded once",
        "422": "invalid body or query: each error names its field path; or a tool not bound",
        "503": "busy: try again after the Retry-After header's seconds",
    }
    for code in errors:
        out[code] = {
            "description": text[code],
            "content": {"application/json": {"schema": _ERROR}},
        }
    return out


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": prop}
        for name, prop in schema["properties"].items()
    ]


def _operation(route: Route) -> dict[str, Any]:
    """One operation of the document, as the route table describes it."""
    operation: dict[str, Any] = {"summary": route.summary}
    query = route.query
    parameters = [_path(name) for name in route.path_parameters]
    parameters += _query_parameters(query) if isinstance(query, type) else [*query]
    if parameters:
        operation["parameters"] = parameters
    if isinstance(route.body, type):
        operation["requestBody"] = _body(route.body)
    elif route.body is not None:
        operation["requestBody"] = dict(route.body)
    access = route.access
    refusals = () if access is None else ("401", "403")
    operation["responses"] = {**_responses(route.ok, *route.errors, *refusals), **route.responses}
    if access is None:  # open
        operation["security"] = []
    else:
        operation["x-role"] = access.role.value
        operation["x-all-spaces"] = access.all_spaces
        operation["x-space"] = route.space.value
    return operation


def _paths() -> dict[str, dict[str, Any]]:
    paths: dict[str, dict[str, Any]] = {}
    for route in ROUTE_TABLE:
        paths.setdefault(route.path, {})[route.method.lower()] = _operation(route)
    return paths


def openapi_document() -> dict[str, Any]:
    """The API as an OpenAPI 3.1 document."""
    models = [r.body for r in ROUTE_TABLE if isinstance(r.body, type)]
    schemas: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {"title": "turnstream worker", "version": __version__},
        "security": [{"bearer": []}],
        "paths": _paths(),
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "an API key from turnstream keys create (tsk_...)",
                }
            },
        },
    }


def openapi_json() -> str:
    """The document as it is stored in docs/openapi.json."""
    return json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n"
