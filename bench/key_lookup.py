"""The idempotency-key look-up: keys as data (the worker's way) against keys in the SQL text.

    .venv/bin/python bench/key_lookup.py [--reps 9] [--stored 200000]

A throw-away, migrated chDB store holds ``--stored`` keys in ``idempotency_keys``; each
repetition looks up a fresh batch of keys (one in ten already stored) both ways,
alternating which goes first (A B, B A, ...), so load on the shared machine falls on
both alike:

* ``staged``: what ``KeyRegistry.lookup`` does: the keys inserted into a temporary table
  of the session, then one query that reads it;
* ``literal``: the look-up before issue #18: the keys as one TSV string literal in the
  SQL text. It needs ``max_query_size`` raised past ClickHouse's 256 KiB default for long
  keys (the worker never raised it: 5,000 keys of 64 characters halted it), so the figure
  is what it would cost if it worked.

Prints the median milliseconds per look-up and the ratio for each batch shape; asserts
nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import machine
from turnstream.adapters.clickhouse.idempotency_keys import KeyRegistry
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store

SHAPES = ((5_000, 20), (5_000, 64), (5_000, 256), (10_000, 256))
_TSV = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "\\0"})
_ALPHABET = string.ascii_letters + string.digits + "-_:'\\\t"


def _key(rng: random.Random, length: int) -> str:
    return "k\x1facme\x1f" + "".join(rng.choices(_ALPHABET, k=length))


def _literal(store: Store, keys: list[str]) -> int:
    """The pre-#18 look-up: keys in the SQL text as one TSV string literal."""
    text = "\n".join(k.translate(_TSV) for k in keys)
    literal = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    rows = store.query(
        "SELECT dedup_key, argMin((_topic, _partition, _offset), ingested_at) "
        "FROM idempotency_keys WHERE dedup_key IN "
        f"(SELECT k FROM format(TSV, 'k String', {literal})) GROUP BY dedup_key",
        settings={"max_query_size": 64 << 20},
    ).rows
    return len(rows)


def _staged(store: Store, keys: list[str]) -> int:
    return len(KeyRegistry(store, cache_size=0).lookup(keys))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--stored", type=int, default=200_000)
    args = parser.parse_args()
    rng = random.Random(18)
    print(machine())
    with tempfile.TemporaryDirectory(prefix="ts-keys-") as tmp:
        store = Store(f"chdb://{tmp}/store")
        apply_migrations(store)
        stored = [_key(rng, rng.choice((20, 64, 256))) for _ in range(args.stored)]
        now = datetime.now(UTC)
        store.insert(
            "idempotency_keys",
            [[k, "acme", now, "t", i % 4, i] for i, k in enumerate(stored)],
            ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"],
        )
        print(f"{args.stored:,} keys stored; {args.reps} look-ups per shape and way\n")
        print(
            f"{'keys':>7} {'chars':>5} {'staged ms':>10} {'literal ms':>11} {'literal/staged':>15}"
        )
        for count, length in SHAPES:
            times: dict[str, list[float]] = {"staged": [], "literal": []}
            for rep in range(args.reps):
                keys = [_key(rng, length) for _ in range(count - count // 10)]
                keys += rng.sample(stored, count // 10)
                order = ("staged", "literal") if rep % 2 == 0 else ("literal", "staged")
                found = {}
                for way in order:
                    start = time.perf_counter()
                    found[way] = (_staged if way == "staged" else _literal)(store, keys)
                    times[way].append((time.perf_counter() - start) * 1000)
                assert found["staged"] == found["literal"], found
            staged = statistics.median(times["staged"])
            literal = statistics.median(times["literal"])
            ratio = literal / staged
            print(f"{count:>7,} {length:>5} {staged:>10.1f} {literal:>11.1f} {ratio:>15.2f}")
        store.close()


if __name__ == "__main__":
    main()
