"""The Faust app of the worker: app, tasks, routes, top to bottom.

The ingest and the derivation drivers each run on the one batch loop, as one of the
app's tasks; the app also serves the worker's HTTP routes, which is how other processes
query the embedded store this process owns. Everything it runs is built by the
bootstrap (:mod:`turnstream.entrypoints.bootstrap`) and handed in.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import faust
from faust.app.base import BootStrategy
from faust.web import Request, Response, View
from faust.web.base import BlueprintManager

from turnstream.adapters.api_key_file import KeyFile
from turnstream.adapters.clickhouse.analyst_sql import AnalystSql
from turnstream.adapters.clickhouse.shared_store import SharedStore
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.kafka.ownership import PartitionRole
from turnstream.adapters.webhooks.sender import WebhookSender, endpoints_of
from turnstream.config import Settings
from turnstream.core import json_values
from turnstream.core.access import Role
from turnstream.core.derivation.first_fit import fit_params
from turnstream.entrypoints.http.access import auth_middleware, caller
from turnstream.entrypoints.http.bodies import BadBody, json_body
from turnstream.entrypoints.http.console import register_console
from turnstream.entrypoints.http.experiment_routes import register_experiment_routes
from turnstream.entrypoints.http.routes import Publisher, register_routes
from turnstream.entrypoints.http.status import StatusReport, StoreCheck
from turnstream.entrypoints.http.views import Views
from turnstream.entrypoints.kafka.batch_loop import BatchLoop
from turnstream.entrypoints.kafka.derivation_driver import DerivationDriver
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.errors import (
    BadJobParameter,
    SqlBusy,
    SqlRefused,
    StoreError,
    TurnstreamError,
    UnknownJob,
)

__all__ = ["JobRunner", "build_app"]

log = logging.getLogger(__name__)

#: Runs a job by name on the store, in this process: ``(store, settings, name, params)``.
JobRunner = Callable[[Store, Settings, str, dict[str, str]], dict[str, Any]]


class _LoopsOnly(BootStrategy):
    """The app's services without Faust's own Kafka consumer and producer: the batch
    loops run their own aiokafka clients, and Faust's consumer thread, whose stop hangs
    while the broker is down, would keep a worker told to stop alive until SIGKILL."""

    enable_kafka = False


class _App(faust.App):
    BootStrategy = _LoopsOnly


def build_app(
    settings: Settings,
    store: AsyncStore,
    ingest: IngestDriver,
    derivation: DerivationDriver,
    producer: Publisher,
    run_job: JobRunner,
    keys: KeyFile,
    analysts: AnalystSql | None = None,
) -> faust.App:
    """The worker's Faust app: the two drivers on their batch loops, and the routes,
    each asking for a key of ``keys`` with the role the route table gives it.
    ``analysts`` runs ``/v1/sql`` on connections of its own (made from ``settings``
    when not given), never on the store's thread."""
    w = settings.worker
    app = _App(
        f"{w.app_id}-worker",
        broker=f"kafka://{settings.broker.bootstrap}",
        store="memory://",
        datadir=str(settings.faust_dir()),
        topic_partitions=w.partitions,
        web_enabled=True,
        web_bind=w.web_host,
        web_port=w.web_port,
        web_host=w.web_host,
        producer_acks=-1,
        broker_session_timeout=w.session_timeout,
        broker_heartbeat_interval=w.session_timeout / 4,
        # Faust's own pages (/router, /table, /graph, /stats, the index) are not ours to
        # declare roles for: none is served.
        web_router_enabled=False,
        web_tables_enabled=False,
        web_graph_enabled=False,
        web_stats_enabled=False,
    )
    app.web.blueprints = BlueprintManager([])
    jobs_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jobs")
    app.web.web_app.middlewares.append(auth_middleware(keys))

    # One webhook sender per store: the worker holding partition 0 of the accepted topic
    # in the derivation group runs it (adapters/kafka/ownership.py).
    role = PartitionRole(
        derivation.topics[0], derivation.liveness, fresh_seconds=0.75 * w.session_timeout
    )
    # A failure of one loop (a long broker outage, a store error) restarts that loop
    # from its last commit; the other loop and the routes go on.
    app.task(_task(BatchLoop(settings, ingest), app))
    app.task(_task(BatchLoop(settings, derivation, on_held=role.held_partitions), app))

    # Every route of the table (entrypoints/http/route_table.py), bound by its view's name.
    views = Views(app)
    register_routes(views, settings, store, producer)
    register_experiment_routes(views, settings, store, run_job)
    fits = FitProgress()
    jobs = JobProgress()
    if derivation.first_fits is not None:
        derivation.run_fit = functools.partial(
            _first_fit, jobs_thread, jobs, run_job, store, settings, fits
        )
    register_console(views)
    sql_lanes = analysts or AnalystSql(settings.store.dsn, settings.store.database, settings.sql)

    endpoints = endpoints_of(settings)
    if (
        endpoints
    ):  # review-request webhooks: signed, retried, recorded (adapters/webhooks/sender.py)
        sender = WebhookSender(store, endpoints)

        async def webhooks() -> None:
            await sender.run_forever(lambda: app.should_stop, role)

        app.task(webhooks)

    report = StatusReport(
        {ingest.name: ingest.liveness, derivation.name: derivation.liveness},
        StoreCheck(store),
        lambda detail: {
            **ingest.stats.as_dict(),
            "derivations": derivation.derivations,
            # The store thread's CPU for them (holding events, firing, reads and writes).
            "derivation_cpu_seconds": round(derivation.cpu_seconds, 3),
            # Events dropped at derivation: they occurred before their person's erase.
            "derivation_erased_before_arrival": derivation.engine.dropped_erased,
            "pending_sessions": len(derivation.engine.pending),
            # New spaces' first fits (jobs.first_fit): running, done, failed, and which
            # spaces (to an operator only: the status answers without a key).
            "first_fits": fits.as_dict(detail),
            # The jobs thread: which job runs, which wait behind it, the last one's end.
            "jobs": jobs.as_dict(detail),
        },
        w.status_grace,
    )

    @views("status")
    class StatusView(View):
        async def get(self, request: Request) -> Response:
            # Open to healthchecks: without an operator's key, no store address and no
            # error text (a store's message may quote data); states, classes, counts and
            # offsets stay. 503 while a loop fails past the grace (entrypoints/http/status.py).
            key = caller(request)
            detail = key is not None and Role.operator in key.roles
            code, body = await report.answer(detail)
            return self.json(body, status=code)

    @views("jobs")
    class JobView(View):
        async def post(self, request: Request, name: str) -> Response:
            try:
                params: Any = await json_body(request)
            except BadBody:
                params = {}
            if not isinstance(params, dict):
                return _refuse(self, 400, "<body>", "body must be a JSON object of parameters")
            jobs.asked(name)
            try:
                # On the jobs thread, one job at a time; each of its statements takes
                # the store thread alone, so batches and firings run between them.
                report = await asyncio.get_running_loop().run_in_executor(
                    jobs_thread, _run_shared, jobs, run_job, store, settings, name, params
                )
            except TurnstreamError as exc:
                field = "name" if isinstance(exc, UnknownJob) else "<body>"
                if isinstance(exc, BadJobParameter):
                    field = exc.parameter
                return _refuse(self, 400, field, str(exc))
            return self.bytes(
                json.dumps(report, default=str).encode(), content_type="application/json"
            )

    @views("sql")
    class SqlView(View):
        async def post(self, request: Request) -> Response:
            try:
                body: Any = await json_body(request)
            except BadBody:
                return _refuse(self, 400, "<body>", 'not JSON: {"sql": "SELECT ...", ...}')
            sql = body.get("sql") if isinstance(body, dict) else None
            parameters = (body.get("parameters") or {}) if isinstance(body, dict) else None
            if not isinstance(sql, str):
                return _refuse(self, 422, "sql", "a query (text) is required")
            if not isinstance(parameters, dict):
                return _refuse(self, 422, "parameters", "an object of {name: value}")
            try:
                # Judged, then run on a connection of its own (adapters/clickhouse/analyst_sql.py).
                result = await sql_lanes.run_async(sql, parameters)
            except SqlRefused as exc:
                field = "parameters" if str(exc).startswith("parameters:") else "sql"
                return _refuse(self, 400, field, str(exc))
            except SqlBusy as exc:
                busy = _refuse(self, 503, "sql", str(exc))
                busy.headers["Retry-After"] = str(max(1, round(settings.sql.wait / 2)))
                return busy
            except StoreError as exc:
                # The store's own refusal (an unknown table, a limit reached...).
                return _refuse(self, 400, "sql", str(exc))
            payload = {"columns": result.columns, "types": result.types, "rows": result.rows}
            # NaN and ±Infinity as strings: bare, they are not JSON (core/json_values.py).
            return self.bytes(json_values.dumps(payload), content_type="application/json")

    views.check()
    return app


