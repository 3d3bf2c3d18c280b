"""Every HTTP route of the worker, written once: method, path, role, space rule, request
models, answers, and the view that serves it.

Registration (:class:`turnstream.entrypoints.http.views.Views` binds each view class to its path
here and refuses a view whose methods differ), access control
(:data:`turnstream.entrypoints.http.access.ROUTES`, the middleware's table) and the OpenAPI
document (:mod:`turnstream.entrypoints.http.openapi`, docs/openapi.json) all come from
:data:`ROUTE_TABLE`. A new route is one row here and one view bound by its name.

Pure data: no handler is imported (they import this table, through the access
middleware), so a row names its view, and streams binds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from turnstream.core.access import Role, RouteAccess
from turnstream.models.requests import (
    ArmsQuery,
    ConstraintsRequest,
    ContextUseQuery,
    CorrectRequest,
    ExperimentsQuery,
    ResolveRequest,
    ReviewRequestIn,
    SdkProfileQuery,
    SpaceRequest,
)

__all__ = ["ROUTE_TABLE", "Route", "Space"]


class Space(StrEnum):
    """Which space a route's key must speak for (``x-space`` in the OpenAPI document)."""

    #: An open route: no key needed, nothing of a space shown.
    none = "none"
    #: The space the request names (``space_id`` in its body or query).
    asked = "asked"
    #: The space the request names; a key for one space gets its own when none is named.
    own_or_asked = "own_or_asked"
    #: The space of the object the path names (an experiment's).
    of_object = "of_object"
    #: Every space's data: a key for every space only (an operator's).
    every = "every"


@dataclass(frozen=True)
class Route:
    """One operation: ``method`` on ``path`` (aiohttp's template), served by ``view``."""

    method: str
    path: str
    #: The name the serving view class is bound by (entrypoints/http/views.py).
    view: str
    #: The role it needs; None: open to anyone.
    role: Role | None
    space: Space
    summary: str
    #: The status of success, and the refusals it documents (401 and 403 come with a role).
    ok: str
    errors: tuple[str, ...] = ()
    #: The body: a request model, or a requestBody object of OpenAPI as it is.
    body: type[BaseModel] | Mapping[str, Any] | None = None
    #: The query string: a model, or OpenAPI parameters as they are.
    query: type[BaseModel] | tuple[Mapping[str, Any], ...] = ()
    #: OpenAPI responses beyond (or replacing) the standard ones.
    responses: Mapping[str, Any] = field(default_factory=dict)

    @property
    def access(self) -> RouteAccess | None:
        """What the middleware asks of the key (None: open)."""
        if self.role is None:
            return None
        return RouteAccess(self.role, all_spaces=self.space is Space.every)

    @property
    def path_parameters(self) -> tuple[str, ...]:
        """The names in the path template, in order."""
        return tuple(re.findall(r"\{(\w+)\}", self.path))


_PROFILE = "/v1/profiles/{profile_id}"
_SPACE_Q = {"name": "space_id", "in": "query", "required": True, "schema": {"type": "string"}}
_LANG = {
    "name": "lang",
    "in": "query",
    "required": False,
    "schema": {"type": "string", "enum": ["pt", "en", "es"]},
}
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
_JOB_BODY = {"required": False, "content": {"application/json": {"schema": {"type": "object"}}}}
_STATUS_503 = {
    "503": {
        "description": "a loop failing past worker.status_grace, or stopped, or the store not "
        "answering that long (the same body; failing names them)",
        "content": {"application/json": {}},
    }
}
_HTML_PAGE = {"200": {"description": "the page", "content": {"text/html": {}}}}

