"""Taste recovery through the live path: broker, worker, first fit (issue #36).

    .venv/bin/python bench/taste_live.py [--strength 20] [--seed 202] [--sessions 3]
        [--people 80] [--first-fit | --no-first-fit] [--mode all|stepwise]
        [--quiet 15] [--timeout 900]

``bench/taste_calibrated.py`` measures its generator through ``turnstream replay``,
which fits a new space once, at the end of the file. Outside judges would rather publish
such a simulation to Kafka with a worker running, wait, and read the active affinities:
there the worker fits a new space (the priors job: value priors, field priors, its people
derived again) once 10 of its people are derived and again each time its derivations
double (``jobs.first_fit``, docs/operators.md). This runs the same generator (imported,
the same lines for a seed) that way: a throw-away broker; per run a fresh deployment
(``turnstream_dev.deployment``: the acme space with ``examples/types.toml``, derivation
triggers of 1 s quiet and 3 s oldest pending), its worker started, then

- ``all``: the first ``--sessions`` sessions of everyone published at once, in time
  order;
- ``stepwise``: session 1 of everyone published, the worker left to settle, then
  session 2, and so on (the first fit then comes after session 1, the refits as the
  derivations double or the space goes quiet);

"settled": the ingest and derivation groups drained, every priors job the worker
started done (its log), and the active affinities unchanged for ``--quiet`` seconds
(by default 5 more than the worker waits before it fits a space gone quiet again).
Then the active affinities are read through the worker and scored as
``taste_calibrated`` scores them (``bench/_scoring.py``): precision of the `prefer`
ones, recall of the true colours and brands, how many rest on a noise, state or
attribute field, and how many `avoid` name a true taste. Each run also prints the fits
the worker started and how many people each derived again. By default both first fit
on and off, both modes, one run after the other. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import Broker, run_broker
from bench._scoring import score_affinities
from bench.taste_calibrated import (
    NOT_TASTES,
    Person,
    catalogue,
    people,
    session_lines,
    truth_of,
)
from turnstream.adapters.worker_client import read_query
from turnstream.core.derivation.first_fit import QUIET_SECONDS
from turnstream_dev.deployment import Deployment, new_deployment

ROOT = Path(__file__).resolve().parents[1]
#: Short derivation triggers, so that a session fires seconds after its last line.
FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"
AFFINITIES = (
    "SELECT profile_id, attr, value, polarity FROM inferences FINAL"
    " WHERE status = 'active' AND kind = 'affinity' AND `for` = 'self'"
)
FIT_DONE = re.compile(r"job priors done: .*?'rederived': \{'people': (\d+)")


def _lines(
    persons: list[Person], items: list[dict[str, Any]], numbers: range, args: argparse.Namespace
) -> list[bytes]:
    """The lines of sessions ``numbers`` of everyone, in time order."""
    pairs = sorted(
        (pair for p in persons for n in numbers
         for pair in session_lines(p, n, items, args.seed, args.strength)),
        key=lambda pair: pair[0],
    )  # fmt: skip
    return [raw.encode() for _, raw in pairs]


def _fits(deployment: Deployment) -> tuple[int, list[int], int]:
    """From the worker's log: priors jobs started, the people each finished one derived
    again, and first fits that failed."""
    log = deployment.worker.log_path.read_text(errors="replace")
    started = log.count("job priors started")
    done = [int(n) for n in FIT_DONE.findall(log)]
    failed = len(re.findall(r"first fit of .* failed", log))
    return started, done, failed


def _affinities(deployment: Deployment) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in read_query(deployment.settings, AFFINITIES).rows)


def settle(deployment: Deployment, quiet: float, timeout: float) -> list[tuple[Any, ...]]:
    """Wait until the worker is done (see the module); its active affinities."""
    deadline = time.monotonic() + timeout
    deployment.drain(timeout=timeout)
    deployment.drain_signals(timeout=max(1.0, deadline - time.monotonic()))
    last: list[tuple[Any, ...]] | None = None
    since = time.monotonic()
    while time.monotonic() < deadline:
        started, done, failed = _fits(deployment)
        rows = _affinities(deployment)
        if rows != last or started > len(done) + failed:
            last, since = rows, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return rows
        time.sleep(1.0)
    print(f"  (not settled within {timeout:.0f}s; read as it is)", flush=True)
    return _affinities(deployment)


def run(
    broker: Broker,
    persons: list[Person],
    items: list[dict[str, Any]],
    first_fit: bool,
    mode: str,
    args: argparse.Namespace,
) -> None:
    """One fresh deployment: publish, settle, score, print."""
    deployment = new_deployment(broker.bootstrap, broker.home, extra=FAST_TRIGGERS,
                                first_fit=first_fit)  # fmt: skip
    broker.made.append(deployment)
    deployment.worker.env["PYTHONPATH"] = str(ROOT)  # this tree's worker, wherever run from
    deployment.worker.start()
    deployment.worker.wait_healthy()
    truth = truth_of(persons)
    started = time.perf_counter()
    steps = (
        [range(1, args.sessions + 1)]
        if mode == "all"
        else [range(n, n + 1) for n in range(1, args.sessions + 1)]
    )
    lines = 0
    for numbers in steps:
        batch = _lines(persons, items, numbers, args)
        lines += len(batch)
        deployment.publish(batch)
        rows = settle(deployment, args.quiet, args.timeout)
        r = score_affinities(rows, truth, NOT_TASTES)
        fits, done, failed = _fits(deployment)
        print(
            f"{args.strength:>8g}  {'on' if first_fit else 'off':>3}  {mode:>8}  "
            f"{numbers.stop - 1:>8}  {lines:>5}  {r['affinities']:>10}  "
            f"{r['precision']:>9.3f}  {r['recall']:>6.3f}  {r['off_field']:>9}  "
            f"{r['avoids']:>9}  {fits:>4} {done!s:<22} {failed:>6}  "
            f"{time.perf_counter() - started:>6.0f}  {os.getloadavg()[0]:>4.1f}",
            flush=True,
        )
    dead = deployment.dead_letters()
    if dead:
        print(f"  dead letters: {dead}")
    deployment.worker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strength", type=float, default=20.0, help="odds ratio of a match")
    parser.add_argument("--seed", type=int, default=202)
    parser.add_argument("--people", type=int, default=80)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument(
        "--first-fit",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="only with (or without) the first fit; default: both",
    )
    parser.add_argument("--mode", choices=("all", "stepwise"), help="default: both")
    parser.add_argument(
        "--quiet",
        type=float,
        default=QUIET_SECONDS + 5,
        help="seconds unchanged: settled (more than the worker's quiet refit waits)",
    )
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per settle")
    args = parser.parse_args()
    rand = random.Random(args.seed)
    items = catalogue(rand)
    persons = people(rand, args.people)
    fits = [True, False] if args.first_fit is None else [args.first_fit]
    modes = ["all", "stepwise"] if args.mode is None else [args.mode]
    print(
        f"live: strength {args.strength:g}, seed {args.seed}, {args.people} people, "
        f"{args.sessions} sessions, load {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores"
    )
    print(
        "strength  fit      mode  sessions  lines  affinities  precision  recall  off-field"
        "  bad-avoid  fits people-rederived      failed  took s  load"
    )
    with run_broker() as broker:
        for first_fit in fits:
            for mode in modes:
                run(broker, persons, items, first_fit, mode, args)


if __name__ == "__main__":
    main()
