"""What ``erase`` commands cost the store thread: erasures before and after batching, timed.

    .venv/bin/python bench/erase.py [ITEMS] [REPS]

Fills a throw-away chDB store the way the worker does (``service/ingest.ingest_batch`` on
batches of 1,000, and the signals tables from the accepted items through
``SignalsEngine.fire_all`` and ``write_derivations`` after each batch; no broker
needed) with ITEMS (default 50,000) ``mixed_items`` lines. Then, on that store, each
erasure on people not erased yet, REPS times (default 3) each:

* before: what ``erase_subject`` did until now, one ``ALTER TABLE ... DELETE ...
  SETTINGS mutations_sync = 2`` per table with a profile id, one table after the other;
  the same with ``mutations_sync = 1``; and a lightweight ``DELETE FROM`` per table
  followed by ``ALTER TABLE ... APPLY DELETED MASK`` (the mask alone leaves the rows on
  disk; the figure in brackets is the mask alone);
* after: ``erase_subject`` for one person, ``erase_subjects`` for ten in one call.

Ten people the old way is timed once (ten times one). The ingest driver runs an erasure on
its store thread, so ingestion (and the derivation driver) wait for it; the time per
1,000-message batch written is printed next to it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, machine, records
from turnstream.adapters.clickhouse.derivations import write_derivations
from turnstream.adapters.clickhouse.erasure import (
    RETAINED,
    erase_subject,
    erase_subjects,
    tables_with_profiles,
)
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.derivation import events_from_accepted
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.messages import accepted_for
from turnstream.service.ingest import ingest_batch
from turnstream_dev.sample import mixed_items

Subject = tuple[str, str]
_WHO = "space_id = {space_id:String} AND profile_id = {profile_id:String}"


def one_table_after_another(sync: int) -> Callable[[Store, list[Subject]], None]:
    """The erasure as it was: per subject, one synchronous mutation per table."""

    def erase(store: Store, subjects: list[Subject]) -> None:
        for space_id, profile_id in subjects:
            for table in tables_with_profiles(store):
                if table not in RETAINED:
                    store.command(
                        f"ALTER TABLE {table} DELETE WHERE {_WHO} SETTINGS mutations_sync = {sync}",
                        parameters={"space_id": space_id, "profile_id": profile_id},
                    )

    return erase


def lightweight(store: Store, subjects: list[Subject]) -> float:
    """``DELETE FROM`` per table, then the mask applied; returns the seconds of the first."""
    started = time.perf_counter()
    for space_id, profile_id in subjects:
        for table in tables_with_profiles(store):
            if table not in RETAINED:
                store.command(
                    f"DELETE FROM {table} WHERE {_WHO}",
                    parameters={"space_id": space_id, "profile_id": profile_id},
                )
    masked = time.perf_counter() - started
    for table in tables_with_profiles(store):
        if table not in RETAINED:
            store.command(f"ALTER TABLE {table} APPLY DELETED MASK SETTINGS mutations_sync = 1")
    return masked


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(machine())
    with in_process_loop("turnstream-erase-") as loop:
        store, settings = loop.store, loop.settings
        engine = SignalsEngine(settings.signals)
        topic = TopicNames(settings.worker.topic_prefix).input("interaction")
        messages = records(mixed_items(n=items, bad=0, seed=31).lines, topic)

        def fill() -> tuple[float, list[Subject]]:
            started = time.perf_counter()
            people: dict[Subject, None] = {}
            for start in range(0, len(messages), 1000):
                decisions = ingest_batch(
                    loop.ingest, messages[start : start + 1000], loop.fanout_max_bytes
                ).decisions
                now = datetime.now(UTC)
                for d in decisions:
                    if d.item is not None and d.profile_id:
                        people[(d.item.space_id, d.profile_id)] = None
                        for event in events_from_accepted(json.loads(accepted_for(d))):
                            engine.offer(event, now)
                write_derivations(store.store, engine.fire_all())
            return (time.perf_counter() - started) / (len(messages) / 1000), list(people)

        per_batch, people = store.call(fill)
        held = store.call(
            lambda: (
                store.store.query(
                    "SELECT table, sum(rows), count() FROM system.parts WHERE active AND "
                    "database = {database:String} GROUP BY table ORDER BY table",
                    {"database": store.store.database},
                ).rows
            )
        )
        print(
            f"{items:,} items ingested ({len(people)} people): {per_batch * 1000:.0f} ms "
            "per 1,000-message batch (decide, rows, write, derive)"
        )
        tables = store.call(tables_with_profiles, store.store)
        parts = {table: (rows, n) for table, rows, n in held}
        print(
            "tables with a profile id (rows, active parts): "
            + ", ".join(
                f"{t} {parts.get(t, (0, 0))[0]:,}/{parts.get(t, (0, 0))[1]}" for t in tables
            )
        )
        fresh = iter(people)

        def take(n: int) -> list[Subject]:
            return [next(fresh) for _ in range(n)]

        def timed(fn: Callable[[Store, list[Subject]], object], n: int) -> float:
            subjects = take(n)

            def run() -> float:
                started = time.perf_counter()
                fn(store.store, subjects)
                return time.perf_counter() - started

            return store.call(run)

        timings: dict[str, list[float]] = {}
        masks: list[float] = []
        mutated: list[int] = []

        def after_one(s: Store, subjects: list[Subject]) -> None:
            mutated.append(len(erase_subject(s, *subjects[0]).deleted))

        for _ in range(reps):
            for name, fn, n in (
                ("before, mutations_sync = 2", one_table_after_another(2), 1),
                ("before, mutations_sync = 1", one_table_after_another(1), 1),
                ("lightweight DELETE + APPLY DELETED MASK", None, 1),
                ("after: erase_subject", after_one, 1),
                ("after: erase_subjects, 10 in one call", erase_subjects, 10),
            ):
                if fn is None:
                    subjects = take(n)
                    started = time.perf_counter()
                    masks.append(store.call(lightweight, store.store, subjects))
                    timings.setdefault(name, []).append(time.perf_counter() - started)
                else:
                    timings.setdefault(name, []).append(timed(fn, n))
        timings["before, 10 one after another (mutations_sync = 2)"] = [
            timed(one_table_after_another(2), 10)
        ]
    print(f"erasure times on this store, ms (median of {reps}; min-max), people not erased yet:")
    for name, seconds in timings.items():
        ms = [s * 1000 for s in seconds]
        line = f"  {name}: {statistics.median(ms):,.0f} ({min(ms):,.0f}-{max(ms):,.0f})"
        if name.startswith("lightweight"):
            line += f" [mask alone {statistics.median(masks) * 1000:,.0f}]"
        if name == "after: erase_subject":
            line += f", {statistics.median(mutated):.0f} of the tables held rows and were mutated"
        print(line + f" = {statistics.median(seconds) / per_batch:.1f} batches' worth of ingestion")


if __name__ == "__main__":
    main()
