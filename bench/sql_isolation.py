"""Analysts' SQL off the ingest path: ``POST /v1/constraints`` latency with and without a
10 s analyst query running.

    .venv/bin/python bench/sql_isolation.py [--pairs 3] [--seconds 10] [--rate 20] [--analysts 1]

A worker (the default ``[sql]`` limits but ``timeout = SECONDS``) on its own broker gets a
sample day (2,000 items), drained and derived. Then, in alternating pairs (quiet, busy;
busy, quiet; ...), a client asks ``POST /v1/constraints`` for one of the sample's people
RATE times a second for SECONDS - 1 s, one request at a time; in a *busy* window
ANALYSTS threads each send ``/v1/sql`` a CPU-bound query that runs until the time limit
stops it (``SELECT count() FROM numbers(1e12) WHERE NOT ignore(cityHash64(number))``:
SECONDS s of a core, then a 400 "timeout"). Prints p50/p99/max per condition, the p99
difference (the goal: under 50 ms) and each pair's own difference, and how long each
analyst query ran. Starts its own broker and stops it; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import deploy, machine, percentile, publish, run_broker, wait_drained
from turnstream.dev.deployment import Deployment
from turnstream.dev.sample import sample_day

ANALYST_SQL = "SELECT count() FROM numbers(1e12) WHERE NOT ignore(cityHash64(number))"


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


def _analyst(deployment: Deployment, ran: list[float]) -> None:
    started = time.monotonic()
    status = _post(deployment, "/v1/sql", {"sql": ANALYST_SQL}, 120)
    ran.append(time.monotonic() - started)
    assert status == 400, f"the query was meant to hit the time limit, got {status}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--analysts", type=int, default=1)
    args = parser.parse_args()
    print(machine())
    with run_broker() as broker:
        deployment = deploy(
            broker,
            extra=f"[sql]\ntimeout = {args.seconds}\nconcurrency = {max(2, args.analysts)}\n",
        )
        deployment.worker.start()
        deployment.worker.wait_healthy(timeout=120)
        lines = sample_day(date(2026, 11, 30), seed=7)[:2000]
        publish(deployment, lines)
        wait_drained(deployment)
        wait_drained(deployment, signals=True)
        people = _people(lines)
        _window(deployment, people, 3, args.rate)  # warm-up

        quiet: list[float] = []
        busy: list[float] = []
        pairs: list[tuple[float, float]] = []
        ran: list[float] = []
        for pair in range(args.pairs):
            order = ("quiet", "busy") if pair % 2 == 0 else ("busy", "quiet")
            got: dict[str, list[float]] = {}
            for condition in order:
                threads = []
                if condition == "busy":
                    threads = [
                        threading.Thread(target=_analyst, args=(deployment, ran))
                        for _ in range(args.analysts)
                    ]
                    for t in threads:
                        t.start()
                    time.sleep(0.3)  # the query is running
                got[condition] = _window(deployment, people, args.seconds - 1, args.rate)
                for t in threads:
                    t.join()
                time.sleep(1)
            quiet += got["quiet"]
            busy += got["busy"]
            pairs.append((percentile(got["quiet"], 99), percentile(got["busy"], 99)))
            print(
                f"pair {pair + 1} ({'/'.join(order)}): p99 quiet {pairs[-1][0]:.1f} ms, "
                f"busy {pairs[-1][1]:.1f} ms ({pairs[-1][1] - pairs[-1][0]:+.1f} ms)"
            )

    def line(name: str, values: list[float]) -> str:
        return (
            f"{name}: {len(values)} requests, p50 {percentile(values, 50):.1f} ms, "
            f"p99 {percentile(values, 99):.1f} ms, max {max(values):.1f} ms"
        )

    print(line("quiet", quiet))
    print(line(f"busy ({args.analysts} analyst query of {args.seconds:.0f} s)", busy))
    print(
        f"p99 difference: {percentile(busy, 99) - percentile(quiet, 99):+.1f} ms "
        f"(goal: < 50 ms); per pair: "
        + ", ".join(f"{b - q:+.1f}" for q, b in pairs)
        + f"; analyst queries ran {min(ran):.1f}-{max(ran):.1f} s"
    )


if __name__ == "__main__":
    main()
