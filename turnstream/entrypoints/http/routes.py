"""The worker's read side over HTTP: the constraints block and the reviewable profile.

Handlers only move data: bodies are validated by :mod:`turnstream.models.requests`, the
person's data is read by :mod:`turnstream.adapters.clickhouse.profile_reads` on the store thread,
the
block is built by the pure :mod:`turnstream.core.constraints`, and every change to a profile is a
command published on the commands topic, so it is ordered with the person's events and
survives restarts.
"""

from __future__ import annotations

import functools
import json
import tomllib
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from faust.web import Request, Response, View
from pydantic import BaseModel, ValidationError

from turnstream.adapters.clickhouse.context_use import ReportQuery, read_context_use
from turnstream.adapters.clickhouse.profile_reads import (
    inference_bucket,
    inference_dicts,
    load_inferences,
    load_inputs,
    profile_known,
)
from turnstream.adapters.clickhouse.review_requests import (
    ReviewAlreadyResolved,
    ReviewNotFound,
    open_review,
    resolve_review,
)
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.config import Settings
from turnstream.core import json_values
from turnstream.core.access import ALL_SPACES
from turnstream.core.constraints import (
    load_bindings,
    profile_for,
)
from turnstream.core.corrections import CorrectionConflict, correction_for
from turnstream.core.object_types import types_for_space
from turnstream.entrypoints.http.access import caller, refuse_space
from turnstream.entrypoints.http.bodies import BadBody, json_body
from turnstream.entrypoints.http.views import Views
from turnstream.errors import InvalidItem, TurnstreamError
from turnstream.models.items import error_pairs
from turnstream.models.requests import (
    ConstraintsRequest,
    ContextUseQuery,
    CorrectRequest,
    ResolveRequest,
    ReviewRequestIn,
    SdkProfileQuery,
    SpaceRequest,
)
from turnstream.service.block import serve_block
from turnstream.service.errors import NotFound, Refusal
from turnstream.service.spaces import space_of as _space

__all__ = ["Publisher", "register_routes"]

B = TypeVar("B", bound=BaseModel)


class _HttpError(Exception):
    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.status = status
        self.body = body


async def _body(request: Request, model: type[B]) -> B:
    try:
        data = await json_body(request)
    except BadBody:
        raise _HttpError(400, {"error": "the body is not JSON", "errors": [
            {"field": "<body>", "message": "not JSON"}]}) from None  # fmt: skip
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = [{"field": p or "<body>", "message": m} for p, m in error_pairs(exc)]
        raise _HttpError(422, {"error": "invalid body", "errors": errors}) from None


def _query(request: Request, model: type[B]) -> B:
    """The query string as ``model`` (422 naming each field, as for a body)."""
    try:
        return model.model_validate(dict(request.query))
    except ValidationError as exc:
        errors = [{"field": p or "<query>", "message": m} for p, m in error_pairs(exc)]
        raise _HttpError(422, {"error": "invalid query", "errors": errors}) from None


def _scope(request: Request, space_id: str) -> None:
    """403 unless the request's key speaks for ``space_id``: asked before the space is
    looked up, so a key of another space learns nothing of which spaces exist."""
    refusal = refuse_space(request, space_id)
    if refusal is not None:
        raise _HttpError(refusal.status, {"error": refusal.reason})


def _not_found(field: str, message: str) -> _HttpError:
    """A 404 naming the path parameter that names nothing."""
    return _HttpError(404, {"error": message, "errors": [{"field": field, "message": message}]})


def _now() -> datetime:
    return datetime.now(UTC)


class Publisher(Protocol):
    """What the routes need of :class:`turnstream.adapters.kafka.producer.Producer` (the bootstrap
    builds
    it; the routes start it on first use)."""

    async def start(self) -> None: ...

    async def publish(self, item: dict[str, Any]) -> Any: ...

    async def flush(self) -> None: ...


class _Commands:
    """Publishes profile commands on the commands topic."""

    def __init__(self, producer: Publisher) -> None:
        self._producer = producer
        self._started = False

    async def send(self, space_id: str, profile_id: str, command: str, **fields: Any) -> str:
        key = f"api-{uuid.uuid4().hex}"
        item = {
            "type": "command",
            "space_id": space_id,
            "idempotency_key": key,
            "profile_id": profile_id,
            "source": "profile-api",
            "occurred_at": _now().isoformat(),
            "command": command,
            **fields,
        }
        if not self._started:
            await self._producer.start()
            self._started = True
        try:
            await self._producer.publish(item)
        except InvalidItem as exc:
            errors = [{"field": p, "message": m} for p, m in exc.errors]
            raise _HttpError(422, {"error": "invalid command", "errors": errors}) from None
        await self._producer.flush()
        return key


def _contract(path: str) -> dict[str, Any]:
    """The claim contract file (JSON, or TOML by its suffix) as it is: ``turnstream config
    check`` validates it with the SDK's loader; the worker only serves it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.lower().endswith(".toml") else json.loads(text)
    except (OSError, ValueError) as exc:
        raise TurnstreamError(f"claim contract {path}: {exc}") from None
    if not isinstance(data, dict):
        raise TurnstreamError(f"claim contract {path}: not a JSON object")
    return data


def _sdk_profile(settings: Settings, query: SdkProfileQuery) -> dict[str, Any]:
    space = _space(settings, query.space_id)
    doc = load_bindings(space.tool_bindings) if space.tool_bindings else None
    contract = _contract(space.claims_contract) if space.claims_contract else None
    types = types_for_space(space)
    served = None if types is None else types.model_dump(mode="json", by_alias=True)
    return profile_for(query.space_id, query.source, doc, contract, served)


def _json(view: View, data: Any, status: int = 200) -> Response:
    return view.bytes(json_values.dumps(data), content_type="application/json", status=status)


async def _guard(view: View, work: Any) -> Response:
    """Run a route's ``work`` and answer its JSON; a refusal or a turnstream error as 4xx."""
    try:
        status, data = await work()
    except _HttpError as exc:
        return _json(view, exc.body, exc.status)
    except Refusal as exc:
        return _json(view, exc.body(), 404 if isinstance(exc, NotFound) else 422)
    except TurnstreamError as exc:
        return _json(view, {"error": str(exc)}, 400)
    return _json(view, data, status)


