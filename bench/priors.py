"""Priors at a realistic volume: 90 days of presented lists and engagements into a
throw-away chDB store, then the nightly recompute, timed, with the plan of its query.

    .venv/bin/python bench/priors.py [PRESENTED_ITEMS]

Default volume: 3 spaces, 20,000 people, 2,000,000 presented items (200,000 pages of
10, 4 visible) over 90 days; 50,000 objects per space drawn by popularity (Zipf), each
showing colour, brand, price and size; ~5% of visible items engaged.
Rows older than 45 days never stay in the raw table (its TTL), so everything the
recompute reads comes from the daily aggregates the views filled at insert.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.jobs.priors import (
    priors_query,
    recompute_priors,
    window_of,
    window_parameters,
)
from turnstream.jobs.retention import retention_check
from turnstream.sinks.priors import latest_priors
from turnstream.sinks.schema import apply_migrations
from turnstream.sinks.store import Store

SPACES = ("acme", "lumen", "nova")
PEOPLE = 20_000
PAGE = 10
VISIBLE = 4
DAYS = 90
REFS_PER_SPACE = 50_000
ENGAGE = 0.05
COLORS = ("black", "white", "red", "blue", "green", "grey", "navy", "beige", "pink", "brown")
SIZES = ("XS", "S", "M", "L", "XL", "XXL", "36", "38", "40", "42")
INGESTED_AT = datetime.now(UTC)
COLUMNS = (
    "space_id",
    "profile_id",
    "source",
    "conversation_id",
    "session_id",
    "idempotency_key",
    "occurred_at",
    "for",
    "kind",
    "exposure_id",
    "list_id",
    "ref",
    "payload",
    "ingested_at",
    "_topic",
    "_partition",
    "_offset",
)


def catalog(rng: random.Random, space: str) -> list[tuple[str, dict]]:
    """Each object of a space with the fields it shows; popular objects first."""
    return [
        (
            f"item_variant:{space}:{n}",
            {
                "color": rng.choice(COLORS),
                "brand": f"brand-{rng.randrange(200)}",
                "price": rng.randrange(19, 1000) + 0.9,
                "size": rng.choice(SIZES),
            },
        )
        for n in range(REFS_PER_SPACE)
    ]


def pick(rng: random.Random, objects: list, cum_weights: list[float]) -> list:
    """``PAGE`` distinct objects, drawn by popularity (Zipf, exponent 1)."""
    drawn = rng.choices(objects, cum_weights=cum_weights, k=PAGE * 2)
    return list({ref: (ref, shown) for ref, shown in drawn}.values())[:PAGE]


def _row(
    space: str, person: str, at: datetime, kind: str, exposure: str, ref: str, body: dict, n: int
) -> tuple:
    """One raw interaction row (``COLUMNS``); the person's id doubles as the session."""
    list_id = "results" if kind == "presented" else ""
    text = json.dumps(body, separators=(",", ":"))
    source = ("turnstream.interactions", 0, n)
    return (
        space,
        person,
        "web",
        person,
        person,
        f"k{n}",
        at,
        "self",
        kind,
        exposure,
        list_id,
        ref,
        text,
        INGESTED_AT,
        *source,
    )


