"""Context use: claim verdicts and constraint measurements rolled up, with hand-computed
expectations, through the real sink into real ClickHouse (chDB)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.clickhouse.catalog import render_markdown
from turnstream.adapters.clickhouse.context_use import ReportQuery
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.config import Settings
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import Rows, rows_for

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        "spaces": {
            "acme": {"features": ["signals", "claims", "turns"]},
            "lumen": {"features": ["signals", "turns"]},
        },
    }
)


def _claim(category: str, verdict: str) -> dict[str, Any]:
    return {"category": category, "nature": "computed", "verdict": verdict, "action": "none"}


def _call(tool: str, sent: int, checked: int, violations: int, unverifiable: int, relaxed: bool):  # type: ignore[no-untyped-def]
    return {
        "tool": tool,
        "sent": sent,
        "results_checked": checked,
        "violations": violations,
        "unverifiable": unverifiable,
        "relaxed": relaxed,
    }


def _turn(n: int, space: str, source: str, agent: str, at: str, **fields: Any) -> bytes:
    return json.dumps(
        {
            "type": "turn",
            "space_id": space,
            "idempotency_key": f"turn-{n}",
            "profile_id": f"p_{n}",
            "source": source,
            "occurred_at": at,
            "turn_id": f"t{n}",
            "agent": agent,
            "contract_version": "c1",
            **fields,
        }
    ).encode()


TURNS = [
    _turn(
        1, "acme", "web", "sales", "2026-11-20T10:00:30Z",
        claims=[
            _claim("price", "matched"),
            _claim("price", "mismatch"),
            _claim("deadline", "no_evidence"),
            _claim("price", "quoted_found"),
        ],
        constraints=[_call("search", 2, 10, 1, 2, False)],
    ),
    _turn(
        2, "acme", "web", "sales", "2026-11-20T10:00:50Z",
        claims=[_claim("price", "matched"), _claim("citation", "anchored")],
        constraints=[_call("search", 1, 4, 0, 0, True)],
        guard_acted=True,
    ),
    _turn(
        3, "acme", "whatsapp", "sales", "2026-11-20T23:59:59Z",
        claims=[_claim("price", "unsupported"), _claim("internal_text", "internal_text_found")],
        guard_budget_exceeded=True,
    ),
    _turn(
        4, "acme", "web", "sales", "2026-11-21T00:00:01+00:00",
        claims=[_claim("price", "matched")],
    ),
    _turn(
        5, "lumen", "web", "helper", "2026-11-20T08:00:00Z",
        claims=[_claim("price", "matched")],
        constraints=[_call("x", 3, 3, 3, 0, False)],
    ),
]  # fmt: skip


def _rows(first_offset: int = 0) -> Rows:
    out: Rows = {}
    now = datetime.now(UTC)
    for i, raw in enumerate(TURNS):
        decision = decide(raw, Source("turns", 0, first_offset + i), SETTINGS, lambda _: None)
        for table, rows in rows_for(decision, SETTINGS, now).items():
            out.setdefault(table, []).extend(rows)
    return out


def _all(store: Store, sql: str, parameters: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in store.query(sql, parameters).rows]


CLAIMS = sorted(
    [
        ("acme", "web", "sales", "price", "matched", date(2026, 11, 20), 2, 2, 1.0),
        ("acme", "web", "sales", "price", "mismatch", date(2026, 11, 20), 1, 0, 0.0),
        ("acme", "web", "sales", "deadline", "no_evidence", date(2026, 11, 20), 1, 0, 0.0),
        ("acme", "web", "sales", "price", "quoted_found", date(2026, 11, 20), 1, 1, 1.0),
        ("acme", "web", "sales", "citation", "anchored", date(2026, 11, 20), 1, 1, 1.0),
        ("acme", "whatsapp", "sales", "price", "unsupported", date(2026, 11, 20), 1, 0, 0.0),
        (
            "acme", "whatsapp", "sales", "internal_text", "internal_text_found",
            date(2026, 11, 20), 1, 0, 0.0,
        ),
        ("acme", "web", "sales", "price", "matched", date(2026, 11, 21), 1, 1, 1.0),
    ]
)  # fmt: skip
CONSTRAINTS = [
    ("acme", "web", "sales", "search", date(2026, 11, 20), 2, 3, 14, 1, 2, 1, 12, 0.0833),
    ("lumen", "web", "helper", "x", date(2026, 11, 20), 1, 3, 3, 3, 0, 0, 3, 1.0),
]
TURN_COUNTS = [
    ("acme", "web", "sales", date(2026, 11, 20), 2, 1, 0, 0, 6),
    ("acme", "web", "sales", date(2026, 11, 21), 1, 0, 0, 0, 1),
    ("acme", "whatsapp", "sales", date(2026, 11, 20), 1, 0, 1, 1, 2),
    ("lumen", "web", "helper", date(2026, 11, 20), 1, 0, 0, 0, 1),
]


def _check(store: Store) -> None:
    assert _all(store, "SELECT * FROM context_use_claims ORDER BY ALL") == CLAIMS
    assert _all(store, "SELECT * FROM context_use_constraints ORDER BY ALL") == CONSTRAINTS
    assert _all(store, "SELECT * FROM context_use_turns ORDER BY ALL") == TURN_COUNTS


def test_views_hold_the_hand_computed_roll_ups(store: Store) -> None:
    RawSink(store).write(_rows())
    _check(store)
    versions = _all(
        store,
        "SELECT space_id, source, contract_version, turns FROM contract_versions ORDER BY ALL",
    )
    assert versions == [
        ("acme", "web", "c1", 3),
        ("acme", "whatsapp", "c1", 1),
        ("lumen", "web", "c1", 1),
    ]
    # Raw claims lead back to their turn.
    back = _all(
        store,
        "SELECT t.turn_id, count() FROM turn_claims c INNER JOIN turns t "
        "ON c.space_id = t.space_id AND c.turn_id = t.turn_id GROUP BY t.turn_id ORDER BY 1",
    )
    assert back == [("t1", 4), ("t2", 2), ("t3", 2), ("t4", 1)]


def test_redelivery_and_restarts_change_nothing(store: Store) -> None:
    RawSink(store).write(_rows())
    RawSink(store).write(_rows())  # the same batch again, from a fresh sink (insert tokens)
    sink = RawSink(store)
    rows = _rows()
    sink.write({t: r[2:] for t, r in rows.items()})  # a differently cut batch (high water)
    _check(store)


def test_the_same_turns_published_again_are_dropped_by_key(store: Store) -> None:
    """Republished turns arrive at new offsets: the ingest rule drops them by key."""
    seen: dict[str, Source] = {}
    out: Rows = {}
    for offset, raw in enumerate(TURNS + TURNS):
        decision = decide(raw, Source("turns", 0, offset), SETTINGS, seen.get)
        if not decision.duplicate:
            seen[decision.dedup_key] = decision.source
        for table, rows in rows_for(decision, SETTINGS, datetime.now(UTC)).items():
            out.setdefault(table, []).extend(rows)
    RawSink(store).write(out)
    _check(store)


def test_report_queries_roll_up_by_the_chosen_dimensions(store: Store) -> None:
    RawSink(store).write(_rows())
    report = ReportQuery(space="acme", by=("source", "agent"))
    assert _all(store, report.claims(), report.parameters()) == [
        ("web", "sales", 7, 5, 0.7143),
        ("whatsapp", "sales", 2, 0, 0.0),
    ]
    since = ReportQuery(space="acme", since=date(2026, 11, 21), by=("agent",))
    assert _all(store, since.claims(), since.parameters()) == [("sales", 1, 1, 1.0)]
    constraints = _all(store, ReportQuery(by=("space_id",)).constraints())
    assert constraints == [
        ("acme", "search", 2, 3, 14, 12, 1, 2, 1, 0.0833),
        ("lumen", "x", 1, 3, 3, 3, 3, 0, 0, 1.0),
    ]
    lumen = ReportQuery(space="lumen")
    assert _all(store, lumen.claims(), lumen.parameters()) == []  # claims feature off
    # A space is data, never SQL: a hostile one matches nothing and breaks nothing.
    hostile = ReportQuery(space="acme' OR 1=1 --")
    assert _all(store, hostile.claims(), hostile.parameters()) == []


def test_tables_page_matches_the_live_schema(store: Store) -> None:
    def describe(name: str) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in store.query(f"DESCRIBE TABLE {name}").rows]

    def objects() -> list[tuple[str, str, str, list[str]]]:
        return [
            (r[0], r[1], r[2], list(r[3]))
            for r in store.query(
                "SELECT name, engine, create_table_query, dependencies_table FROM system.tables "
                "WHERE database = currentDatabase() ORDER BY name"
            ).rows
        ]

    page = Path(__file__).parents[3] / "docs" / "tables.md"
    assert render_markdown(describe, objects) == page.read_text()
