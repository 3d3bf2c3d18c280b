"""The worker's read side over HTTP: the constraints block and the reviewable profile.

Handlers only move data: bodies are validated by :mod:`turnstream.models.requests`, the
person's data is read by :mod:`turnstream.sinks.profile_reads` on the store thread, the
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

import faust
from faust.web import Request, Response, View
from pydantic import BaseModel, ValidationError

from turnstream.config import Feature, Settings
from turnstream.core import json_values
from turnstream.core.access import ALL_SPACES
from turnstream.core.constraints import (
    BlockRequest,
    CompanyRule,
    binding_for,
    build_block,
    load_bindings,
    profile_for,
    render_for_tool,
)
from turnstream.core.corrections import CorrectionConflict, correction_for
from turnstream.core.experiments import arm_at, served_inferences
from turnstream.core.identity import profile_id_for
from turnstream.core.object_types import types_for_space
from turnstream.errors import InvalidItem, TurnstreamError
from turnstream.models.items import error_pairs
from turnstream.models.measurement import Arm, Experiment, MeasurementDocument, load_measurement
from turnstream.models.requests import (
    ConstraintsRequest,
    ContextUseQuery,
    CorrectRequest,
    ResolveRequest,
    ReviewRequestIn,
    SdkProfileQuery,
    SpaceRequest,
)
from turnstream.sinks.context_use import ReportQuery, read_context_use
from turnstream.sinks.profile_reads import (
    inference_bucket,
    inference_dicts,
    load_inferences,
    load_inputs,
    profile_known,
)
from turnstream.sinks.review_requests import (
    ReviewAlreadyResolved,
    ReviewNotFound,
    open_review,
    resolve_review,
)
from turnstream.sinks.store import AsyncStore, Store
from turnstream.streams.access import caller, refuse_space
from turnstream.streams.bodies import BadBody, json_body

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
    """What the routes need of :class:`turnstream.producer.Producer` (the bootstrap builds
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


def _space(settings: Settings, space_id: str, need_signals: bool = False) -> Any:
    space = settings.space(space_id)
    if space is None:
        message = f"space {space_id!r} is not configured"
        raise _HttpError(404, {"error": message, "errors": [{"field": "space_id",
                                                              "message": message}]})  # fmt: skip
    if need_signals and not space.has(Feature.signals):
        message = f"the signals feature is off for space {space_id!r}"
        raise _HttpError(404, {"error": message, "errors": [{"field": "space_id",
                                                              "message": message}]})  # fmt: skip
    return space


def _measurement(path: str) -> MeasurementDocument:
    """The measurement document, read again only when the file changed (one ``stat`` per
    block request)."""
    return _measurement_at(path, Path(path).stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _measurement_at(path: str, mtime_ns: int) -> MeasurementDocument:
    return load_measurement(path)


def _arm(
    settings: Settings, space_id: str, profile_id: str, source: str, now: datetime
) -> tuple[Experiment, Arm] | None:
    """The person's arm in the space's running experiment (``jobs.measurement``)."""
    path = settings.jobs.measurement
    if path is None:
        return None
    try:
        doc = _measurement(path)
    except OSError as exc:
        raise TurnstreamError(f"measurement document {path}: {exc.strerror}") from None
    return arm_at(doc, space_id, profile_id, source, now)


def _block(store: Store, settings: Settings, body: ConstraintsRequest) -> dict[str, Any]:
    space = _space(settings, body.space_id, need_signals=True)
    if (body.profile_id is None) == (body.handle is None):
        raise _HttpError(422, {"error": "invalid body", "errors": [
            {"field": "handle", "message": "exactly one of handle and profile_id is required"}
        ]})  # fmt: skip
    profile_id = body.profile_id or profile_id_for(
        body.space_id,
        body.handle,
        settings.secret_bytes(),  # type: ignore[arg-type]
    )
    now = _now()
    assigned = _arm(settings, body.space_id, profile_id, body.source or "", now)
    dropped = frozenset() if assigned is None else assigned[1].dropped
    # The memory's control group (and an arm that drops the block) gets no block at all:
    # nothing of the person is read.
    no_block = "constraints_block" in dropped
    inputs = None if no_block else load_inputs(store, body.space_id, profile_id, body.for_)
    request = BlockRequest(
        space_id=body.space_id,
        profile_id=profile_id,
        for_=body.for_,
        language=space.language,
        session=body.session_id,
        asked=tuple(body.asked),
        delivery_elsewhere=body.delivery_elsewhere,
    )
    rules = [
        CompanyRule(r.id, r.rank, r.origin, r.attr, r.op, tuple(r.values), r.text)
        for r in space.rules
        if not no_block
    ]
    active = [] if inputs is None else [i for i in inputs.inferences if i.status == "active"]
    block = build_block(
        request,
        () if inputs is None else inputs.preferences,
        () if inputs is None else inputs.attributes,
        served_inferences(dropped, active),
        () if inputs is None else inputs.presented,
        () if inputs is None else inputs.disliked,
        rules,
        now,
        labels=space.labels,
        types=types_for_space(space),
        soft_max=settings.signals.block_soft_max,
        shown=None if inputs is None else inputs.shown,
        current=body.current,
    )
    if assigned is not None:
        experiment, arm = assigned
        block["experiment"] = {"id": experiment.id, "arm": arm.name, "drops": sorted(dropped)}
    if body.tool is not None:
        doc = load_bindings(space.tool_bindings) if space.tool_bindings else None
        binding = binding_for(doc, body.tool, body.source or "") if doc else None
        if binding is None:
            raise _HttpError(422, {"error": f"tool {body.tool!r} is not bound for source "
                                   f"{body.source!r} in space {body.space_id!r}"})  # fmt: skip
        block["rendered"] = render_for_tool(block, binding)
    return block


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
    except TurnstreamError as exc:
        return _json(view, {"error": str(exc)}, 400)
    return _json(view, data, status)


def register_routes(
    app: faust.App, settings: Settings, store: AsyncStore, producer: Publisher
) -> None:
    """Add the read side's routes to the worker's app; changes go out through
    ``producer`` as commands."""
    commands = _Commands(producer)

    @app.page("/v1/constraints")
    class ConstraintsView(View):
        async def post(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, ConstraintsRequest)
                _scope(request, body.space_id)
                return 200, await store.run(_block, store.store, settings, body)

            return await _guard(self, work)

    @app.page("/v1/sdk/profile")
    class SdkProfileView(View):
        async def get(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                query = _query(request, SdkProfileQuery)
                _scope(request, query.space_id)
                return 200, _sdk_profile(settings, query)

            return await _guard(self, work)

    @app.page("/v1/profiles/{profile_id}/inferences")
    class InferencesView(View):
        async def get(self, request: Request, profile_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                space_id = request.query.get("space_id", "")
                _scope(request, space_id)
                _space(settings, space_id)
                found = await store.run(load_inferences, store.store, space_id, profile_id)
                return 200, {"profile_id": profile_id, "inferences": inference_dicts(found)}

            return await _guard(self, work)

    @app.page("/v1/profiles/{profile_id}/inferences/{inference_id}/correct")
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

    @app.page("/v1/profiles/{profile_id}/inferences/{inference_id}")
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

    @app.page("/v1/profiles/{profile_id}/traits/opt-out")
    class OptOutView(View):
        async def post(self, request: Request, profile_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                body = await _body(request, SpaceRequest)
                _scope(request, body.space_id)
                _space(settings, body.space_id)
                key = await commands.send(body.space_id, profile_id, "opt_out")
                return 202, {"command_id": key, "status": "accepted"}

            return await _guard(self, work)

    @app.page("/v1/profiles/{profile_id}/review-requests")
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

    @app.page("/v1/profiles/{profile_id}/review-requests/{request_id}/resolve")
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

    @app.page("/v1/context-use")
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
