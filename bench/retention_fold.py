"""What keeping the raw window costs: the retention job's fold of many states whose
evidence the clock aged out, settled in the store (SQL, ``fold_states``' default) against
settled in Python (``expire``, ``in_store=False``), on embedded chDB.

    .venv/bin/python bench/retention_fold.py [STATES] [REPS] [BASE] [--shoe-share F]
        [--only python|sql]

Derives BASE (default 500) people with the engine, each with 30 days of activity ending
50 days before the as-of day (a page of 5 items and two engagements a day, an outcome
every 5 days: ``attrs.size`` M, or for a share F of the people, default 0, a shoe size,
``attrs.shoe_size``, of a space whose size fields hold ``item_variant.shoe_size``), and
copies their states under other ids up to STATES (default 10,000). Then REPS times
(default 3) in alternating pairs (Python, SQL; or one of them, ``--only``), each on a
fresh copy of the states: ``fold_states`` (read, settle, rewrite, delete the old rows),
timed in wall and CPU seconds (this process's, chDB's threads included). Prints each run
(with the states settled in Python) and the medians: states a second and CPU seconds per
million states. Asserts nothing.
"""

from __future__ import annotations

import argparse
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


#: The space's size fields beside ``size``: a sneaker's size is its ``shoe_size``.
SIZE_FIELDS = frozenset({"item_variant.shoe_size"})


def _shoe_buyer(person: int, share: float) -> bool:
    """Whether ``person`` buys shoes: ``share`` of the people, spread evenly."""
    return int((person + 1) * share) > int(person * share)


def _events(person: int, shoe_share: float = 0.0) -> list[SignalEvent]:
    out: list[SignalEvent] = []
    shoes = _shoe_buyer(person, shoe_share)
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
            attrs = {"shoe_size": str(38 + person % 6)} if shoes else {"size": "M"}
            bought = {"outcome": "purchase", "ref": items[0]["ref"], "order_id": f"o{day}",
                      "exposure_token": None, "attrs": attrs, "reason": None,
                      "for": None}  # fmt: skip
            when = at + timedelta(minutes=5)
            out.append(SignalEvent("outcome", *base[1:], when, f"p{person}-{day}-o", bought))  # type: ignore[arg-type]
    return out


def _template(
    store: Store, base: int, states: int, config: SignalsConfig, shoe_share: float
) -> None:
    """``states`` states in ``store``: ``base`` derived, the rest copies under new ids."""
    engine = SignalsEngine(config)
    for person in range(base):
        for one in _events(person, shoe_share):
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


def _run(
    home: str, run: int, in_store: bool, config: SignalsConfig
) -> tuple[float, float, int, int]:
    """One fold on a fresh copy of the template: wall s, CPU s, states folded, of which
    settled in Python."""
    store = Store(f"chdb://{home}/store", f"run{run}")
    apply_migrations(store)
    store.command("INSERT INTO signal_state SELECT * FROM template.signal_state")
    folded = Folded()
    began, began_cpu = time.perf_counter(), time.process_time()
    fold_states(store, AS_OF, config, folded, in_store=in_store)
    wall, cpu = time.perf_counter() - began, time.process_time() - began_cpu
    store.command(f"DROP DATABASE run{run}")
    return wall, cpu, folded.states, folded.in_python


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="The retention fold's cost, settled in SQL and in Python.")  # fmt: skip
    parser.add_argument("states", nargs="?", type=int, default=10_000)
    parser.add_argument("reps", nargs="?", type=int, default=3)
    parser.add_argument("base", nargs="?", type=int, default=500,
                        help="people derived; the rest are copies")  # fmt: skip
    parser.add_argument(
        "--shoe-share",
        type=float,
        default=0.0,
        help="the share of people whose outcomes carry attrs.shoe_size",
    )
    parser.add_argument("--only", choices=("python", "sql"), help="fold one way only")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    config = SignalsConfig().with_size_fields(SIZE_FIELDS)
    ways = {"python": (False,), "sql": (True,), None: (False, True)}[args.only]
    with tempfile.TemporaryDirectory() as home:
        template = Store(f"chdb://{home}/store", "template")
        apply_migrations(template)
        _template(template, args.base, args.states, config, args.shoe_share)
        count, size, shoes = template.query(
            "SELECT count(), sum(length(state)), countIf(position(state, '\"shoe_size\":') > 0) "
            "FROM signal_state").rows[0]  # fmt: skip
        print(f"{count} states ({shoes} with shoe sizes), {size / count / 1024:.1f} kB each; "
              f"load {os.getloadavg()}")  # fmt: skip
        runs: dict[bool, list[tuple[float, float, int, int]]] = {False: [], True: []}
        for rep in range(args.reps):
            for in_store in ways:
                wall, cpu, done, python = _run(home, 2 * rep + in_store, in_store, config)
                runs[in_store].append((wall, cpu, done, python))
                name = "SQL   " if in_store else "Python"
                print(f"{name} run {rep + 1}: {done} states ({python} in Python), "
                      f"{wall:.2f} s wall, {cpu:.2f} s CPU, {done / wall:,.0f} states/s, "
                      f"{cpu / done * 1e6 / 3600:.3f} h CPU per million; "
                      f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for in_store, name in ((False, "Python (expire)"), (True, "SQL (in the store)")):
        if not runs[in_store]:
            continue
        rate = statistics.median(done / wall for wall, _, done, _ in runs[in_store])
        per_million = statistics.median(cpu / done * 1e6 for _, cpu, done, _ in runs[in_store])
        python = statistics.median(p for *_, p in runs[in_store])
        print(f"{name}: median {rate:,.0f} states/s, {per_million:,.0f} CPU s per million "
              f"states ({per_million / 3600:.2f} h), {python:,.0f} states in Python")  # fmt: skip


if __name__ == "__main__":
    main()
