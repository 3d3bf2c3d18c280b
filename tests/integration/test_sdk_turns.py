"""The SDK end to end: turns checked by the SDK and outcomes with SDK tokens, published to the
real broker, through the worker, into ClickHouse (chDB)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.loop_thread import LoopThread
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.worker_client import read_query
from turnstream.sdk import Conversation, exposure_token, uuid7
from turnstream.sdk.claims import load_contract
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import EXPOSURE_KEYS

pytestmark = pytest.mark.integration

RETAIL = load_contract(Path(__file__).resolve().parents[2] / "examples/claims/retail.json")
OBJ = "item_variant:acme:991"
NOW = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)


def _price(value: float, field: str = "price_sale") -> dict[str, Any]:
    return {"object": OBJ, "field": field, "class": "money", "value": value, "claim_age_s": 900}


def _rows(deployment: Deployment, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in read_query(deployment.settings, sql, params or None).rows]


def _conversation(producer: Producer, conversation_id: str, **kw: Any) -> Conversation:
    return Conversation(
        space="acme", source="whatsapp", agent="sales-assistant",
        handle={"type": "phone_e164", "value": "+5511900005678"},
        conversation_id=conversation_id, contract=RETAIL, producer=producer,
        now=lambda: NOW, language="pt", context="chat", **kw,
    )  # fmt: skip


async def _async_agent(producer: Producer, tokens: dict[str, str]) -> list[dict[str, Any]]:
    """An asyncio agent: two turns, one in count mode, one through the guard."""
    conv = _conversation(producer, "wa-async")
    records: list[dict[str, Any]] = []
    async with conv.turn() as frame:
        frame.record_call("search_products", [_price(189.9), _price(249.9, "price_list")])
        shown = frame.interact({
            "kind": "presented", "list_id": "l1", "list_kind": "search", "visible_k": 2,
            "items": [{"pos": 1, "ref": OBJ}, {"pos": 2, "ref": "item_variant:acme:992"}],
        })  # fmt: skip
        tokens["valid"] = exposure_token(shown["exposure_id"], 1)
        tokens["forged"] = exposure_token(
            shown["exposure_id"], 2, space="acme", key="not-acme-s-key-000000"
        )
        frame.measure("search_products", sent=2, results_checked=6, violations=1, unverifiable=1)
        conv.agent(
            "De R$ 249,90 por R$ 189,90. A entrega chega em 5 dias úteis. "
            "Reservei o tamanho M para você."
        )
    records.append(frame.record)  # type: ignore[arg-type]
    async with conv.turn() as frame:
        frame.record_read(OBJ, [_price(199.9)], at=NOW - timedelta(hours=1))
        frame.record_call("search_products", [_price(189.9)])
        guarded = conv.claims.guard_text("Esse tênis sai por R$ 199,90 hoje.")
        conv.agent(guarded.text)
    records.append(frame.record)  # type: ignore[arg-type]
    # A retried publish of the same record: the same key, so a duplicate, not a second turn.
    await producer.publish(records[-1])
    await producer.flush()
    return records


def _outcome(n: int, token: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "outcome", "space_id": "acme", "idempotency_key": f"sdk-outcome-{n}",
        "handle": {"type": "phone_e164", "value": "+5511900005678"}, "source": "web",
        "occurred_at": (NOW + timedelta(minutes=2)).isoformat(), "outcome": "purchase",
        "ref": OBJ, "order_id": f"ord-{n}",
    }  # fmt: skip
    return item | ({"exposure_token": token} if token is not None else {})


def test_sdk_turns_and_tokens_through_the_worker(
    deployment_factory: Any, loop_thread: LoopThread
) -> None:
    deployment: Deployment = deployment_factory()
    assert deployment.settings.space("acme").token_keys()[0] == EXPOSURE_KEYS["acme"][0].encode()  # type: ignore[union-attr]
    deployment.worker.start()
    producer = Producer(deployment.settings)
    loop_thread.run(producer.start())
    try:
        tokens: dict[str, str] = {}
        records = loop_thread.run(_async_agent(producer, tokens))
        # A sync agent in this thread: its turn goes out through the producer's loop.
        conv = _conversation(producer, "wa-sync")
        with conv.turn() as frame:
            frame.record_read(OBJ, [{"object": OBJ, "field": "stock", "class": "count",
                                     "value": 3, "claim_age_s": 600}])  # fmt: skip
            conv.agent("Restam 3 unidades em estoque. Sai por R$ 189,90.")
        records.append(frame.record)
        unsigned = tokens["valid"].rsplit(".", 1)[0] + "." + "x" * 22  # right shape, no MAC
        outcomes = [
            _outcome(1, tokens["valid"]),
            _outcome(2, tokens["forged"]),
            _outcome(3, unsigned),
            _outcome(4, tokens["valid"][:-5]),  # cut short: malformed
            _outcome(5, exposure_token(uuid7(), 1, space="lumen", key=EXPOSURE_KEYS["lumen"][0])),
            _outcome(6, None),
        ]
        for item in outcomes:
            loop_thread.run(producer.publish(item))
        loop_thread.run(producer.flush())
    finally:
        loop_thread.run(producer.stop())
    deployment.drain()

    # (a) the verdicts the SDK computed are the ones the store holds and rolls up
    assert {r["turn_id"]: [(c["category"], c["verdict"], c["action"]) for c in r["claims"]]
            for r in records} == {
        "wa-async-t1": [("price", "matched", "none"), ("price", "matched", "none"),
                        ("deadline", "no_evidence", "warn"),  # no shipping_quote call
                        ("action_promise", "no_evidence", "warn")],  # no reserve_item call
        "wa-async-t2": [("price", "stale", "rewrite")],
        "wa-sync-t1": [("stock", "matched", "none"), ("price", "unsupported", "warn")],
    }  # fmt: skip
    sdk_claims = sorted(
        (r["turn_id"], i, c["category"], c["verdict"], c["action"], c["value"] or "")
        for r in records
        for i, c in enumerate(r["claims"])
    )
    stored = _rows(
        deployment,
        "SELECT turn_id, claim_index, category, verdict, action, value FROM turn_claims "
        "ORDER BY turn_id, claim_index",
    )
    assert sorted(stored) == sdk_claims
    expected: dict[tuple[str, str], int] = {}
    for r in records:
        for c in r["claims"]:
            key = (c["category"], c["verdict"])
            expected[key] = expected.get(key, 0) + 1
    rolled = _rows(
        deployment,
        "SELECT category, verdict, sum(claims), sum(evidenced) FROM context_use_claims "
        "WHERE space_id = 'acme' GROUP BY category, verdict",
    )
    assert {(c, v): int(n) for c, v, n, _ in rolled} == expected
    standing = {"matched", "quoted_found", "anchored"}
    assert all(int(e) == (int(n) if v in standing else 0) for _, v, n, e in rolled)
    turns = _rows(
        deployment,
        "SELECT turn_id, contract_version, guard_acted, guard_budget_exceeded, claims, "
        "interactions, constraints FROM turns ORDER BY turn_id",
    )
    assert turns == sorted(
        (r["turn_id"], "retail-2026-11", r["guard_acted"], False, len(r["claims"]),
         len(r["interactions"]), len(r["constraints"]))
        for r in records
    )  # fmt: skip
    assert [t[2] for t in turns] == [False, True, False]  # the guard rewrote turn 2
    assert len(turns) == 3  # the retried publish was a duplicate

    # (b) every outcome is kept and counted; only the valid token attributes
    exposure_id = tokens["valid"].split(".")[1]
    by_order = {
        o: (s, x, int(p))
        for o, s, x, p in _rows(
            deployment,
            "SELECT order_id, token_status, exposure_id, exposure_pos FROM outcomes",
        )
    }
    assert by_order == {
        "ord-1": ("valid", exposure_id, 1),
        "ord-2": ("invalid", "", 0),
        "ord-3": ("invalid", "", 0),
        "ord-4": ("malformed", "", 0),
        "ord-5": ("invalid", "", 0),
        "ord-6": ("absent", "", 0),
    }
    assert deployment.dead_letters() == {}


def test_a_sync_agent_with_sync_producer_lands_every_turn_with_its_language(
    deployment_factory: Any,
) -> None:
    from turnstream.sdk import SyncProducer

    deployment: Deployment = deployment_factory()
    deployment.worker.start()
    with SyncProducer(lambda: Producer(deployment.settings)) as producer:
        conv = _conversation(producer, "wa-syncprod")  # type: ignore[arg-type]
        for n, (language, reply) in enumerate(
            [("pt", "Restam 3 unidades em estoque."), ("en", "Only 3 left in stock.")]
        ):
            with conv.turn(language=language) as frame:  # a plain `with`: waits for the ack
                frame.record_read(OBJ, [{"object": OBJ, "field": "stock", "class": "count",
                                         "value": 3, "claim_age_s": 600}])  # fmt: skip
                conv.agent(reply)
            assert frame.record is not None and frame.record["language"] == language, n
    deployment.drain()
    turns = _rows(
        deployment,
        "SELECT turn_id, language FROM turns WHERE conversation_id = 'wa-syncprod' "
        "ORDER BY turn_id",
    )
    assert turns == [("wa-syncprod-t1", "pt"), ("wa-syncprod-t2", "en")]
    claims = _rows(
        deployment,
        "SELECT turn_id, language, verdict FROM turn_claims WHERE turn_id LIKE 'wa-syncprod-%' "
        "ORDER BY turn_id",
    )
    assert claims == [("wa-syncprod-t1", "pt", "matched"), ("wa-syncprod-t2", "en", "matched")]
