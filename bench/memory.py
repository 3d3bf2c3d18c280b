"""Memory: the worker's RSS per active (pending) session, at 10k and 100k of them.

    .venv/bin/python bench/memory.py [--sessions 10000,100000]

The worker runs with its default batch settings (``--batch-size`` sets another) and
triggers that never fire during the run (``quiet_seconds`` and
``oldest_pending_seconds`` = 3600), so every session stays
pending in the derivation driver. The script publishes one interaction for each of N distinct
people (one session each): a list presented with 4 items (~650 bytes on the wire), the
usual first event of a session. After each step it waits until the worker reports that
many pending sessions (``/v1/status``) and the ingest group has committed, then
reads the worker's VmRSS from ``/proc/<pid>/status``.

Prints the RSS at each step, the RSS growth per session between steps (the marginal cost,
which leaves out start-up and warm-up), and an in-process breakdown (tracemalloc) of
what one pending session holds in the signals engine and what one message leaves in the
ingest driver's idempotency-key cache (200,000 keys at most), plus what one signals tick
(``fire_due`` + ``oldest_held``, on the store thread every second) costs at that many
pending sessions. Starts its own broker on free ports in a temporary directory and stops
it at the end. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import sys
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    DEFAULT_BATCH_SIZE,
    deploy,
    dumps,
    machine,
    publish,
    rss_bytes,
    run_broker,
    wait_drained,
    worker_pid,
)
from turnstream.config import Settings
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import uuid7

WARM_UP = 1000
EXTRA = "[signals]\nquiet_seconds = 3600\noldest_pending_seconds = 3600\n"


def session_line(n: int, rand: random.Random) -> bytes:
    """Person ``n``'s first (and only) event: a list of 4 presented in a new session."""
    now = datetime.now(UTC)
    at = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    refs = [f"item_variant:acme:{1000 + (n + i) % 60}" for i in range(4)]
    item = {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": f"mem-{n:07d}",
        "profile_id": f"p_mem{n:027d}",
        "source": "whatsapp",
        "conversation_id": f"wa-mem-{n:07d}",
        "occurred_at": at,
        "interaction": {
            "kind": "presented",
            "exposure_id": uuid7(int(now.timestamp() * 1000), rand),
            "list_id": f"wa-mem-{n:07d}-l1",
            "list_kind": "recommendation",
            "delivered_at": at,
            "visible_k": 4,
            "method": "bridge",
            "items": [
                {
                    "pos": i + 1,
                    "ref": ref,
                    "shown": {"price_sale": 59.9 + i, "color": "navy", "size": "M"},
                }
                for i, ref in enumerate(refs)
            ],
        },
    }
    return dumps(item)


def wait_pending(deployment: Deployment, sessions: int, timeout: float = 600) -> None:
    """Until the derivation driver holds ``sessions`` pending sessions and ingestion has
    committed everything (the signals group never drains: it commits below the oldest
    pending event)."""
    deadline = time.monotonic() + timeout
    while deployment.worker.stats()["pending_sessions"] < sessions:
        if time.monotonic() > deadline:
            raise TimeoutError(f"fewer than {sessions} pending sessions after {timeout:.0f}s")
        time.sleep(0.5)
    wait_drained(deployment)


def in_process(settings: Settings, count: int) -> tuple[float, float, float]:
    """(bytes per pending session in the engine, bytes per cached key, ms per tick)."""
    from aiokafka import TopicPartition

    from turnstream.adapters.clickhouse.idempotency_keys import KeyRegistry
    from turnstream.core.derivation import events_from_accepted
    from turnstream.core.derivation.engine import SignalsEngine
    from turnstream.core.ingest import Source, judge
    from turnstream.core.messages import accepted_for

    rand = random.Random(3)
    decisions = [
        judge(session_line(n, rand), Source("t.interactions", n % 4, n), settings)
        for n in range(count)
    ]
    messages = [SimpleNamespace(value=accepted_for(d), partition=n % 4, offset=n)
                for n, d in enumerate(decisions)]  # fmt: skip
    engine = SignalsEngine(settings.signals)
    keys = KeyRegistry(store=None)  # type: ignore[arg-type]  # remember() only
    now = datetime.now(UTC)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for m in messages:
        tp = TopicPartition("t.accepted", m.partition)
        for event in events_from_accepted(json.loads(m.value)):
            engine.offer(event, now, position=(tp, m.offset))
    gc.collect()
    engine_bytes = tracemalloc.get_traced_memory()[0] - before
    before = tracemalloc.get_traced_memory()[0]
    for d in decisions:  # fresh copies: the worker keeps these alone once a batch is done
        src = d.source
        keys.remember(d.dedup_key.encode().decode(), Source(src.topic, src.partition, src.offset))
    gc.collect()
    key_bytes = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    started = time.perf_counter()
    engine.fire_due(now)
    engine.oldest_held()  # what the live loop asks each tick for its commit bound
    tick_ms = (time.perf_counter() - started) * 1000
    return engine_bytes / count, key_bytes / count, tick_ms


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", default="10000,100000")
    parser.add_argument(
        "--batch-size", type=int, default=DEFAULT_BATCH_SIZE, help="worker.batch_size"
    )
    args = parser.parse_args()
    steps = [int(s) for s in args.sessions.split(",")]
    print(machine())
    print(
        f"one presented list (4 items) per person and session; warm-up {WARM_UP:,} sessions; "
        f"steps {', '.join(f'{s:,}' for s in steps)} pending sessions",
        flush=True,
    )
    rand = random.Random(1)
    lines = [session_line(n, rand) for n in range(max(steps))]
    rows: list[tuple[int, int]] = []
    with run_broker() as broker:
        deployment = deploy(broker, batch_size=args.batch_size, extra=EXTRA)
        deployment.worker.start()
        pid = worker_pid(deployment)
        print(f"  worker started: RSS {rss_bytes(pid) / 2**20:.0f} MiB", flush=True)
        done = 0
        for target in [WARM_UP, *steps]:
            t = time.monotonic()
            publish(deployment, lines[done:target])
            wait_pending(deployment, target)
            done = target
            rss = rss_bytes(pid)
            rows.append((target, rss))
            pending = deployment.worker.stats()["pending_sessions"]
            print(
                f"  {pending:>7,} pending sessions: RSS {rss / 2**20:,.0f} MiB "
                f"({rss / pending:,.0f} bytes per session overall; "
                f"step took {time.monotonic() - t:.0f}s)",
                flush=True,
            )
        settings = deployment.settings
    print("RSS growth per pending session, between steps:")
    for (n0, r0), (n1, r1) in itertools.pairwise(rows):
        print(f"  {n0:>7,} -> {n1:>7,}: {(r1 - r0) / (n1 - n0):,.0f} bytes per session")
    print("in-process (tracemalloc), and one signals tick with nothing due:")
    for n in steps:
        engine_b, key_b, tick = in_process(settings, n)
        print(
            f"  {n:>7,} sessions: {engine_b:,.0f} bytes per pending session in the signals "
            f"engine, {key_b:,.0f} per cached idempotency key; a tick takes {tick:.0f} ms "
            "of the store thread",
            flush=True,
        )


if __name__ == "__main__":
    main()
