"""Migration 23: value_daily written by one view (pages and engagements in one scan) holds
the same rows, once merged, as the two views it replaces, and so does value_weekly.

Two stores, one at migration 22 (the exposed and the engaged views), one at the latest,
take the same rows through the real sink: a mixed batch as producers send it (every kind,
acme's and lumen's pages), and hand-made pages at the contract's edges (values in pt,
en and es with quotes and accents, numbers, booleans, null, a page whose
visible window cuts it, a page starting past position 1, a sensitive type and a
sensitive field, engagements on a sensitive object, with and without an item, `cart`).
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.clickhouse.schema import MIGRATIONS, apply_migrations
from turnstream.adapters.clickhouse.sensitivity import write_sensitive
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.config import Settings
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import Rows, rows_for
from turnstream_dev.sample import mixed_items, uuid7

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        "spaces": {
            "acme": {"features": ["signals", "turns", "claims"]},
            "lumen": {"features": ["signals", "turns"]},
        },
        "signals": {"sensitive": ["health_plan", "item_variant.material"]},
    }
)
START = datetime(2026, 11, 20, 12, tzinfo=UTC)

#: A page at the edges: values of every JSON kind and language, the window cutting it.
EDGE_SHOWN: list[dict[str, Any]] = [
    {"color": 'preto "fosco" ção', "price": 1999.99, "in_stock": True, "size": None},
    {"color": "black", "material": "cuero", "note": "it's"},
    {"color": "negro ñandú 🙂", "price": 0, "in_stock": False, "weight_kg": 1e21},
    {"color": "azul", "price": -1.5e-3},
]


def _exposure(n: int) -> str:
    return uuid7(int(START.timestamp() * 1000), random.Random(n))


def _line(item: dict[str, Any]) -> bytes:
    return json.dumps(item, ensure_ascii=False).encode()


def _interaction(n: int, person: str, at: datetime, body: dict[str, Any]) -> bytes:
    return _line(
        {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": f"edge-{n}",
            "handle": {"type": "email", "value": f"{person}@example.com"},
            "source": "web",
            "occurred_at": at.isoformat(),
            "interaction": body,
        }
    )


def _page(n: int, person: str, at: datetime, refs: list[str], first: int, visible_k: int):  # type: ignore[no-untyped-def]
    return _interaction(
        n,
        person,
        at,
        {
            "kind": "presented",
            "exposure_id": _exposure(n),
            "list_id": "results",
            "list_kind": "search_products",
            "page": 1,
            "delivered_at": at.isoformat(),
            "visible_k": visible_k,
            "method": "bridge",
            "items": [
                {"pos": first + i, "ref": ref, "shown": EDGE_SHOWN[i % len(EDGE_SHOWN)]}
                for i, ref in enumerate(refs)
            ],
        },
    )


def _engaged(n: int, person: str, at: datetime, ref: str, action: str) -> bytes:
    return _interaction(
        n,
        person,
        at,
        {"kind": "engaged", "exposure_id": _exposure(n), "ref": ref, "action": action},
    )


def _edges() -> list[bytes]:
    refs = ["item_variant:acme:1", "health_plan:acme:2", "item_variant:acme:3", "bag:acme:4"]
    lines = []
    for i in range(12):
        person = f"pessoa{i % 7}"
        at = START - timedelta(days=i % 9, minutes=i)
        lines.append(_page(2 * i, person, at, refs, first=1 + (i % 3) * 4, visible_k=3))
        action = ("cart", "click", "share", "detail")[i % 4]
        lines.append(_engaged(2 * i + 1, person, at, refs[i % len(refs)], action))
    return lines


def _rows(lines: list[bytes]) -> Rows:
    out: Rows = {}
    for offset, raw in enumerate(lines):
        decision = decide(raw, Source("in", offset % 3, offset), SETTINGS, lambda _: None)
        for table, rows in rows_for(decision, SETTINGS, START).items():
            out.setdefault(table, []).extend(rows)
    return out


#: Later migrations that only add what today's sink writes: the turn's language
#: (26, columns), the table of sensitive words (29) and the keys' `kept_from` (33).
ADDITIVE = (26, 29, 33)


def with_language_columns(store: Store) -> None:
    """Rows carry the turn's language, sensitive words are written apart and keys carry
    when they are kept from now (the additive migrations of ``ADDITIVE``): a store kept
    at an older migration takes those alone, so what the test compares stays that
    migration's views."""
    for migration in MIGRATIONS:
        if migration.version in ADDITIVE:
            for statement in migration.statements:
                store.command(statement)


@pytest.fixture
def stores(chdb_path: Path) -> Iterator[tuple[Store, Store]]:
    """A store at migration 22 and one at the latest, with the same sensitive names."""
    made = [Store(f"chdb://{chdb_path}", f"t_{uuid.uuid4().hex[:12]}") for _ in range(2)]
    try:
        apply_migrations(made[0], until=22)
        with_language_columns(made[0])
        apply_migrations(made[1])
        for store in made:
            write_sensitive(store, SETTINGS.sensitive_names())
        yield made[0], made[1]
    finally:
        for store in made:
            store.command(f"DROP DATABASE IF EXISTS {store.database}")
            store.close()


def _merged(store: Store, table: str, day: str) -> list[tuple[Any, ...]]:
    """The table's rows as the engine merges them: people as the capped union of keys."""
    return store.query(
        f"SELECT space_id, attr, value, {day}, level, "
        "arraySort(groupUniqArrayArray(64)(people)), sum(exposure_micro), sum(events), "
        f"sum(signal_micro) FROM {table} GROUP BY ALL ORDER BY ALL"
    ).rows


def test_one_view_gives_the_rows_of_the_two(stores: tuple[Store, Store]) -> None:
    old, new = stores
    views = (
        "SELECT name FROM system.tables WHERE database = currentDatabase() "
        "AND name LIKE 'value_daily%mv'"
    )
    assert {n for (n,) in old.query(views).rows} == {
        "value_daily_exposed_mv",
        "value_daily_engaged_mv",
    }
    assert {n for (n,) in new.query(views).rows} == {"value_daily_mv"}
    lines = list(mixed_items(n=1500, bad=15, seed=11, start=START).lines) + _edges()
    rows = _rows(lines)
    kinds = {r["kind"] for r in rows["interactions"]}
    assert {"presented", "engaged"} <= kinds
    # Two batches, cut where they are: the views run once per insert.
    for store in (old, new):
        sink = RawSink(store)
        half = len(lines) // 2
        sink.write({t: [r for r in rs if r["_offset"] < half] for t, rs in rows.items()})
        sink.write({t: [r for r in rs if r["_offset"] >= half] for t, rs in rows.items()})

    daily = _merged(new, "value_daily", "day")
    assert daily == _merged(old, "value_daily", "day")
    assert _merged(new, "value_weekly", "week") == _merged(old, "value_weekly", "week")
    # What the comparison covers: exposures with people, engagements with cart's weight,
    # edge values in every language, and nothing sensitive.
    assert any(r[5] and r[6] > 0 for r in daily)
    assert any(r[7] > 0 and r[8] > r[7] * 1_000_000 for r in daily)  # a cart among them
    values = {r[2] for r in daily}
    assert {
        'preto "fosco" ção',
        "negro ñandú 🙂",
        "1999.99",
        "true",
    } <= values
    assert "bag:acme:4" in values
    attrs = {r[1] for r in daily}
    assert not any(a.startswith("health_plan") or a == "item_variant.material" for a in attrs)
    assert "null" not in values  # a null shown value is no value
