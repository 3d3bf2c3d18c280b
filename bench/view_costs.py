"""The chDB CPU each materialized view on ``interactions`` adds per item: no broker, a
throw-away chDB store.

    .venv/bin/python bench/view_costs.py [ITEMS] [--rounds 9] [--until N] [--against M]

Prepares one real batch of ITEMS (default 5,000) ``mixed_items`` lines through the ingest
driver (its ``interactions`` rows: every kind, as producers send them), then makes one
database per configuration, each migrated up to ``--until`` (default: every migration),
with every view fed by ``interactions`` (directly or through another view's target)
dropped but those the configuration keeps: none, each view alone (a view chained on
another's target together with it), and all of them. Inserts the rows into each
database in turn, ``--rounds`` times with a fresh token, and prints per configuration the
process CPU of the insert (the raw part and every kept view's, chDB's threads included),
median, and what each view adds over none, per insert and per item of the batch; with
``--against M``, also a database with every view of migration M, alternating with the
others (the whole insert at two migrations). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import in_process_loop, load, machine, records, settle
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.rows import COLUMNS, as_dicts
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream.service.ingest import rows_to_write
from turnstream_dev.sample import mixed_items


def _feeds(store: Store) -> dict[str, str]:
    """Every materialized view fed by ``interactions``, directly or through a view's
    target table: view -> the table it reads."""
    views = store.query(
        "SELECT name, create_table_query FROM system.tables "
        "WHERE database = currentDatabase() AND engine = 'MaterializedView'"
    ).rows
    targets = {name: query.split(" TO ", 1)[1].split()[0].split(".")[-1] for name, query in views}
    fed: dict[str, str] = {}
    sources = {"interactions"}
    while True:
        more = {
            name: read
            for name, query in views
            for read in re.findall(r"\bFROM\s+(?:\w+\.)?(\w+)", query)
            if name not in fed and read in sources
        }
        if not more:
            return fed
        fed |= more
        sources |= {targets[name] for name in more}


def _configurations(fed: dict[str, str], targets: dict[str, str]) -> dict[str, set[str]]:
    """None, each view alone (with the view whose target it reads), all."""
    by_target = {target: name for name, target in targets.items() if name in fed}
    out: dict[str, set[str]] = {"none": set()}
    for name in sorted(fed):
        kept, at = {name}, name
        while fed[at] != "interactions":
            at = by_target[fed[at]]
            kept.add(at)
        out[" + ".join(sorted(kept, key=lambda v: (v != name, v)))] = kept
    out["all"] = set(fed)
    return out


def _measure(
    loop: IngestDriver, batch: list, until: int | None, rounds: int, against: list[int]
) -> None:
    main = loop.store.store
    prepared = loop.prepare(batch)
    rows = as_dicts(rows_to_write(prepared, settle(loop, prepared))["interactions"])
    columns = [*COLUMNS["interactions"], "_insert"]
    data = [[*(r[c] for c in COLUMNS["interactions"]), 1] for r in rows]
    probe = Store(main.dsn, "views_probe")
    apply_migrations(probe, until=until)
    fed = _feeds(probe)
    targets = {
        name: query.split(" TO ", 1)[1].split()[0].split(".")[-1]
        for name, query in probe.query(
            "SELECT name, create_table_query FROM system.tables "
            "WHERE database = currentDatabase() AND engine = 'MaterializedView'"
        ).rows
    }
    probe.command("DROP DATABASE IF EXISTS views_probe")
    probe.close()
    configurations = _configurations(fed, targets)
    stores: dict[str, Store] = {}
    try:
        for n, (name, kept) in enumerate(configurations.items()):
            store = Store(main.dsn, f"views_{n}")
            apply_migrations(store, until=until)
            for view in set(fed) - kept:
                store.command(f"DROP VIEW IF EXISTS {view}")
            store.insert("interactions", data, columns, "warm")
            stores[name] = store
        for version in against:
            store = Store(main.dsn, f"views_at_{version}")
            apply_migrations(store, until=version)
            store.insert("interactions", data, columns, "warm")
            stores[f"all, at migration {version}"] = store
        cpu: dict[str, list[float]] = {name: [] for name in stores}
        for r in range(rounds):
            for name, store in stores.items():
                c0 = time.process_time()
                store.insert("interactions", data, columns, f"round-{r}")
                cpu[name].append((time.process_time() - c0) * 1e3)
    finally:
        for store in stores.values():
            store.command(f"DROP DATABASE IF EXISTS {store.database}")
            store.close()
    items = len(batch)
    medians = {name: statistics.median(v) for name, v in cpu.items()}
    none = medians["none"]
    print(f"{len(rows):,} interactions rows of {items:,} items; medians of {rounds}; {load()}")
    print(
        "\n| views kept | insert CPU ms (min to max) | over none, ms | over none, µs per item |"
        "\n|---|---|---|---|"
    )
    for name, ms in sorted(medians.items(), key=lambda kv: kv[1]):
        low, high = min(cpu[name]), max(cpu[name])
        over = ms - none
        print(
            f"| {name} | {ms:.1f} ({low:.1f} to {high:.1f}) | {over:.1f} | "
            f"{over * 1e3 / items:.1f} |"
        )
    print("\nper view, its own (a chained view: over the view it reads from)")
    own = {}
    for name, kept in configurations.items():
        if name in ("none", "all"):
            continue
        view = name.split(" + ")[0]
        base = next(n for n, k in configurations.items() if k == kept - {view})
        own[view] = medians[name] - medians[base]
    for view, ms in sorted(own.items(), key=lambda kv: -kv[1]):
        print(f"  {view}: {ms:.1f} ms, {ms * 1e3 / items:.1f} µs per item")
    print(
        f"summed: {sum(own.values()) * 1e3 / items:.1f} µs per item; all together: "
        f"{(medians['all'] - none) * 1e3 / items:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--until", type=int, default=None)
    parser.add_argument(
        "--against",
        type=int,
        action="append",
        default=[],
        help="also a database with every view of this migration (repeatable)",
    )
    args = parser.parse_args()
    lines = list(mixed_items(n=args.items, bad=args.items // 100, seed=7).lines)
    print(machine())
    print(f"one batch of {args.items:,} mixed_items lines, in-process; {load()}")
    with in_process_loop("ts-views-") as loop:
        loop.stage.process = None
        topic = TopicNames(loop.settings.worker.topic_prefix).input("turn")
        batch = records(lines, topic)
        loop.store.call(_measure, loop, batch, args.until, args.rounds, args.against)


if __name__ == "__main__":
    main()
