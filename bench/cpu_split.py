"""Where the machine's CPU goes while the worker drains a backlog: per process, per thread.

    .venv/bin/python bench/cpu_split.py [ITEMS] [--batch-size N] [--prepare-process on|off]
        [--prepare-children N]

Publishes ITEMS (default 200,000) ``mixed_items`` lines, starts a worker (its defaults
unless told otherwise), and reads ``/proc`` at the worker's first counted batch and at its
last: the CPU time of the worker's threads by name (``python``: its Python threads;
``Unknown``: the store thread while chDB runs a call on it, chDB names it so;
``MergeMutate``, ``ThreadPool``...: chDB's own), of each prepare child, and of the broker's
JVM threads, which share the machine's two cores. Prints, per process, cores used and µs
of CPU per item over that span, and the rate; beside ``bench/throughput.py``, whose
RATIO this explains. Starts its own broker on free ports in a temporary directory and
stops it at the end. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    DEFAULT_BATCH_SIZE,
    add_prepare_process,
    deploy,
    load,
    machine,
    prepare_process_line,
    publish,
    run_broker,
    wait_drained,
    worker_pid,
)
from turnstream_dev.sample import mixed_items

_TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> Counter[str]:
    """CPU seconds of each of ``pid``'s threads, summed by thread name (digits dropped)."""
    out: Counter[str] = Counter()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread may just have ended
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            out[re.sub(r"\d+$", "#", name)] += (int(fields[11]) + int(fields[12])) / _TICK
    return out


def prepare_children(pid: int) -> list[int]:
    """The worker's prepare processes (spawned by multiprocessing), if they run."""
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        for child in task.read_text().split():
            with contextlib.suppress(OSError):
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    found.append(int(child))
    return sorted(found)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=200_000)
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_SIZE)
    add_prepare_process(parser)
    args = parser.parse_args()
    print(machine())
    batch = mixed_items(n=args.items, bad=args.items // 100, seed=7)
    with run_broker() as broker:
        deployment = deploy(
            broker,
            batch_size=args.batch_size,
            worker_extra=prepare_process_line(args.prepare_process, args.prepare_children),
        )
        publish(deployment, batch.lines)
        deployment.worker.start()
        pid = worker_pid(deployment)
        procs = {"worker": pid}
        for n, child in enumerate(prepare_children(pid), 1):
            procs[f"prepare child {n}"] = child
        if broker.pid is not None:
            procs["broker"] = broker.pid
        first: tuple[float, int, dict[str, Counter[str]]] | None = None
        while True:
            counted = deployment.worker.stats()["messages"]
            now = time.monotonic()
            if first is None and counted:
                first = (now, counted, {k: thread_cpu(p) for k, p in procs.items()})
            if counted >= args.items:
                last = (now, {k: thread_cpu(p) for k, p in procs.items()})
                break
            time.sleep(0.1)
        wait_drained(deployment)
        stats = deployment.worker.stats()
    assert first is not None
    seconds, items = last[0] - first[0], args.items - first[1]
    print(
        f"batch_size {args.batch_size}: {items:,} items after the first batch in {seconds:.2f} s, "
        f"{items / seconds:,.0f} items/s; {stats['batches']} batches, the largest "
        f"{stats['largest_batch']:,}; {load()}"
    )
    total = 0.0
    for name in procs:
        spent = last[1][name] - first[2][name]
        cpu = sum(spent.values())
        total += cpu
        top = ", ".join(f"{t} {v / items * 1e6:.1f}" for t, v in spent.most_common(6))
        print(
            f"  {name:13s} {cpu / seconds:4.2f} cores, {cpu / items * 1e6:6.1f} µs of CPU "
            f"per item  ({top})"
        )
    print(
        f"  {'all':13s} {total / seconds:4.2f} cores, {total / items * 1e6:6.1f} µs of CPU per item"
    )


if __name__ == "__main__":
    main()