#: Every route the worker serves.
ROUTE_TABLE: tuple[Route, ...] = (
    # The liveness probe of healthchecks and `turnstream wait`: without an operator's key
    # no store address and no error text, and nothing per space.
    Route("GET", "/v1/status", "status", None, Space.none,
          "Health: each loop's state, the store's, counters (open: no key needed; with an "
          "operator's key also the store's address and the errors' text)",
          "200", responses=_STATUS_503),
    # The console's shell: no data in it; its script calls the routes below with the key
    # entered in the page (entrypoints/http/console.py).
    Route("GET", "/console", "console", None, Space.none,
          "The console's page (open: a shell with no data; its script calls the routes "
          "below with the key entered in it; docs/console.md)",
          "200", query=(_LANG,), responses=_HTML_PAGE),
    Route("POST", "/v1/sql", "sql", Role.analyst, Space.every,
          "One read-only statement on the store, judged by ClickHouse's parser and refused "
          "(400, naming what) unless it only reads the project's tables, within the [sql] "
          "limits (docs/analysts.md); 503 with Retry-After when every connection stayed "
          "busy for [sql] wait seconds",
          "200", ("400", "422", "503"), body=_SQL_BODY),
    Route("POST", "/v1/jobs/{name}/", "jobs", Role.operator, Space.every,
          "Run a job (priors, retention, experiments) on the worker's store",
          "200", ("400",), body=_JOB_BODY),
    Route("GET", "/v1/context-use", "context_use", Role.analyst, Space.own_or_asked,
          "Claims on evidence, guard actions and constraints sent/verifiable/violated, per "
          "breakdown, for the caller's space",
          "200", ("422",), query=ContextUseQuery),
    Route("GET", "/v1/experiments", "experiments", Role.analyst, Space.own_or_asked,
          "The configured experiments of the caller's space",
          "200", ("422",), query=ExperimentsQuery),
    Route("GET", "/v1/experiments/{experiment_id}/arms", "arms", Role.analyst, Space.of_object,
          "An experiment's arms as of a day: people, estimates with intervals, effects "
          "against control with p-values, and the analysis's warnings (nothing written); "
          "another space's experiment is a 404, as a missing one",
          "200", ("404", "422"), query=ArmsQuery),
    Route("POST", "/v1/constraints", "constraints", Role.agent, Space.asked,
          "The constraints block for one person (optionally for a tool)",
          "200", ("400", "404", "422"), body=ConstraintsRequest),
    Route("GET", "/v1/sdk/profile", "sdk_profile", Role.integration, Space.asked,
          "The SDK's profile for one source: its tool bindings (without sources), the claim "
          "contract (the negative corpus only by its version) and the object types",
          "200", ("404", "422"), query=SdkProfileQuery),
    Route("GET", f"{_PROFILE}/inferences", "inferences", Role.security, Space.asked,
          "The reviewable profile: every inference with its evidence",
          "200", ("404",), query=(_SPACE_Q,)),
    Route("POST", f"{_PROFILE}/inferences/{{inference_id}}/correct", "correct", Role.security,
          Space.asked, "Replace an inference by what the person says (then deleted)",
          "202", ("400", "404", "422"), body=CorrectRequest),
    Route("DELETE", f"{_PROFILE}/inferences/{{inference_id}}", "inference", Role.security,
          Space.asked, "Delete an inference: a tombstone, never inferred again",
          "202", ("404",), query=(_SPACE_Q,)),
    Route("POST", f"{_PROFILE}/traits/opt-out", "opt_out", Role.security, Space.asked,
          "Object to profiling: derivation stops",
          "202", ("400", "404", "422"), body=SpaceRequest),
    Route("POST", f"{_PROFILE}/review-requests", "review_requests", Role.security, Space.asked,
          "Ask for the review of an automated decision, by receipts",
          "201", ("400", "404", "422"), body=ReviewRequestIn),
    Route("POST", f"{_PROFILE}/review-requests/{{request_id}}/resolve", "resolve",
          Role.security, Space.asked, "Record the controller's decision, once",
          "200", ("400", "404", "409", "422"), body=ResolveRequest),
)  # fmt: skip
