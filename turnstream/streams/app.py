"""The Faust app of the worker: app, tasks, pages, top to bottom.

The ingest loop (:mod:`turnstream.streams.ingest_loop`) runs as one of the app's tasks;
the app also serves the worker's HTTP pages, which is how other processes query the
embedded store this process owns.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import faust
from faust.app.base import BootStrategy
from faust.web import Request, Response, View

from turnstream.config import Settings
from turnstream.errors import StoreError, TurnstreamError
from turnstream.sinks.failures import short_message
from turnstream.streams.ingest_loop import IngestLoop
from turnstream.streams.pages import register_pages
from turnstream.streams.signals_loop import SignalsLoop

__all__ = ["build_app"]

log = logging.getLogger(__name__)


class _LoopsOnly(BootStrategy):
    enable_kafka = False


class _App(faust.App):
    BootStrategy = _LoopsOnly


def _describe(exc: BaseException) -> str:
    """One line for the liveness record: the exception's class and message."""
    return short_message(f"{type(exc).__name__}: {exc}")


def build_app(settings: Settings, ingest: IngestLoop, signals: SignalsLoop) -> faust.App:
    """The worker's Faust app, running the ingest and signals loops, serving its pages."""
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
    )
    store = ingest.store

    @app.task
    async def consume() -> None:
        # Like the signals loop: a failure (a long broker outage) restarts the loop from
        # the last commit instead of leaving a worker that answers but never ingests; the
        # liveness record shows it failing meanwhile.
        while True:
            try:
                await ingest.run()
            except asyncio.CancelledError:
                if app.should_stop:
                    raise
                log.exception("the ingest loop was cancelled; restarting it in 1 s")
            except Exception as exc:
                log.exception("the ingest loop failed; restarting it in 1 s")
                ingest.liveness.failed(_describe(exc), "crash", time.time())
            await asyncio.sleep(1)

    @app.task
    async def derive() -> None:
        # A failure here must not stop ingestion: log it and start again from the last
        # commit (pending events are re-consumed; folding skips what it already folded).
        while True:
            try:
                await signals.run()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.exception("the signals loop failed; restarting it in 5 s")
                signals.liveness.failed(_describe(exc), "crash", time.time())
                await asyncio.sleep(5)

    register_pages(app, settings, store)

    @app.page("/v1/status")
    class StatusView(View):
        async def get(self, request: Request) -> Response:
            now = time.time()
            return self.json(
                {
                    "store": store.store.describe(),
                    **ingest.stats.as_dict(),
                    "derivations": signals.derivations,
                    "pending_sessions": len(signals.engine.pending),
                    "ingest": ingest.liveness.as_dict(now),
                    "signals": signals.liveness.as_dict(now),
                }
            )

    @app.page("/v1/jobs/{name}/")
    class JobView(View):
        async def post(self, request: Request, name: str) -> Response:
            from turnstream.jobs.runner import run_job_here

            try:
                params: Any = await request.json()
            except ValueError:
                params = {}
            if not isinstance(params, dict):
                return self.error(400, "body must be a JSON object of parameters")
            try:
                report = await store.run(run_job_here, store.store, settings, name, params)
            except TurnstreamError as exc:
                return self.error(400, str(exc))
            return self.bytes(
                json.dumps(report, default=str).encode(), content_type="application/json"
            )

    @app.page("/v1/sql")
    class SqlView(View):
        async def post(self, request: Request) -> Response:
            try:
                body: Any = await request.json()
                sql = body["sql"]
                parameters = body.get("parameters") or {}
                if not isinstance(sql, str) or not isinstance(parameters, dict):
                    raise TypeError
            except (ValueError, KeyError, TypeError, AttributeError):
                return self.error(
                    400, 'body must be JSON: {"sql": "SELECT ...", "parameters": {...}}'
                )
            try:
                result = await store.run(store.store.read_only, sql, parameters)
            except StoreError as exc:
                return self.error(400, str(exc))
            payload = {"columns": result.columns, "types": result.types, "rows": result.rows}
            return self.bytes(
                json.dumps(payload, default=str).encode(), content_type="application/json"
            )

    return app
