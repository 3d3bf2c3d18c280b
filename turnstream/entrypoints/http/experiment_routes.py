"""Read-only routes of the experiments: the configured experiments of a space, and an
experiment's arms as of a day (what ``turnstream experiments compare`` shows, nothing
written), for analysts and the console's experiment page."""

from __future__ import annotations

import asyncio
from typing import Any

from faust.web import Request, Response, View

from turnstream.adapters.clickhouse.shared_store import SharedStore
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.config import Settings
from turnstream.core.access import ALL_SPACES
from turnstream.entrypoints.http.access import caller, refuse_space
from turnstream.entrypoints.http.routes import _guard, _HttpError, _not_found, _query, _scope
from turnstream.entrypoints.http.views import Views
from turnstream.errors import BadJobParameter, DataError, TurnstreamError
from turnstream.models.measurement import MeasurementDocument
from turnstream.models.requests import ArmsQuery, ExperimentsQuery
from turnstream.service.block import measurement as _measurement

__all__ = ["register_experiment_routes"]


def _document(settings: Settings) -> MeasurementDocument | None:
    path = settings.jobs.measurement
    if not path:
        return None
    try:
        return _measurement(path)
    except OSError as exc:
        raise TurnstreamError(f"measurement document {path}: {exc.strerror}") from None


def register_experiment_routes(
    views: Views, settings: Settings, store: AsyncStore, run_job: Any
) -> None:
    """Add the experiments' read routes; ``run_job`` runs the experiments job read-only."""

    @views("experiments")
    class ExperimentsView(View):
        async def get(self, request: Request) -> Response:
            async def work() -> tuple[int, Any]:
                query = _query(request, ExperimentsQuery)
                key = caller(request)
                space_id = query.space_id or (
                    key.space if key is not None and key.space != ALL_SPACES else None
                )
                if space_id is not None:
                    _scope(request, space_id)
                doc = _document(settings)
                listed = [
                    {"id": e.id, "space_id": e.space_id, "outcome": e.outcome,
                     "arms": [a.name for a in e.arms], "starts_at": e.starts_at.isoformat(),
                     "ends_at": e.ends_at.isoformat() if e.ends_at else None}
                    for e in (doc.experiments if doc else ())
                    if space_id is None or e.space_id == space_id
                ]  # fmt: skip
                return 200, {"space_id": space_id, "experiments": listed}

            return await _guard(self, work)

    @views("arms")
    class ArmsView(View):
        async def get(self, request: Request, experiment_id: str) -> Response:
            async def work() -> tuple[int, Any]:
                query = _query(request, ArmsQuery)
                doc = _document(settings)
                found = [e for e in (doc.experiments if doc else ()) if e.id == experiment_id]
                # Another space's experiment answers as a missing one: its key learns
                # nothing of which experiments exist beyond its own space.
                if not found or refuse_space(request, found[0].space_id) is not None:
                    raise _not_found("experiment_id", f"no experiment {experiment_id!r}")
                params = {"experiment": experiment_id}
                if query.as_of is not None:
                    params["as_of"] = query.as_of.isoformat()
                try:
                    # Off the store thread: each statement takes it alone (SharedStore).
                    report = await asyncio.to_thread(_compare, store, settings, run_job, params)
                except (BadJobParameter, DataError) as exc:  # a look at a day not yet over
                    message = str(exc)
                    field = exc.parameter if isinstance(exc, BadJobParameter) else "as_of"
                    raise _HttpError(422, {"error": message, "errors": [
                        {"field": field, "message": message}]}) from None  # fmt: skip
                return 200, report["experiments"][0]

            return await _guard(self, work)


def _compare(store: AsyncStore, settings: Settings, run_job: Any, params: dict[str, str]) -> Any:
    """The experiments job without ``write``: the comparison, nothing recorded."""
    return run_job(SharedStore(store), settings, "experiments", params)
