"""Analysts' SQL off the ingest path: ``POST /v1/constraints`` latency with and without a
10 s analyst query running.

    .venv/bin/python bench/sql_isolation.py [--rounds 4] [--seconds 10] [--rate 20] [--analysts 1]

A worker (the default ``[sql]`` limits but ``timeout = SECONDS``) on its own broker gets
2,000 items of a sample day, drained and derived. Then, in rounds whose order rotates, a
client asks ``POST /v1/constraints`` for one of the sample's people RATE times a second
for SECONDS - 1 s, one request at a time, under three conditions:

* **quiet**: nothing else;
* **sleep**: ANALYSTS ``/v1/sql`` queries that wait (``sleepEachRow``) until the time
  limit stops them: what blocking alone costs (the old design ran analysts' queries on
  the store thread: a 60 s query held ``SELECT 1`` 52 s);
* **cpu**: ANALYSTS CPU-bound queries (``cityHash64`` over ``numbers(1e12)``) until the
  time limit: blocking plus their share of the CPU (one thread each, nice +19).

Each analyst query ends with the time limit's 400 after SECONDS s. Prints p50/p99/max per
condition, the p99 differences against quiet (the goal: under 50 ms), each round's own,
and how long the analyst queries ran. Starts its own broker and stops it; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    deploy,
    machine,
    percentile,
    publish,
    run_broker,
    wait_drained,
    worker_pid,
)
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import sample_day

#: What each condition's analysts send; both run until the time limit stops them.
ANALYST_SQL = {
    "quiet": None,
    "sleep": "SELECT count() FROM numbers(1e12) WHERE sleepEachRow(0.00001) = 0",
    "cpu": "SELECT count() FROM numbers(1e12) WHERE NOT ignore(cityHash64(number))",
}


def _post(deployment: Deployment, path: str, body: dict[str, Any], timeout: float) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **deployment.headers()},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        exc.read()
        return exc.code


def _window(deployment: Deployment, people: list[str], seconds: float, rate: float) -> list[float]:
    """Latencies (ms) of constraints requests, RATE a second for ``seconds``."""
    out: list[float] = []
    start = time.monotonic()
    n = 0
    while time.monotonic() - start < seconds:
        due = start + n / rate
        time.sleep(max(0.0, due - time.monotonic()))
        body = {"space_id": "acme", "profile_id": people[n % len(people)]}
        sent = time.perf_counter()
        status = _post(deployment, "/v1/constraints", body, 30)
        out.append((time.perf_counter() - sent) * 1000)
        assert status == 200, status
        n += 1
    return out


def _cpu_by_niceness(pid: int) -> dict[str, float]:
    """CPU seconds of the worker's threads so far: at nice 0 and at a higher nice (the
    analysts' query threads run at +19; the prepare children are other processes)."""
    out = {"nice 0": 0.0, "niced": 0.0}
    tick = os.sysconf("SC_CLK_TCK")
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread just ended
        seconds = (int(fields[11]) + int(fields[12])) / tick
        out["nice 0" if int(fields[16]) <= 0 else "niced"] += seconds
    return out


def _people(lines: list[bytes]) -> list[str]:
    """Up to 50 of the sample's people in acme (the broken lines skipped)."""
    found: set[str] = set()
    for raw in lines:
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if (
            isinstance(item, dict)
            and item.get("space_id") == "acme"
            and isinstance(item.get("profile_id"), str)
        ):
            found.add(item["profile_id"])
    return sorted(found)[:50] or ["p_none"]


def _analyst(deployment: Deployment, query: str, ran: list[float]) -> None:
    started = time.monotonic()
    status = _post(deployment, "/v1/sql", {"sql": query}, 120)
    ran.append(time.monotonic() - started)
    assert status == 400, f"the query was meant to hit the time limit, got {status}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--analysts", type=int, default=1)
    parser.add_argument(
        "--niceness", type=int, default=None, help="[sql] niceness (default: the config's)"
    )
    args = parser.parse_args()
    print(machine())
    with run_broker() as broker:
        deployment = deploy(
            broker,
            extra=f"[sql]\ntimeout = {args.seconds}\nconcurrency = {max(2, args.analysts)}\n"
            + ("" if args.niceness is None else f"niceness = {args.niceness}\n"),
        )
        deployment.worker.start()
        deployment.worker.wait_healthy(timeout=120)
        lines = sample_day(date(2026, 11, 30), seed=7)[:2000]
        publish(deployment, lines)
        wait_drained(deployment)
        wait_drained(deployment, signals=True)
        people = _people(lines)
        _window(deployment, people, 3, args.rate)  # warm-up

        got: dict[str, list[float]] = {c: [] for c in ANALYST_SQL}
        rounds: list[dict[str, float]] = []
        ran: list[float] = []
        conditions = list(ANALYST_SQL)
        for number in range(args.rounds):
            shift = number % len(conditions)
            order = conditions[shift:] + conditions[:shift]
            p99: dict[str, float] = {}
            cpu: dict[str, dict[str, float]] = {}
            for condition in order:
                query = ANALYST_SQL[condition]
                threads = [
                    threading.Thread(target=_analyst, args=(deployment, query, ran))
                    for _ in range(args.analysts if query else 0)
                ]
                for t in threads:
                    t.start()
                if threads:
                    time.sleep(0.3)  # the queries are running
                cpu_before = _cpu_by_niceness(worker_pid(deployment))
                window = _window(deployment, people, args.seconds - 1, args.rate)
                cpu_after = _cpu_by_niceness(worker_pid(deployment))
                for t in threads:
                    t.join()
                cpu[condition] = {k: cpu_after[k] - cpu_before[k] for k in cpu_after}
                got[condition] += window
                p99[condition] = percentile(window, 99)
                time.sleep(1)
            rounds.append(p99)
            print(
                f"round {number + 1} ({'/'.join(order)}): p99 "
                + ", ".join(f"{c} {p99[c]:.1f} ms" for c in conditions)
                + "; worker CPU s (nice 0/niced) "
                + ", ".join(f"{c} {cpu[c]['nice 0']:.1f}/{cpu[c]['niced']:.1f}" for c in conditions)
            )

    def line(name: str, values: list[float]) -> str:
        return (
            f"{name}: {len(values)} requests, p50 {percentile(values, 50):.1f} ms, "
            f"p99 {percentile(values, 99):.1f} ms, max {max(values):.1f} ms"
        )

    for condition in conditions:
        print(line(condition, got[condition]))
    quiet = percentile(got["quiet"], 99)
    for condition in conditions[1:]:
        per_round = sorted(r[condition] - r["quiet"] for r in rounds)
        print(
            f"p99 {condition} - quiet: {percentile(got[condition], 99) - quiet:+.1f} ms "
            f"over all requests (goal: < 50 ms); per round "
            + ", ".join(f"{d:+.1f}" for d in per_round)
            + f" (median {per_round[len(per_round) // 2]:+.1f})"
        )
    print(
        f"{args.analysts} analyst quer{'y' if args.analysts == 1 else 'ies'} at a time, "
        f"each ran {min(ran):.1f}-{max(ran):.1f} s"
    )


if __name__ == "__main__":
    main()
