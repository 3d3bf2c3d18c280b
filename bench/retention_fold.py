"""What keeping the raw window costs: settling one state in the core, and the retention
job's fold of many states whose evidence the clock aged out, on embedded chDB.

    .venv/bin/python bench/retention_fold.py [PEOPLE] [REPS]

Builds PEOPLE (default 2,000) people, each with 30 days of activity ending 50 days
before the as-of day (a page of 5 items and two engagements a day, an outcome every 5
days), derives them with the engine and writes their states; then times ``expire`` per
state (pure Python, REPS times, default 5) and ``enforce_retention`` once on a fresh copy
of the store (read, settle, rewrite, delete the old rows). Prints figures; asserts nothing.
"""

from __future__ import annotations

import copy
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation import SignalEvent
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.derivation.window import cut_for, expire
from turnstream.sinks.derivations import write_derivations
from turnstream.sinks.retention import enforce_retention
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import Store

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


def main() -> None:
    people = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    config = SignalsConfig()
    engine = SignalsEngine(config)
    for person in range(people):
        for one in _events(person):
            engine.offer(one, one.occurred_at)
    derivations = engine.fire_all()
    states = [d.state for d in derivations]
    cut = cut_for(AS_OF, config)
    per_state, cpu_per_state = [], []
    for _ in range(reps):
        copies = copy.deepcopy(states)
        began, began_cpu = time.perf_counter(), time.process_time()
        for state in copies:
            expire(state, cut, config)
        per_state.append((time.perf_counter() - began) / len(copies) * 1e6)
        cpu_per_state.append((time.process_time() - began_cpu) / len(copies) * 1e6)
    with tempfile.TemporaryDirectory() as home:
        store = Store(f"chdb://{home}/store", "bench")
        apply_migrations(store)
        write_derivations(store, derivations)
        size = store.scalar("SELECT sum(length(state)) FROM signal_state")
        began, began_cpu = time.perf_counter(), time.process_time()
        folded = enforce_retention(store, AS_OF, config)
        fold_seconds = time.perf_counter() - began
        fold_cpu = time.process_time() - began_cpu  # chDB's threads included
        after = store.scalar("SELECT sum(length(state)) FROM signal_state")
        store.close()
    print(f"people {people}; states {size / people / 1024:.1f} kB each before the fold, "
          f"{after / people / 1024:.1f} kB after")  # fmt: skip
    print(f"expire, per state: median {statistics.median(per_state):.0f} us wall, "
          f"{statistics.median(cpu_per_state):.0f} us CPU over {reps} runs")  # fmt: skip
    print(f"enforce_retention: {fold_seconds:.2f} s wall, {fold_cpu:.2f} s CPU "
          f"for {folded.states} states "
          f"({folded.signals} signals settled, {folded.pages} pages dropped, "
          f"deleted {folded.deleted})")  # fmt: skip


if __name__ == "__main__":
    main()
