"""What keeping the raw window costs: the retention job's fold of many states whose
evidence the clock aged out, settled in the store (SQL, ``fold_states``' default) against
settled in Python (``expire``, ``in_store=False``), on embedded chDB.

    .venv/bin/python bench/retention_fold.py [STATES] [REPS] [BASE]

Derives BASE (default 500) people with the engine, each with 30 days of activity ending
50 days before the as-of day (a page of 5 items and two engagements a day, an outcome
every 5 days), and copies their states under other ids up to STATES (default 10,000).
Then REPS times (default 3) in alternating pairs (Python, SQL), each on a fresh copy of
the states: ``fold_states`` (read, settle, rewrite, delete the old rows), timed in wall
and CPU seconds (this process's, chDB's threads included). Prints each run and the
medians: states a second and CPU seconds per million states. Asserts nothing.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.adapters.clickhouse.derivations import write_derivations
from turnstream.adapters.clickhouse.retention import Folded, fold_states
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation import SignalEvent
from turnstream.core.derivation.engine import SignalsEngine

AS_OF = datetime(2026, 11, 30, tzinfo=UTC)
START = AS_OF - timedelta(days=80)


def _events(person: int) -> list[SignalEvent]:
    out: list[SignalEvent] = []
    for day in range(30):
        at = START + timedelta(days=day, minutes=person % 600)
        exposure = f"0190f5a2-7b3c-7def-8123-{person:06d}{day:06d}"
        items = [{"pos": i, "ref": f"item_variant:acme:{(person + day + i) % 500}",
                  "shown": {"color": ("red", "blue", "green")[i % 3], "size": "M"}}
                 for i in range(1, 6)]  # fmt: skip
        page = {"kind": "presented", "exposure_id": exposure, "list_id": f"l{day}",
                "list_kind": "search", "page": 1, "delivered_at": at.isoformat(),
                "visible_k": 5, "method": "bridge", "items": items}  # fmt: skip
        base = ("interaction", "acme", f"p{person}", "self", f"s{day}")
        out.append(SignalEvent(*base, at, f"p{person}-{day}-pg", page))  # type: ignore[arg-type]
        for k in range(2):
            click = {"kind": "engaged", "ref": items[k]["ref"], "action": "click",
                     "exposure_id": None, "pos": None}  # fmt: skip
            later = at + timedelta(minutes=k + 1)
            out.append(SignalEvent(*base, later, f"p{person}-{day}-c{k}", click))  # type: ignore[arg-type]
        if day % 5 == 0:
            bought = {"outcome": "purchase", "ref": items[0]["ref"], "order_id": f"o{day}",
                      "exposure_token": None, "attrs": {"size": "M"}, "reason": None,
                      "for": None}  # fmt: skip
            when = at + timedelta(minutes=5)
            out.append(SignalEvent("outcome", *base[1:], when, f"p{person}-{day}-o", bought))  # type: ignore[arg-type]
    return out


def _template(store: Store, base: int, states: int, config: SignalsConfig) -> None:
    """``states`` states in ``store``: ``base`` derived, the rest copies under new ids."""
    engine = SignalsEngine(config)
    for person in range(base):
        for one in _events(person):
            engine.offer(one, one.occurred_at)
    write_derivations(store, engine.fire_all())
    for copy_ in range(1, -(-states // base)):
        store.command(
            "INSERT INTO signal_state (profile_id, space_id, state, version, evidence_from) "
            "SELECT concat(profile_id, '-', {n:String}) AS p, space_id, replaceRegexpAll("
            'state, \'"profile_id":"[^"]*"\', concat(\'"profile_id":"\', p, \'"\')), '
            "version, evidence_from FROM signal_state WHERE position(profile_id, '-') = 0 "
            "ORDER BY profile_id LIMIT {limit:UInt64}",
            parameters={"n": str(copy_), "limit": min(base, states - copy_ * base)},
        )


def _run(home: str, run: int, in_store: bool, config: SignalsConfig) -> tuple[float, float, int]:
    """One fold on a fresh copy of the template: wall s, CPU s, states folded."""
    store = Store(f"chdb://{home}/store", f"run{run}")
    apply_migrations(store)
    store.command("INSERT INTO signal_state SELECT * FROM template.signal_state")
    folded = Folded()
    began, began_cpu = time.perf_counter(), time.process_time()
    fold_states(store, AS_OF, config, folded, in_store=in_store)
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    store.command(f"DROP DATABASE run{run}")
    return wall, cpu, folded.states


def main() -> None:
    states = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    base = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    config = SignalsConfig()
    with tempfile.TemporaryDirectory() as home:
        template = Store(f"chdb://{home}/store", "template")
        apply_migrations(template)
        _template(template, base, states, config)
        count, size = template.query(
            "SELECT count(), sum(length(state)) FROM signal_state").rows[0]  # fmt: skip
        print(f"{count} states, {size / count / 1024:.1f} kB each; load {os.getloadavg()}")
        runs: dict[bool, list[tuple[float, float, int]]] = {False: [], True: []}
        for rep in range(reps):
            for in_store in (False, True):
                wall, cpu, done = _run(home, 2 * rep + in_store, in_store, config)
                runs[in_store].append((wall, cpu, done))
                name = "SQL   " if in_store else "Python"
                print(f"{name} run {rep + 1}: {done} states, {wall:.2f} s wall, {cpu:.2f} s CPU, "
                      f"{done / wall:,.0f} states/s, {cpu / done * 1e6 / 3600:.3f} h CPU per "
                      f"million; load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for in_store, name in ((False, "Python (expire)"), (True, "SQL (in the store)")):
        rate = statistics.median(done / wall for wall, _, done in runs[in_store])
        per_million = statistics.median(cpu / done * 1e6 for _, cpu, done in runs[in_store])
        print(f"{name}: median {rate:,.0f} states/s, {per_million:,.0f} CPU s per million "
              f"states ({per_million / 3600:.2f} h)")  # fmt: skip


if __name__ == "__main__":
    main()
