"""The OpenAPI document of the worker's HTTP API, built from the request models.

Every operation says the role it needs (``x-role``, from :data:`turnstream.streams.access.ROUTES`,
the one table) and answers 401 and 403; the open ``/v1/status`` and ``/console`` say
``security: []``.
``turnstream docs openapi`` writes it to docs/openapi.json; a test keeps it in step.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from turnstream import __version__
from turnstream.models.requests import (
    ConstraintsRequest,
    ContextUseQuery,
    CorrectRequest,
    ResolveRequest,
    ReviewRequestIn,
    SdkProfileQuery,
    SpaceRequest,
)
from turnstream.streams.access import ROUTES
from turnstream.streams.experiment_routes import ArmsQuery, ExperimentsQuery

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
    }
    for code in errors:
        out[code] = {
            "description": text[code],
            "content": {"application/json": {"schema": _ERROR}},
        }
    return out


_PROFILE = {"name": "profile_id", "in": "path", "required": True, "schema": {"type": "string"}}
_SPACE_Q = {"name": "space_id", "in": "query", "required": True, "schema": {"type": "string"}}


def _path(name: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}


_SQL_BODY = {
    "required": True,
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["sql"],
                "properties": {
                    "sql": {"type": "string"},
                    "parameters": {"type": "object", "additionalProperties": True},
                },
            }
        }
    },
}


def _query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    schema = model.model_json_schema()
    required = set(schema.get("required", ()))
    return [
        {"name": name, "in": "query", "required": name in required, "schema": prop}
        for name, prop in schema["properties"].items()
    ]


_LANG = {
    "name": "lang",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": ["pt", "en", "es"]},
}


def _paths() -> dict[str, dict[str, Any]]:
    return {
        "/v1/status": {
            "get": {
                "summary": "Health: each loop's state, the store's, counters (open: no key "
                "needed; with an operator's key also the store's address and the errors' text)",
                "responses": {
                    **_responses("200"),
                    "503": {
                        "description": "a loop failing past worker.status_grace, or stopped, "
                        "or the store not answering that long (the same body; failing names "
                        "them)",
                        "content": {"application/json": {}},
                    },
                },
            }
        },
        "/console": {
            "get": {
                "summary": "The console's page (open: a shell with no data; its script "
                "calls the routes below with the key entered in it; docs/console.md)",
                "parameters": [_LANG],
                "responses": {"200": {"description": "the page", "content": {"text/html": {}}}},
            }
        },
        "/v1/sql": {
            "post": {
                "summary": "One read-only statement on the store, judged by ClickHouse's "
                "parser and refused (400, naming what) unless it only reads the project's "
                "tables, within the [sql] limits (docs/analysts.md)",
                "requestBody": _SQL_BODY,
                "responses": _responses("200", "400", "422"),
            }
        },
        "/v1/jobs/{name}/": {
            "post": {
                "summary": "Run a job (priors, retention, experiments) on the worker's store",
                "parameters": [_path("name")],
                "requestBody": {
                    "required": False,
                    "content": {"application/json": {"schema": {"type": "object"}}},
                },
                "responses": _responses("200", "400"),
            }
        },
        "/v1/context-use": {
            "get": {
                "summary": "Claims on evidence, guard actions and constraints sent/verifiable/"
                "violated, per breakdown, for the caller's space",
                "parameters": _query_parameters(ContextUseQuery),
                "responses": _responses("200", "422"),
            }
        },
        "/v1/experiments": {
            "get": {
                "summary": "The configured experiments of the caller's space",
                "parameters": _query_parameters(ExperimentsQuery),
                "responses": _responses("200", "422"),
            }
        },
        "/v1/experiments/{experiment_id}/arms": {
            "get": {
                "summary": "An experiment's arms as of a day: people, estimates with intervals, "
                "effects against control with p-values, and the analysis's warnings "
                "(nothing written); another space's experiment is a 404, as a missing one",
                "parameters": [_path("experiment_id"), *_query_parameters(ArmsQuery)],
                "responses": _responses("200", "404", "422"),
            }
        },
        "/v1/constraints": {
            "post": {
                "summary": "The constraints block for one person (optionally for a tool)",
                "requestBody": _body(ConstraintsRequest),
                "responses": _responses("200", "400", "404", "422"),
            }
        },
        "/v1/sdk/profile": {
            "get": {
                "summary": "The SDK's profile for one source: its tool bindings (without "
                "sources), the claim contract (the negative corpus only by its version) and "
                "the object types",
                "parameters": _query_parameters(SdkProfileQuery),
                "responses": _responses("200", "404", "422"),
            }
        },
        "/v1/profiles/{profile_id}/inferences": {
            "get": {
                "summary": "The reviewable profile: every inference with its evidence",
                "parameters": [_PROFILE, _SPACE_Q],
                "responses": _responses("200", "404"),
            }
        },
        "/v1/profiles/{profile_id}/inferences/{inference_id}/correct": {
            "post": {
                "summary": "Replace an inference by what the person says (then deleted)",
                "parameters": [_PROFILE, _path("inference_id")],
                "requestBody": _body(CorrectRequest),
                "responses": _responses("202", "400", "404", "422"),
            }
        },
        "/v1/profiles/{profile_id}/inferences/{inference_id}": {
            "delete": {
                "summary": "Delete an inference: a tombstone, never inferred again",
                "parameters": [_PROFILE, _path("inference_id"), _SPACE_Q],
                "responses": _responses("202", "404"),
            }
        },
        "/v1/profiles/{profile_id}/traits/opt-out": {
            "post": {
                "summary": "Object to profiling: derivation stops",
                "parameters": [_PROFILE],
                "requestBody": _body(SpaceRequest),
                "responses": _responses("202", "400", "404", "422"),
            }
        },
        "/v1/profiles/{profile_id}/review-requests": {
            "post": {
                "summary": "Ask for the review of an automated decision, by receipts",
                "parameters": [_PROFILE],
                "requestBody": _body(ReviewRequestIn),
                "responses": _responses("201", "400", "404", "422"),
            }
        },
        "/v1/profiles/{profile_id}/review-requests/{request_id}/resolve": {
            "post": {
                "summary": "Record the controller's decision, once",
                "parameters": [_PROFILE, _path("request_id")],
                "requestBody": _body(ResolveRequest),
                "responses": _responses("200", "400", "404", "409", "422"),
            }
        },
    }


def _with_access(paths: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each operation's role from :data:`ROUTES`, its 401 and 403; open ones say so."""
    refusals = {k: v for k, v in _responses("200", "401", "403").items() if k != "200"}
    for path, operations in paths.items():
        for method, operation in operations.items():
            access = ROUTES[method.upper(), path]
            if access is None:
                operation["security"] = []
                continue
            operation["x-role"] = access.role.value
            operation["x-all-spaces"] = access.all_spaces
            operation["responses"].update(refusals)
    return paths


def openapi_document() -> dict[str, Any]:
    """The API as an OpenAPI 3.1 document."""
    models = [ConstraintsRequest, CorrectRequest, ResolveRequest, ReviewRequestIn, SpaceRequest]
    schemas: dict[str, Any] = {}
    for model in models:
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas.update(schema.pop("$defs", {}))
        schemas[model.__name__] = schema
    return {
        "openapi": "3.1.0",
        "info": {"title": "turnstream worker", "version": __version__},
        "security": [{"bearer": []}],
        "paths": _with_access(_paths()),
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
