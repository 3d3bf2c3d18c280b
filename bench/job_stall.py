"""How long ingestion waits while a nightly job runs in the worker.

    .venv/bin/python bench/job_stall.py [--people 600] [--sessions 3] [--rate 200]

``bench/taste_calibrated.py``'s population (``--people`` of ``--seed``, ``--sessions``
each) published to a worker and derived (a state a person, no priors yet). Then the
priors job runs through the worker (``POST /v1/jobs/priors/``: the priors, the field
priors and every person derived again, since the priors changed from none) while
probes of ``mixed_items`` are published at ``--rate`` items a second from a second
before the job to a second after it. Each probe's send → visible (``bench/latency.py``'s
poller: the first ``/v1/sql`` poll, on the analysts' own connections, that sees its
``idempotency_keys`` row) is split by whether it was sent while the job ran. Prints the
job's report and the latencies; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import deploy, dumps, machine, publish, run_broker, wait_drained
from bench.latency import Poller, sent_at, summary
from bench.taste_calibrated import population_lines
from turnstream.adapters.kafka.producer import Producer
from turnstream.jobs.runner import run_job
from turnstream_dev.sample import mixed_items

TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=600)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--seed", type=int, default=404)
    parser.add_argument("--rate", type=float, default=200.0)
    args = parser.parse_args()
    print(machine())
    history = [line.encode() for line in population_lines(
        args.seed, args.people, args.sessions, 6.0, pid="h_{:05d}")]  # fmt: skip
    probes = [json.loads(line) for line in mixed_items(n=200_000, bad=0, seed=11).lines]
    with run_broker() as broker:
        deployment = deploy(broker, extra=TRIGGERS)
        deployment.worker.start()
        publish(deployment, history)
        wait_drained(deployment)
        wait_drained(deployment, signals=True)
        print(f"history: {args.people} people x {args.sessions} sessions "
              f"({len(history):,} interactions) ingested and derived", flush=True)  # fmt: skip
        poller = Poller(deployment)
        poller.start()
        job: dict[str, object] = {}

        def run() -> None:
            job["start"] = time.time()
            job["report"] = run_job(deployment.settings, "priors", {})
            job["end"] = time.time()

        stop = threading.Event()
        sent: list[str] = []

        def send() -> None:
            async def go() -> None:
                async with Producer(deployment.settings) as producer:
                    start = time.time()
                    for n, item in enumerate(probes):
                        if stop.is_set():
                            break
                        delay = start + n / args.rate - time.time()
                        if delay > 0:
                            await asyncio.sleep(delay)
                        item["idempotency_key"] = f"stall-{n:07d}-{time.time_ns()}"
                        await producer.publish(dumps(item))
                        sent.append(item["idempotency_key"])
                    await producer.flush()

            asyncio.run(go())

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(1.0)
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
        time.sleep(1.0)
        stop.set()
        sender.join()
        wait_drained(deployment)
        time.sleep(0.5)
        poller.stop.set()
        poller.join()
    report = job["report"]
    assert isinstance(report, dict)
    again = report.get("rederived", {})
    start, end = float(job["start"]), float(job["end"])  # type: ignore[arg-type]
    print(f"priors job through the worker: {end - start:.1f} s; {again.get('people')} people "
          f"derived again, {again.get('changed_people')} changed, "
          f"{again.get('cpu_ms_per_person')} CPU ms a person")  # fmt: skip
    during = [poller.first_seen[k] - sent_at(k) for k in sent
              if k in poller.first_seen and start <= sent_at(k) <= end]  # fmt: skip
    outside = [poller.first_seen[k] - sent_at(k) for k in sent
               if k in poller.first_seen and not start <= sent_at(k) <= end]  # fmt: skip
    missing = sum(1 for k in sent if k not in poller.first_seen)
    print(f"probes: {len(sent):,} sent at {args.rate:.0f}/s, {missing} never seen by a poll")
    print("send -> visible (polled, an upper bound):")
    if during:
        print(summary("sent while the job ran", during))
    if outside:
        print(summary("sent before or after it", outside))


if __name__ == "__main__":
    main()
