"""The distinct-people counters the daily aggregates could keep, side by side in chDB:
exactness at the 10-person floor, bytes per state, and the cost of merging 90 days.

    .venv/bin/python bench/priors_counters.py [TRIALS]

Counters: ``uniqExact`` (what value_daily kept before migration 11), ``uniqCombined``
(32-bit hash: an array, then a hash table, then HyperLogLog), ``uniqCombined64`` (the
same with a 64-bit hash), and the capped levels of ``turnstream/adapters/clickhouse/people_sets.py``
(``groupUniqArray(64)`` of sipHash64 keys by level: what value_daily keeps now). Profile
ids are 64 hex digits, as the worker makes them. Prints figures; asserts nothing.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chdb import session

from turnstream.adapters.clickhouse.people_sets import CAP, level_of

PROFILE = "hex(sipHash128(number, {seed}))"
KEY = "sipHash64(p)"
COUNTERS = {
    "uniqExact": "uniqExact(p)",
    "uniqCombined": "uniqCombined(p)",
    "uniqCombined64": "uniqCombined64(p)",
}
STATES = {
    "uniqExact": "uniqExactState(p)",
    "uniqCombined": "uniqCombinedState(p)",
    "uniqCombined64": "uniqCombined64State(p)",
}
MERGES = {
    "uniqExact": "uniqExactMerge(s)",
    "uniqCombined": "uniqCombinedMerge(s)",
    "uniqCombined64": "uniqCombined64Merge(s)",
}


def exactness(db: session.Session, trials: int) -> None:
    print(f"exactness: {trials:,} sets of 9 and of 10 distinct people, each counter's misses")
    for n in (9, 10):
        sql = f"SELECT {', '.join(f'sum(m{i})' for i in range(4))} FROM ({_per_trial(n, trials)})"
        misses = db.query(sql, "CSV").data().strip()
        names = [*COUNTERS, "levels (now)"]
        pairs = zip(names, misses.split(","), strict=True)
        print(f"  {n} people: " + ", ".join(f"{k} {m}" for k, m in pairs))
    print(
        "  odds of a hash collision among 10 people: 45 / 2^32 = 1.0e-08 (32-bit), "
        "45 / 2^64 = 2.4e-18 (64-bit)"
    )


def _per_trial(n: int, trials: int) -> str:
    checks = [f"({c} != {n}) AS m{i}" for i, c in enumerate(COUNTERS.values())]
    checks.append(f"(length(groupUniqArray({CAP})({KEY})) != {n}) AS m3")
    return f"""SELECT {", ".join(checks)} FROM (
        SELECT intDiv(number, {n}) AS t, {PROFILE.format(seed=n)} AS p
        FROM numbers({trials * n})) GROUP BY t"""


def sizes(db: session.Session) -> None:
    print("bytes per state (one value and day) by people who saw it:")
    print(f"  {'people':>8} " + " ".join(f"{k:>15}" for k in [*STATES, "levels (now)"]))
    for n in (10, 64, 100, 1_000, 10_000, 100_000):
        cells = []
        for state in STATES.values():
            sql = f"""SELECT length(CAST({state} AS String)) FROM (
                SELECT {PROFILE.format(seed=1)} AS p FROM numbers({n}))"""
            cells.append(int(db.query(sql, "CSV").data().strip()))
        sql = f"""SELECT sum(length(CAST(s AS String))) FROM (
            SELECT {level_of(KEY)} AS level, groupUniqArrayState({CAP})({KEY}) AS s FROM (
                SELECT {PROFILE.format(seed=1)} AS p FROM numbers({n})) GROUP BY level)"""
        cells.append(int(db.query(sql, "CSV").data().strip()))
        print(f"  {n:>8,} " + " ".join(f"{c:>15,}" for c in cells))


def merges(db: session.Session, values: int, people: int) -> None:
    print(
        f"merging 90 days: {values:,} values x 90 days, {people} people a day each, "
        "from a pool of 20 x that (seconds, median of 3)"
    )
    for name, state in STATES.items():
        db.query(f"DROP TABLE IF EXISTS m_{name}")
        db.query(
            f"CREATE TABLE m_{name} ENGINE = MergeTree ORDER BY v AS "
            f"SELECT v, d, {state} AS s FROM (SELECT intDiv(number, {90 * people}) AS v, "
            f"intDiv(number, {people}) % 90 AS d, "
            f"hex(sipHash128(v, cityHash64(number) % {20 * people})) AS p "
            f"FROM numbers({values * 90 * people})) GROUP BY v, d"
        )
    db.query("DROP TABLE IF EXISTS m_levels")
    db.query(
        f"CREATE TABLE m_levels ENGINE = MergeTree ORDER BY v AS "
        f"SELECT v, d, {level_of(KEY)} AS level, groupUniqArrayState({CAP})({KEY}) AS s "
        f"FROM (SELECT intDiv(number, {90 * people}) AS v, intDiv(number, {people}) % 90 AS d, "
        f"hex(sipHash128(v, cityHash64(number) % {20 * people})) AS p "
        f"FROM numbers({values * 90 * people})) GROUP BY v, d, level"
    )
    queries = {name: f"SELECT v, {MERGES[name]} FROM m_{name} GROUP BY v" for name in STATES}
    queries["levels (now)"] = (
        f"SELECT v, sum(n) FROM (SELECT v, level, length(groupUniqArrayMerge({CAP})(s)) AS n "
        "FROM m_levels GROUP BY v, level) GROUP BY v"
    )
    for name, sql in queries.items():
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            db.query(f"SELECT count() FROM ({sql})", "CSV")
            timings.append(time.perf_counter() - started)
        table = "m_levels" if name == "levels (now)" else f"m_{name}"
        size = db.query(
            f"SELECT sum(bytes_on_disk) FROM system.parts WHERE table = '{table}' AND active",
            "CSV",
        ).data()
        print(f"  {name:<16} {sorted(timings)[1]:.2f} s, {int(size) / 2**20:,.1f} MiB on disk")


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    with tempfile.TemporaryDirectory() as tmp:
        db = session.Session(tmp)
        db.query("CREATE DATABASE IF NOT EXISTS counters")
        db.query("USE counters")
        exactness(db, trials)
        sizes(db)
        merges(db, 2_000, 30)
        db.close()


if __name__ == "__main__":
    main()
