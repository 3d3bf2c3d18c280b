"""Bootstrap: the one place where the store, the sink and the Faust app are wired."""

from __future__ import annotations

import asyncio
import logging

import faust

from turnstream.config import Settings
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import AsyncStore
from turnstream.streams.app import build_app
from turnstream.streams.ingest_loop import IngestLoop
from turnstream.streams.kafka_admin import ensure_topics
from turnstream.streams.signals_loop import SignalsLoop
from turnstream.streams.topics import TopicNames

__all__ = ["run_worker"]

log = logging.getLogger(__name__)


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
            )
        )
        app = build_app(settings, IngestLoop(settings, store), SignalsLoop(settings, store))
        url = f"http://{settings.worker.web_host}:{settings.worker.web_port}"
        store.call(store.store.claim_ownership, url)
        worker = faust.Worker(app, loglevel=loglevel, quiet=True, redirect_stdouts=False)
        worker.execute_from_commandline()
    finally:
        store.call(store.store.release_ownership)
        store.call(store.store.close)
        store.shutdown()
