"""Where the worker's time goes while it drains a backlog: py-spy on the live process.

    .venv/bin/python bench/profile_worker.py [ITEMS] [--folded F] [--prepare-process on]

Publishes ITEMS (default 60,000) ``mixed_items`` lines, starts a worker with its default
batch settings, and samples it with ``py-spy record`` (100 Hz, every thread) while it
drains them. Prints the share of the samples, idle ones left out, by thread and by
phase of the hot path (each sample counts once, under the first phase of the list
below found in its stack); ``--folded`` keeps py-spy's folded stacks, which
flamegraph.pl or speedscope.app draw.
Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import deploy, load, machine, publish, run_broker, wait_drained, worker_pid
from turnstream_dev.sample import mixed_items

PY_SPY = Path(sys.executable).parent / "py-spy"

#: (phase, substrings of which one must be in the stack), first match wins.
PHASES: list[tuple[str, tuple[str, ...]]] = [
    ("raw insert: chDB executing (C++)", ("RawSink.write",)),  # refined below
    ("settle: key lookup (chDB query)", ("KeyRegistry.lookup",)),
    ("settle: other", ("IngestBatch.settle",)),
    ("prepare: pydantic validation", ("parse_item",)),
    ("prepare: profile id (HMAC)", ("resolve_profile",)),
    ("prepare: rows (add_row_values, blocks)", ("add_row_values", "Block.of_values", "rows_for")),
    ("prepare: accepted_for / dead_letter_for", ("accepted_for", "dead_letter_for")),
    ("prepare: other", ("IngestDriver.prepare",)),
    ("fan-out: aiokafka producer", ("AIOKafkaProducer", "Sender.", "message_accumulator")),
    ("consume: aiokafka fetcher", ("Fetcher.", "AIOKafkaConsumer", "fetcher.py")),
    ("derivation: parse accepted messages", ("DerivationDriver.prepare",)),
    ("derivation: offer (hold events)", ("DerivationDriver._offer",)),
    ("derivation: write derivations", ("write_derivations",)),
    ("derivation: tick (fire_due: fold, derive)", ("DerivationDriver._fire",)),
    ("commit / coordinator", ("commit", "coordinator.py")),
    ("web pages (/v1/status)", ("faust/web", "aiohttp")),
]
IDLE = (
    "EpollSelector.select",
    "_worker (concurrent/futures/thread.py:81)",
    "Condition.wait",
    "Event.wait",
    "_thread.lock",
    "select (selectors",
)


def phase_of(frames: list[str]) -> str:
    stack = ";".join(frames)
    for label, needles in PHASES:
        if any(n in stack for n in needles):
            if label.startswith("raw insert"):
                chdb = "chdb/state/sqlitelike.py" in frames[-1] or "_chdb" in frames[-1]
                return label if chdb else "raw insert: rows to columns (clickhouse-connect, ours)"
            return label
    return "other (event loop, Faust, threads)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=60_000)
    parser.add_argument("--folded", type=Path, help="keep the folded stacks (flame graphs)")
    parser.add_argument("--prepare-process", choices=("on", "off"), help="worker.prepare_process")
    parser.add_argument(
        "--subprocesses", action="store_true", help="sample the prepare child too (py-spy -s)"
    )
    parser.add_argument(
        "--gil", action="store_true", help="only the thread holding the GIL (py-spy --gil)"
    )
    args = parser.parse_args()
    print(machine())
    batch = mixed_items(n=args.items, bad=args.items // 100, seed=7)
    with run_broker() as broker:
        worker_extra = ""
        if args.prepare_process is not None:
            on = "true" if args.prepare_process == "on" else "false"
            worker_extra = f"prepare_process = {on}"
        deployment = deploy(broker, worker_extra=worker_extra)
        publish(deployment, batch.lines)
        raw = broker.home / "profile.txt"
        deployment.worker.start()
        pid = worker_pid(deployment)
        spy = subprocess.Popen(
            [str(PY_SPY), "record", "-p", str(pid), "-r", "100", "-t", "-f", "raw", "-o", str(raw)]
            + (["-s"] if args.subprocesses else [])
            + (["--gil"] if args.gil else []),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started = time.monotonic()
        wait_drained(deployment)
        took = time.monotonic() - started
        spy.send_signal(signal.SIGINT)  # py-spy writes its file on Ctrl-C
        spy.wait(timeout=60)
        threads: Counter[str] = Counter()
        phases: Counter[str] = Counter()
        idle = 0
        for line in raw.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            if any(i in frames[-1] for i in IDLE):
                idle += int(count)
                continue
            thread = frames[0].split(": ", 1)[-1]  # "thread (0x..): store_0"
            thread = {"MainThread": "MainThread (event loop: Kafka, fan-out, Faust)"}.get(
                thread, "store thread (every store call)" if thread.startswith("store") else thread
            )
            threads[thread] += int(count)
            phases[phase_of(frames)] += int(count)
        if args.folded:
            shutil.copy(raw, args.folded)
    busy = sum(phases.values())
    print(
        f"{args.items:,} items drained in {took:.1f}s; {busy:,} busy samples "
        f"({busy / 100 / took:.2f} threads busy on average), {idle:,} idle; {load()}"
    )
    print("busy samples by thread:")
    for name, n in threads.most_common():
        print(f"  {n / busy:6.1%}  {name}")
    print("busy samples by phase:")
    for name, n in phases.most_common():
        print(f"  {n / busy:6.1%}  {name}")


if __name__ == "__main__":
    main()