def _run_shared(
    jobs: JobProgress,
    run_job: JobRunner,
    store: AsyncStore,
    settings: Settings,
    name: str,
    params: dict[str, str],
) -> dict[str, Any]:
    """Run job ``name`` on this thread through a :class:`SharedStore` of ``store``,
    noting in ``jobs`` when it starts and how it ends."""
    jobs.started(name)
    shared = SharedStore(store)
    error: BaseException | None = None
    try:
        return run_job(shared, settings, name, params)
    except BaseException as exc:
        error = exc
        raise
    finally:
        shared.close()
        jobs.ended(name, error)


@dataclass
class JobProgress:
    """The jobs the worker runs on its jobs thread, one at a time (asked through
    ``POST /v1/jobs/NAME/``, or a first fit): which runs and since when, which wait behind
    it, how the last one ended. Asked on the event loop's thread, run on the jobs
    thread: each change is one assignment or list call (atomic for the reader)."""

    running: str | None = None
    since: datetime | None = None
    waiting: list[str] = field(default_factory=list)
    last: dict[str, Any] | None = None
    #: The last one's error text (shown to an operator only: a store's message may
    #: quote data).
    last_error: str | None = None

    def asked(self, name: str) -> None:
        """Job ``name`` was asked for: it waits for the jobs thread."""
        if self.running == name or name in self.waiting:
            log.info("job %s asked while another run of it is running or waiting: it runs "
                     "after that one", name)  # fmt: skip
        self.waiting.append(name)

    def started(self, name: str) -> None:
        self.waiting.remove(name)
        self.running, self.since = name, datetime.now(UTC)

    def ended(self, name: str, error: BaseException | None) -> None:
        seconds = (datetime.now(UTC) - self.since).total_seconds() if self.since else 0.0
        self.last = {
            "job": name,
            "ok": error is None,
            "seconds": round(seconds, 3),
            "error_class": type(error).__name__ if error is not None else None,
        }
        self.last_error = str(error) if error is not None else None
        self.running, self.since = None, None

    def as_dict(self, detail: bool) -> dict[str, Any]:
        """For ``/v1/status``: job names, times and outcomes, no parameters; the last
        error's text when ``detail`` (an operator asks)."""
        last = self.last and {**self.last, **({"error": self.last_error} if detail else {})}
        return {
            "running": self.running,
            "running_since": self.since.isoformat() if self.since else None,
            "waiting": list(self.waiting),
            "last": last,
        }


