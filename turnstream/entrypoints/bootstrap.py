"""The bootstrap: the one place where the worker's parts are chosen, built and wired.

:func:`run_worker` opens the store; :func:`build_parts` builds the sinks, the key
registry, the priors cache, the derivation engine and the commands producer once, and
hands them to the drivers; then the Faust app runs them. :func:`build_replay` builds the
same parts for the replay driver. Nothing else opens a store for a driver or builds a
sink.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import faust

from turnstream.adapters.api_key_file import KeyFile
from turnstream.adapters.clickhouse.analyst_sql import AnalystSql
from turnstream.adapters.clickhouse.bisect import IsolatingSink
from turnstream.adapters.clickhouse.derivations import DerivationSink
from turnstream.adapters.clickhouse.erasure import StoreErasures
from turnstream.adapters.clickhouse.idempotency_keys import KeyRegistry
from turnstream.adapters.clickhouse.priors import PriorsCache, settled_spaces
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.sealing import seal_stated
from turnstream.adapters.clickhouse.sensitivity import write_sensitive
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.adapters.kafka.admin import ensure_topics, max_message_bytes
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.kafka.retry import retrying
from turnstream.adapters.kafka.topic_check import input_topic_warnings
from turnstream.adapters.kafka.topology import FANOUT_MAX_BYTES, topology_of
from turnstream.config import Settings
from turnstream.core.derivation.first_fit import FirstFits, fit_params
from turnstream.core.object_types import check_spaces, sensitive_names
from turnstream.entrypoints.kafka.derivation_driver import MAX_STATES_IN_MEMORY, DerivationDriver
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.entrypoints.kafka.prepare_process import PrepareStage
from turnstream.entrypoints.replay import Replay, unsigned_preparer
from turnstream.entrypoints.worker_app import build_app
from turnstream.jobs.runner import run_job_here
from turnstream.service.ingest import Ingest
from turnstream.service.ports import Preparer
from turnstream.service.rederive import rederive_people, signals_engine

__all__ = [
    "WorkerParts",
    "build_ingest",
    "build_parts",
    "build_replay",
    "prepare_store",
    "ready_topics",
    "run_worker",
    "tune_gc",
]

log = logging.getLogger(__name__)


#: Allocations between young-generation collections (CPython's default: 700). A worker
#: allocates a few hundred objects per item and keeps many alive (a batch's decisions,
#: the idempotency-key cache, the signals states), so at the default the collector
#: walks them over and over: validating a batch took twice as long (bench/hot_path.py).
#: With batches of 20,000 in flight (round nine), 50,000 still made 4 collections of the
#: middle generation per 200,000 items drained, each walking the batches in flight
#: (0.5 s of the parent's GIL in all); at 200,000, none (young collections ~55 ms each,
#: 0.7 s in all, as before).
GC_YOUNG_THRESHOLD = 200_000

#: Bytes a record batch of one message adds to its key and value (header, lengths).
RECORD_BATCH_OVERHEAD = 1024

#: Seconds the worker's start-up gives the broker to make its topics ready, transient
#: errors retried (:func:`ready_topics`): long for a broker on a loaded machine, shorter
#: than the 90 s the tests give a worker to answer (turnstream_dev/worker_process.py).
STARTUP_SECONDS = 60.0


def tune_gc() -> None:
    """Freeze what start-up allocated (never collected again) and collect the young
    generation less often. Reference counting still frees almost everything at once;
    only cycles wait longer."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


@dataclass
class WorkerParts:
    """Everything a worker runs, built once."""

    store: AsyncStore
    ingest: IngestDriver
    derivation: DerivationDriver
    producer: Producer


def build_parts(settings: Settings, store: AsyncStore) -> WorkerParts:
    """The drivers on ``store``, with their sinks, key registry, priors cache and engine,
    and the producer the routes publish commands with (started on first use)."""
    check_spaces(settings)
    topology = topology_of(settings)
    derived = DerivationSink(store.store)
    engine = signals_engine(
        settings, derived, PriorsCache(store.store), max_states=MAX_STATES_IN_MEMORY
    )
    stage = PrepareStage(settings, topology.names)
    return WorkerParts(
        store=store,
        ingest=IngestDriver(
            settings, topology, store, build_ingest(settings, store.store, stage), stage
        ),
        derivation=DerivationDriver(
            settings,
            topology,
            store,
            engine,
            derived,
            first_fits=FirstFits() if settings.jobs.first_fit else None,
        ),
        producer=Producer(settings),
    )


def build_ingest(settings: Settings, store: Store, prepare: Preparer) -> Ingest:
    """The ingest use case on ``store``'s ports, preparing with ``prepare``."""
    return Ingest(
        settings,
        topology_of(settings).names.dead_letters,
        prepare,
        KeyRegistry(store),
        IsolatingSink(RawSink(store)),
        StoreErasures(store),
    )


