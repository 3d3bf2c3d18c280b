"""Bootstrap: the one place where the store, the sink and the Faust app are wired."""

from __future__ import annotations

import asyncio
import gc
import logging

import faust

from turnstream.config import Settings
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import AsyncStore
from turnstream.streams.app import build_app
from turnstream.streams.ingest_loop import FANOUT_MAX_BYTES, IngestLoop
from turnstream.streams.kafka_admin import ensure_topics, max_message_bytes
from turnstream.streams.signals_loop import SignalsLoop
from turnstream.streams.topics import TopicNames

__all__ = ["run_worker", "tune_gc"]

log = logging.getLogger(__name__)


#: Allocations between young-generation collections (CPython's default: 700). A worker
#: allocates a few hundred objects per item and keeps many alive (a batch's decisions,
#: the idempotency-key cache, the signals states), so at the default the collector
#: walks them over and over: validating a batch took twice as long (bench/hot_path.py).
GC_YOUNG_THRESHOLD = 50_000


#: Bytes a record batch of one message adds to its key and value (header, lengths).
RECORD_BATCH_OVERHEAD = 1024


def tune_gc() -> None:
    """Freeze what start-up allocated (never collected again) and collect the young
    generation less often. Reference counting still frees almost everything at once;
    only cycles wait longer."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, older, oldest)


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Open the store, apply migrations, then run the Faust worker until stopped."""
    store = AsyncStore.open(settings.store.dsn, settings.store.database)
    try:
        applied = store.call(apply_migrations, store.store)
        if applied:
            log.info("schema migrations applied: %s", applied)
        names = TopicNames(settings.worker.topic_prefix)
        # Create the topics (with their partition count) before anything subscribes.
        asyncio.run(
            ensure_topics(
                settings.broker.bootstrap,
                [*names.inputs, names.accepted, names.dead_letters, names.inferences],
                settings.worker.partitions,
                configs=names.configs(),
            )
        )
        ingest = IngestLoop(settings, store)
        # An accepted topic made elsewhere may take less: refuse what it would refuse.
        taken = asyncio.run(max_message_bytes(settings.broker.bootstrap, names.accepted))
        ingest.fanout_max_bytes = min(FANOUT_MAX_BYTES, taken - RECORD_BATCH_OVERHEAD)
        log.info("accepted messages up to %d bytes", ingest.fanout_max_bytes)
        app = build_app(settings, ingest, SignalsLoop(settings, store))
        url = f"http://{settings.worker.web_host}:{settings.worker.web_port}"
        store.call(store.store.claim_ownership, url)
        tune_gc()
        worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
        worker.execute_from_commandline()
    finally:
        store.call(store.store.release_ownership)
        store.call(store.store.close)
        store.shutdown()