def register_routes(
    views: Views, settings: Settings, store: AsyncStore, producer: Publisher
) -> None:
    """Bind the read side's views to the worker's app; changes go out through
    ``producer`` as commands."""
    commands = _Commands(producer)

    @views("constraints")
    class ConstraintsView(View):
        async def post(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, ConstraintsRequest)
                _scope(request, body.space_id)
                read_inputs = functools.partial(load_inputs, store.store)
                return 200, await store.run(serve_block, read_inputs, settings, body)

            return await _guard(self, work)

    @views("sdk_profile")
    class SdkProfileView(View):
        async def get(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                query = _query(request, SdkProfileQuery)
                _scope(request, query.space_id)
                return 200, _sdk_profile(settings, query)

            return await _guard(self, work)

    @views("inferences")
    class InferencesView(View):
        async def get(self, request: Request, profile_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                space_id = request.query.get("space_id", "")
                _scope(request, space_id)
                _space(settings, space_id)
                found = await store.run(load_inferences, store.store, space_id, profile_id)
                return 200, {"profile_id": profile_id, "inferences": inference_dicts(found)}

            return await _guard(self, work)

    @views("correct")
    class CorrectView(View):
        async def post(self, request: Request, profile_id: str, inference_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, CorrectRequest)
                _scope(request, body.space_id)
                _space(settings, body.space_id)
                corrected = await store.run(
                    inference_bucket, store.store, body.space_id, profile_id, inference_id
                )
                if corrected is None:
                    raise _not_found(
                        "inference_id", f"no inference {inference_id!r} for this profile"
                    )
                try:
                    for_ = correction_for(body.replacement.for_, corrected)
                except CorrectionConflict as exc:
                    raise _HttpError(422, {"error": "invalid body", "errors": [
                        {"field": "replacement.for", "message": str(exc)}]}) from None  # fmt: skip
                replacement = body.replacement.model_dump(mode="json", by_alias=True)
                key = await commands.send(
                    body.space_id, profile_id, "correct", inference_id=inference_id,
                    replacement={**replacement, "for": for_},
                )  # fmt: skip
                return 202, {"command_id": key, "status": "accepted"}

            return await _guard(self, work)

    @views("inference")
    class InferenceView(View):
        async def delete(self, request: Request, profile_id: str, inference_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                space_id = request.query.get("space_id", "")
                _scope(request, space_id)
                _space(settings, space_id)
                found = await store.run(
                    inference_bucket, store.store, space_id, profile_id, inference_id
                )
                if found is None:
                    raise _not_found(
                        "inference_id", f"no inference {inference_id!r} for this profile"
                    )
                key = await commands.send(space_id, profile_id, "delete", inference_id=inference_id)
                return 202, {"command_id": key, "status": "accepted"}

            return await _guard(self, work)

    @views("opt_out")
    class OptOutView(View):
        async def post(self, request: Request, profile_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, SpaceRequest)
                _scope(request, body.space_id)
                _space(settings, body.space_id)
                key = await commands.send(body.space_id, profile_id, "opt_out")
                return 202, {"command_id": key, "status": "accepted"}

            return await _guard(self, work)

    @views("review_requests")
    class ReviewRequestsView(View):
        async def post(self, request: Request, profile_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, ReviewRequestIn)
                _scope(request, body.space_id)
                _space(settings, body.space_id)
                if not await store.run(profile_known, store.store, body.space_id, profile_id):
                    raise _not_found("profile_id", f"no profile {profile_id!r} in this space")
                return 201, await store.run(open_review, store.store, profile_id, body)

            return await _guard(self, work)

    @views("resolve")
    class ResolveView(View):
        async def post(self, request: Request, profile_id: str, request_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, ResolveRequest)
                _scope(request, body.space_id)
                _space(settings, body.space_id)
                try:
                    return 200, await store.run(
                        resolve_review, store.store, profile_id, request_id, body
                    )
                except ReviewNotFound as exc:
                    raise _HttpError(404, {"error": str(exc), "errors": [
                        {"field": "request_id", "message": str(exc)}]}) from None  # fmt: skip
                except ReviewAlreadyResolved as exc:
                    raise _HttpError(409, {"error": str(exc)}) from None

            return await _guard(self, work)

    @views("context_use")
    class ContextUseView(View):
        async def get(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                query = _query(request, ContextUseQuery)
                key = caller(request)
                # A key for one space reads its own space unless it names it.
                space_id = query.space_id or (
                    key.space if key is not None and key.space != ALL_SPACES else None
                )
                if space_id is not None:
                    _scope(request, space_id)
                report = ReportQuery(space=space_id, since=query.since, by=query.dimensions())
                sections = await store.run(read_context_use, store.store, report)
                since = query.since.isoformat() if query.since else None
                return 200, {"space_id": space_id, "since": since, "by": list(report.by),
                             **sections}  # fmt: skip

            return await _guard(self, work)