def prepare_store(store: Store, settings: Settings) -> list[int]:
    """Apply the migrations and write the sensitive names the aggregates' views leave
    out; the migrations applied now."""
    applied = apply_migrations(store)
    names = sensitive_names(settings)
    write_sensitive(store, names)
    seal_stated(store, names)  # words stated before migration 29 (or the marking)
    return applied


def build_replay(settings: Settings, store: Store) -> Replay:
    """The replay driver on ``store``: the same sinks and engine as live, with the priors
    read once (a replay is one moment) and every state kept in memory."""
    check_spaces(settings)
    derived = DerivationSink(store)
    engine = signals_engine(settings, derived, PriorsCache(store, ttl_seconds=float("inf")))
    names = topology_of(settings).names
    ingest = build_ingest(settings, store, unsigned_preparer(settings, names))
    if not settings.jobs.first_fit:
        return Replay(ingest, derived, engine, names.accepted)
    first_fits = FirstFits(settled=settled_spaces(store, datetime.now(UTC).date()))
    rederive = functools.partial(rederive_people, engine, derived)

    def run_fit(spaces: list[str]) -> dict[str, Any]:
        # As live: through today, whatever the file's dates.
        params = fit_params(spaces, datetime.now(UTC).date())
        return run_job_here(store, settings, "priors", params, rederive=rederive)

    return Replay(ingest, derived, engine, names.accepted, first_fits, run_fit)


async def ready_topics(settings: Settings, within: float = STARTUP_SECONDS) -> int:
    """Create the worker's topics (with their partition count and the largest message
    each takes) and wait for their partitions' leaders, before anything subscribes; the
    largest message the accepted topic takes. A transient broker error (a leader still
    being elected, a broker not answering yet: ``adapters/kafka/retry.transient``) is
    logged and retried with back-off for ``within`` seconds in all; then, or on any other
    error, it raises and the worker does not start. An input topic made beforehand without
    the settings turnstream creates it with is logged as a warning, with the command that
    sets them (``adapters/kafka/topic_check``); the worker starts all the same."""
    names = topology_of(settings).names
    options = client_options(settings)
    bootstrap = settings.broker.bootstrap
    deadline = time.monotonic() + within
    await retrying(
        lambda: ensure_topics(
            bootstrap,
            names.every,
            settings.worker.partitions,
            configs=names.configs(),
            options=options,
            timeout=max(deadline - time.monotonic(), 0.0),
        ),
        "creating the topics",
        deadline,
    )
    taken = await retrying(
        lambda: max_message_bytes(bootstrap, names.accepted, options),
        f"reading the limit of {names.accepted}",
        deadline,
    )
    for warning in await input_topic_warnings(bootstrap, names.inputs, deadline, options):
        log.warning("%s", warning)
    return taken


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Open the store, apply migrations, then run the Faust worker until stopped."""
    store = AsyncStore.open(settings.store.dsn, settings.store.database)
    parts: WorkerParts | None = None
    analysts: AnalystSql | None = None
    try:
        applied = store.call(prepare_store, store.store, settings)
        if applied:
            log.info("schema migrations applied: %s", applied)
        taken = asyncio.run(ready_topics(settings))
        parts = build_parts(settings, store)
        # An accepted topic made elsewhere may take less: refuse what it would refuse.
        parts.ingest.fanout_max_bytes = min(FANOUT_MAX_BYTES, taken - RECORD_BATCH_OVERHEAD)
        log.info("accepted messages up to %d bytes", parts.ingest.fanout_max_bytes)
        keys = KeyFile(settings.keys_path())
        if not keys.current():
            log.warning(
                "no API keys in %s: every route but /v1/status refuses; create one with "
                "turnstream keys create",
                keys.path,
            )
        # Analysts' SQL on connections of its own, never the store thread's.
        analysts = AnalystSql(settings.store.dsn, settings.store.database, settings.sql)
        app = build_app(
            settings,
            store,
            parts.ingest,
            parts.derivation,
            parts.producer,
            functools.partial(run_job_here, rederive=parts.derivation.rederive),
            keys,
            analysts,
        )
        url = f"http://{settings.worker.web_host}:{settings.worker.web_port}"
        store.call(store.store.claim_ownership, url)
        tune_gc()
        parts.ingest.start()  # the prepare process, with the thresholds just set
        worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
        worker.execute_from_commandline()
    finally:
        if analysts is not None:
            analysts.close()
        if parts is not None:
            parts.ingest.close()
        store.call(store.store.release_ownership)
        store.call(store.store.close)
        store.shutdown()