@dataclass
class FitProgress:
    """The first fits the worker ran (on the event loop's thread only)."""

    running: int = 0
    done: int = 0
    failed: int = 0
    spaces: set[str] = field(default_factory=set)

    def as_dict(self, detail: bool) -> dict[str, Any]:
        """For ``/v1/status``: a reader of a new space's inferences waits for running 0;
        the spaces fitted by name when ``detail`` (an operator asks), else how many."""
        return {
            "running": self.running,
            "done": self.done,
            "failed": self.failed,
            "spaces": sorted(self.spaces) if detail else len(self.spaces),
        }


def _first_fit(
    jobs_thread: ThreadPoolExecutor,
    jobs: JobProgress,
    run_job: JobRunner,
    store: AsyncStore,
    settings: Settings,
    fits: FitProgress,
    spaces: list[str],
) -> None:
    """The priors job for new ``spaces`` on the jobs thread (:func:`fit_params`);
    logged and counted in ``fits`` (``/v1/status``), never raised (the next nightly run
    fits them anyway)."""
    params = fit_params(spaces, datetime.now(UTC).date())
    log.info("first fit of the field priors of new spaces: %s", ", ".join(spaces))
    fits.running += 1
    fits.spaces.update(spaces)
    jobs.asked("priors")
    future = asyncio.get_running_loop().run_in_executor(
        jobs_thread, _run_shared, jobs, run_job, store, settings, "priors", params
    )

    def done(f: asyncio.Future[dict[str, Any]]) -> None:
        fits.running -= 1
        if f.cancelled():
            return
        if (error := f.exception()) is not None:
            fits.failed += 1
            log.error("first fit of %s failed: %s", ", ".join(spaces), error)
        else:
            fits.done += 1

    future.add_done_callback(done)


def _refuse(view: View, status: int, field: str, message: str) -> Response:
    """A refusal of the request's input, naming the field (``<body>``: all of it)."""
    return view.json(
        {"error": message, "errors": [{"field": field, "message": message}]}, status=status
    )


def _task(loop: BatchLoop[Any], app: faust.App) -> Callable[[], Awaitable[None]]:
    """A task of the app (no argument: Faust would pass the app) that runs ``loop``."""

    async def run() -> None:
        await loop.run_forever(lambda: app.should_stop)

    run.__name__ = run.__qualname__ = f"{loop.driver.name}_loop"
    return run