def generate(store: Store, items: int, today: date, seed: int = 7) -> tuple[int, int]:
    """Insert ``items`` presented items (pages of 10) and their engagements, one insert
    per day; returns (rows, engagements)."""
    rng = random.Random(seed)
    objects = {space: catalog(rng, space) for space in SPACES}
    cum_weights = list(itertools.accumulate(1 / rank for rank in range(1, REFS_PER_SPACE + 1)))
    people = [(SPACES[i % len(SPACES)], f"p{i:05d}") for i in range(PEOPLE)]
    pages_per_day = items // PAGE // DAYS
    offset = rows = engaged = 0
    for back in range(DAYS, 0, -1):
        day = today - timedelta(days=back)
        batch = []
        for n in range(pages_per_day):
            space, person = rng.choice(people)
            at = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(
                seconds=rng.randrange(86_400)
            )
            exposure = f"x{back}-{n}"
            listed = pick(rng, objects[space], cum_weights)
            shown_items = []
            for pos, (ref, shown) in enumerate(listed, 1):
                fields = dict(shown)
                if rng.random() < 0.1:  # a sale price now and then
                    fields["price"] = round(fields["price"] * 0.8, 1)  # 79.92 → 79.9
                shown_items.append({"pos": pos, "ref": ref, "shown": fields})
            payload = {
                "kind": "presented",
                "exposure_id": exposure,
                "list_id": "results",
                "list_kind": "search_products",
                "page": 1,
                "delivered_at": at.isoformat(),
                "visible_k": VISIBLE,
                "method": "bridge",
                "items": shown_items,
            }
            offset += 1
            batch.append(_row(space, person, at, "presented", exposure, "", payload, offset))
            for item in shown_items[:VISIBLE]:
                if rng.random() < ENGAGE:
                    action = rng.choice(("click", "click", "detail", "cart"))
                    ref = item["ref"]
                    body = {
                        "kind": "engaged",
                        "exposure_id": exposure,
                        "ref": ref,
                        "action": action,
                    }
                    offset += 1
                    engaged += 1
                    batch.append(_row(space, person, at, "engaged", exposure, ref, body, offset))
        store.insert("interactions", batch, COLUMNS)
        rows += len(batch)
    return rows, engaged


def table_sizes(store: Store) -> list[tuple]:
    return store.query(
        """SELECT table, sum(rows), formatReadableSize(sum(bytes_on_disk))
FROM system.parts WHERE database = currentDatabase() AND active
    AND table IN ('interactions', 'value_daily', 'ref_values_daily', 'interactions_daily', 'priors')
GROUP BY table ORDER BY table"""
    ).rows


def main() -> None:
    items = int(sys.argv[1]) if len(sys.argv) > 1 else 2_000_000
    today = datetime.now(UTC).date()
    print(
        f"volume: {len(SPACES)} spaces, {PEOPLE:,} people, {items:,} presented items "
        f"({items // PAGE:,} pages of {PAGE}, {VISIBLE} visible) over {DAYS} days, "
        f"{REFS_PER_SPACE:,} objects per space (Zipf) with 4 shown fields, ~{ENGAGE:.0%} of "
        "visible items engaged"
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"chdb://{tmp}/store", "bench")
        apply_migrations(store)
        started = time.perf_counter()
        rows, engaged = generate(store, items, today)
        print(
            f"generated and inserted {rows:,} interaction rows ({engaged:,} engagements) "
            f"in {time.perf_counter() - started:.1f} s (views included)"
        )
        store.command("OPTIMIZE TABLE value_daily FINAL")
        store.command("OPTIMIZE TABLE ref_values_daily FINAL")
        for table, n, size in table_sizes(store):
            print(f"  {table:<20} {n:>12,} rows  {size:>10} on disk")

        for run in ("first", "second"):
            started = time.perf_counter()
            report = recompute_priors(store, today)
            print(f"recompute_priors ({run} run): {time.perf_counter() - started:.2f} s")
            print(f"  {json.dumps(report.as_dict())}")

        started = time.perf_counter()
        priors = latest_priors(store, "acme")
        print(
            f"latest_priors('acme'): {len(priors):,} keys in {time.perf_counter() - started:.2f} s"
        )
        started = time.perf_counter()
        retention = retention_check(store, today)
        print(
            f"retention_check: {len(retention.days)} expired space-days, "
            f"{len(retention.gaps)} gaps, in {time.perf_counter() - started:.2f} s"
        )

        start, end = window_of(today)
        query = priors_query()
        print("\nEXPLAIN indexes = 1 of the priors query (turnstream.jobs.priors.priors_query):")
        window = window_parameters(start, end)
        for (line,) in store.query(f"EXPLAIN indexes = 1 {query}", window).rows:
            print(f"  {line}")
        store.close()


if __name__ == "__main__":
    main()
