"""What one ``erase`` command costs the ingest loop: the synchronous deletes, timed.

    .venv/bin/python bench/erase.py [ITEMS]

Fills a throw-away chDB store the way the worker does (``IngestLoop.decide_batch``,
``rows`` and ``RawSink.write`` on batches of 1,000; no broker needed) with ITEMS (default
50,000) ``mixed_items`` lines, then erases five people with ``erase_subject``, as the
ingest loop does after writing a batch that holds an ``erase``: one ``ALTER TABLE ...
DELETE ... SETTINGS mutations_sync = 2`` per table with a profile id, on the store
thread, so ingestion (and the signals loop) wait for it. Prints the time per erase next
to the time per 1,000-message batch written. Prints figures; asserts nothing.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import machine
from tests.fixtures.worker import SPACES
from turnstream.config import load_settings
from turnstream.sample import mixed_items
from turnstream.sinks.erasure import erase_subject
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import AsyncStore
from turnstream.streams.ingest_loop import IngestLoop
from turnstream.streams.topics import TopicNames


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    print(machine())
    with tempfile.TemporaryDirectory(prefix="turnstream-erase-") as tmp:
        config = Path(tmp) / "turnstream.toml"
        config.write_text(
            f'[broker]\nbootstrap = "127.0.0.1:9"\n[store]\ndsn = "chdb://{tmp}/store"\n'
            f'[identity]\nsecret = "bench"\n[worker]\napp_id = "e"\ntopic_prefix = "e"\n{SPACES}'
        )
        settings = load_settings(config, environ={})
        store = AsyncStore.open(settings.store.dsn, settings.store.database)
        try:
            store.call(apply_migrations, store.store)
            loop = IngestLoop(settings, store)
            topic = TopicNames("e").input("interaction")
            lines = mixed_items(n=items, bad=0, seed=31).lines
            messages = [
                SimpleNamespace(topic=topic, partition=n % 4, offset=n, value=line, key=None)
                for n, line in enumerate(lines)
            ]

            def fill() -> tuple[float, list[tuple[str, str]]]:
                started = time.perf_counter()
                people: dict[tuple[str, str], None] = {}
                for start in range(0, len(messages), 1000):
                    decisions = loop.decide_batch(messages[start : start + 1000])
                    loop.sink.write(loop.rows(decisions))
                    for d in decisions:
                        loop.keys.remember(d.dedup_key, d.source)
                        if d.item is not None and d.profile_id:
                            people[(d.item.space_id, d.profile_id)] = None
                return (time.perf_counter() - started) / (len(messages) / 1000), list(people)

            per_batch, people = store.call(fill)

            def erase(space: str, profile: str) -> tuple[float, int]:
                started = time.perf_counter()
                erasure = erase_subject(store.store, space, profile)
                return time.perf_counter() - started, len(erasure.tables)

            timings = [store.call(erase, space, profile) for space, profile in people[:5]]
        finally:
            store.call(store.store.close)
            store.shutdown()
    seconds = [t for t, _ in timings]
    print(
        f"{items:,} items ingested ({len(people)} people): {per_batch * 1000:.0f} ms per "
        f"1,000-message batch (decide, rows, write)"
    )
    print(
        f"one erase: median {statistics.median(seconds):.2f} s, max {max(seconds):.2f} s "
        f"({timings[0][1]} tables, one synchronous mutation each), i.e. "
        f"{statistics.median(seconds) / per_batch:.0f} batches' worth of ingestion stalled"
    )


if __name__ == "__main__":
    main()
