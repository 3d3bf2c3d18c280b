"""Before/after of the one performance change: the fan-out producer's batch size.

    .venv/bin/python bench/fanout_batch.py [ITEMS] [--reps 3]

The ingest driver's fan-out producer now batches up to ``FANOUT_BATCH_BYTES`` (512 KiB) per
partition; aiokafka's default is 16 KiB. This runs the same worker both ways, alternating
(the machine may be shared: alternating spreads its noise over both), on ITEMS (default
60,000) ``mixed_items`` lines published to a fresh deployment each time, and prints the
steady drain rate of each run (first observed progress to the group fully committed) and
the medians. The "before" worker is ``turnstream worker`` with the constant set back to
16 KiB before it starts; nothing else differs.
Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import Broker, deploy, load, machine, publish, run_broker, wait_drained
from turnstream.entrypoints.kafka.ingest_driver import FANOUT_BATCH_BYTES
from turnstream_dev.sample import mixed_items

WORKER = (
    "import sys\n"
    "from turnstream.entrypoints.kafka import ingest_driver\n"
    "ingest_driver.IngestDriver.producer_options = {\n"
    "    **ingest_driver.IngestDriver.producer_options, 'max_batch_size': int(sys.argv[1])}\n"
    "from turnstream.entrypoints.cli.main import main\n"
    "sys.argv = ['turnstream', 'worker', '--config', sys.argv[2]]\n"
    "main()\n"
)


def one_run(broker: Broker, lines: list[bytes], fanout_bytes: int) -> float:
    deployment = deploy(broker)
    publish(deployment, lines)
    log = (broker.home / f"fanout-{fanout_bytes}.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(fanout_bytes), str(deployment.config)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        first_at, first_count = None, 0
        while True:
            try:
                messages = deployment.worker.stats()["messages"]
            except OSError:  # not answering yet
                time.sleep(0.2)
                continue
            if first_at is None and messages:
                first_at, first_count = time.monotonic(), messages
            if messages >= len(lines):
                break
            time.sleep(0.1)
        wait_drained(deployment)
        assert first_at is not None
        return (len(lines) - first_count) / (time.monotonic() - first_at)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=60_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    lines = mixed_items(n=args.items, bad=args.items // 100, seed=7).lines
    sizes = {
        "before (16 KiB)": 16 * 1024,
        f"after ({FANOUT_BATCH_BYTES // 1024} KiB)": FANOUT_BATCH_BYTES,
    }
    rates: dict[str, list[float]] = {label: [] for label in sizes}
    with run_broker() as broker:
        for rep in range(args.reps):
            for label, size in sizes.items():
                rate = one_run(broker, lines, size)
                rates[label].append(rate)
                print(f"  run {rep + 1} {label}: {rate:,.0f} items/s; {load()}", flush=True)
    for label, values in rates.items():
        print(f"{label}: median {statistics.median(values):,.0f} items/s over {len(values)} runs")
    before, after = (statistics.median(v) for v in rates.values())
    print(f"after / before: {after / before:.2f}")


if __name__ == "__main__":
    main()
