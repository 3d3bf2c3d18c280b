"""The CPU of deriving a person again after the nightly priors (turnstream/jobs/rederive.py).

    .venv/bin/python bench/rederive.py [--people 200] [--sessions 8] [--runs 3] [--seed 404]

bench/taste_calibrated.py's population (``--seed``, ``--people``, ``--sessions`` each)
replayed into a throw-away embedded store with no priors, then the priors job (value and
field priors fitted, everyone derived again: run 0). Then ``--runs`` pairs: the field
priors taken away and everyone derived again (the defaults), put back and everyone
derived again (the fit); every run changes affinities, so each writes what a night with
a new fit writes. Each run is timed in this process, which runs the engine and chDB:
wall seconds, CPU of the calling thread (the engine, and chDB's work on that thread:
the figure the worker's store thread pays) and of the process (chDB's own threads
too), per person derived. Prints figures and the medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.taste_calibrated import population_lines
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import load_settings
from turnstream.core.tables import FIELD_PRIOR_COLUMNS
from turnstream.entrypoints.bootstrap import build_replay
from turnstream.jobs.rederive import rederive_here, rederive_spaces
from turnstream.jobs.registry import JOBS

ROOT = Path(__file__).resolve().parents[1]


def _history(n: int, sessions: int, seed: int) -> list[str]:
    return population_lines(seed, n, sessions, 6.0, pid="h_{:05d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=404)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-rederive-"))
    config = home / "turnstream.toml"
    config.write_text(
        f'[store]\ndsn = "chdb:{home / "store"}"\n[identity]\nsecret = "bench-rederive"\n'
        '[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\n'
        f'types = "{ROOT / "examples" / "types.toml"}"\n'
    )
    settings = load_settings(config, environ={})
    store = Store(f"chdb://{home / 'store'}", "turnstream")
    apply_migrations(store)
    events = home / "history.jsonl"
    events.write_text("\n".join(_history(args.people, args.sessions, args.seed)) + "\n")
    started = time.monotonic()
    build_replay(settings, store).run(events)
    print(f"history: {args.people} people x {args.sessions} sessions replayed in "
          f"{time.monotonic() - started:.1f} s")  # fmt: skip
    today = datetime.now(UTC).date()
    report = JOBS["priors"](store, settings, {"as_of": today.isoformat()})
    first = report["rederived"]
    print(f"run 0 (the job): {first['people']} people, {first['changed_people']} changed, "
          f"{first['inferences']} inferences, {first['seconds']} s, "
          f"{first['cpu_ms_per_person']} CPU ms/person (thread)")  # fmt: skip
    names = [c.name for c in FIELD_PRIOR_COLUMNS]
    fitted = store.query(f"SELECT {', '.join(names)} FROM field_priors").rows
    if not fitted:  # the defaults and the fit would be the same: no one derived again
        raise SystemExit(
            f"no field prior was fitted on {args.people} people: the fit needs 10 people "
            "with evidence on a field; give --people 40 or more"
        )
    thread_ms: list[float] = []
    process_ms: list[float] = []
    for run in range(1, 2 * args.runs + 1):
        if run % 2:
            store.command("TRUNCATE TABLE field_priors")
            what = "defaults"
        else:
            store.insert("field_priors", [list(r) for r in fitted], names)
            what = "fit"
        wall, cpu = time.monotonic(), time.process_time()
        done = rederive_spaces(store, ["acme"], rederive_here(store, settings), today, 45)
        wall, cpu = time.monotonic() - wall, time.process_time() - cpu
        t = done.totals
        thread_ms.append(1000 * t.cpu_seconds / t.people)
        process_ms.append(1000 * cpu / t.people)
        print(f"run {run} ({what}): {t.people} people, {t.changed_people} changed, "
              f"{t.inferences} inferences, {wall:.2f} s, {thread_ms[-1]:.1f} CPU ms/person "
              f"(thread), {process_ms[-1]:.1f} (process)")  # fmt: skip
    print(f"median over {len(thread_ms)} runs: {statistics.median(thread_ms):.1f} CPU ms per "
          f"person (thread), {statistics.median(process_ms):.1f} (process)")  # fmt: skip
    store.close()


if __name__ == "__main__":
    main()
