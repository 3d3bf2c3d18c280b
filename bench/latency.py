"""Latency: from a producer's send to the row being visible in ClickHouse, at a fixed load.

    .venv/bin/python bench/latency.py [--rate 500] [--seconds 30]

Publishes RATE items a second for SECONDS seconds (default 500/s for 30 s: 15,000 valid
items of ``mixed_items``: turns, interactions, outcomes and commands in the ratio 4 : 3.5 :
1.5 : 1) to a worker with its default batch settings (1000 messages or 0.5 s). Each item's
idempotency key carries its send time (``lat-<n>-<time_ns>``, stamped just before
``Producer.publish``). Two measures of when an item became visible, per item:

* **stamped**: ``ingested_at`` of its ``idempotency_keys`` row, which the worker takes just
  before it writes the batch (the batch lands a write later: a lower bound);
* **polled**: the start of the first query of a poller that asks the worker's ``/v1/sql``
  every 0.1 s for new ``idempotency_keys`` rows (the last table each batch writes, so
  the whole batch is visible by then): an upper bound, at most ~0.1 s late.

The worker first drains a warm-up of 200 items, so the group join is not measured.
Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    DEFAULT_BATCH_SECONDS,
    DEFAULT_BATCH_SIZE,
    add_prepare_process,
    deploy,
    dumps,
    machine,
    percentile,
    prepare_process_line,
    publish,
    publish_paced,
    run_broker,
    sql,
    wait_drained,
)
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import mixed_items

POLL_SECONDS = 0.1


class Poller(threading.Thread):
    """Asks the worker for the ``idempotency_keys`` rows above the offsets seen so far."""

    def __init__(self, deployment: Deployment) -> None:
        super().__init__(daemon=True)
        self.deployment = deployment
        self.first_seen: dict[str, float] = {}
        self.high: dict[tuple[str, int], int] = {}
        self.queries = 0
        self.query_seconds = 0.0
        self.stop = threading.Event()

    def _query(self) -> str:
        cases = ", ".join(
            f"_topic = '{t}' AND _partition = {p}, {o}" for (t, p), o in self.high.items()
        )
        floor = f"multiIf({cases}, -1)" if cases else "-1"
        return (
            "SELECT idempotency_key_of, _topic, _partition, _offset FROM ("
            "SELECT splitByChar('\\x1f', dedup_key)[3] AS idempotency_key_of, "
            "_topic, _partition, _offset FROM idempotency_keys) "
            f"WHERE toInt64(_offset) > {floor}"
        )

    def run(self) -> None:
        while not self.stop.is_set():
            started = time.time()
            rows = sql(self.deployment, self._query())
            self.query_seconds += time.time() - started
            self.queries += 1
            for key, topic, partition, offset in rows:
                self.first_seen.setdefault(key, started)
                tp = (topic, int(partition))
                self.high[tp] = max(self.high.get(tp, -1), int(offset))
            self.stop.wait(max(0.0, POLL_SECONDS - (time.time() - started)))


def sent_at(key: str) -> float:
    return int(key.rsplit("-", 1)[1]) / 1e9


def summary(label: str, values: list[float]) -> str:
    ms = [v * 1000 for v in values]
    return (
        f"  {label}: p50 {percentile(ms, 50):.0f} ms, p90 {percentile(ms, 90):.0f} ms, "
        f"p99 {percentile(ms, 99):.0f} ms, max {max(ms):.0f} ms ({len(ms):,} items)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rate", type=float, default=500.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--no-poll", action="store_true", help="only the stamped measure")
    add_prepare_process(parser)
    args = parser.parse_args()
    count = int(args.rate * args.seconds)
    print(machine())
    print(
        f"offered load: {args.rate:.0f} items/s for {args.seconds:.0f} s ({count:,} valid "
        f"mixed_items); worker batch_size {DEFAULT_BATCH_SIZE}, batch_seconds "
        f"{DEFAULT_BATCH_SECONDS}; poll every {POLL_SECONDS} s",
        flush=True,
    )
    items = [json.loads(line) for line in mixed_items(n=count, bad=0, seed=11).lines]
    warm = mixed_items(n=200, bad=0, seed=12).lines

    def make(n: int, now: float) -> bytes:
        item = items[n]
        item["idempotency_key"] = f"lat-{n:07d}-{int(now * 1e9)}"
        return dumps(item)

    with run_broker() as broker:
        deployment = deploy(
            broker, worker_extra=prepare_process_line(args.prepare_process, args.prepare_children)
        )
        deployment.worker.start()
        publish(deployment, warm)
        wait_drained(deployment)
        poller = Poller(deployment)
        if not args.no_poll:
            poller.start()
        took = publish_paced(deployment, make, args.rate, count)
        print(f"  sent {count:,} items in {took:.1f}s ({count / took:.0f}/s)", flush=True)
        wait_drained(deployment)
        time.sleep(3 * POLL_SECONDS)
        poller.stop.set()
        if poller.is_alive():
            poller.join()
        rows = sql(
            deployment,
            "SELECT splitByChar('\\x1f', dedup_key)[3], toString(ingested_at) "
            "FROM idempotency_keys WHERE startsWith(splitByChar('\\x1f', dedup_key)[3], 'lat-')",
        )
        stats = deployment.worker.stats()
    stamped = [datetime.fromisoformat(at + "+00:00").timestamp() - sent_at(key) for key, at in rows]
    polled = [
        seen - sent_at(key) for key, seen in poller.first_seen.items() if key.startswith("lat-")
    ]
    print(
        f"  {len(rows):,} of {count:,} items in ClickHouse; the worker wrote "
        f"{stats['batches']} batches in all ({stats['messages'] / stats['batches']:.0f} "
        f"messages per batch); {poller.queries} polls, "
        f"{poller.query_seconds / max(poller.queries, 1) * 1000:.0f} ms each"
    )
    print("send -> visible in ClickHouse:")
    print(summary("stamped (ingested_at, a lower bound)", stamped))
    if polled:
        print(summary("polled (first poll that sees it, an upper bound)", polled))


if __name__ == "__main__":
    main()
