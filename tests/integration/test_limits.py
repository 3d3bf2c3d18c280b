"""Items at the contract's limits, through a real worker: each lands, or is refused with
a reason, and the worker goes on.

* a turn with the most claims, constraint measurements and interactions the models allow
  (1,000 each), its counts at the largest the columns hold;
* a presented list with the most items (1,000), on the last page, at the last position;
* an item of the contract's largest size (1 MiB): its accepted message, re-serialized
  with the defaults, is 1.5 MiB, past the broker's default 1 MiB, and crosses the
  accepted topic (created at 4 MiB) to the signals loop;
* the same item where the accepted topic was made elsewhere with the broker's default:
  refused with ``too_large`` before anything is written, its batch-mates land.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.chaos.helpers import read_topic
from turnstream.adapters.kafka.admin import ensure_topics
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.adapters.worker_client import read_query
from turnstream.models.common import UINT16_MAX, UINT32_MAX
from turnstream.models.items import MAX_ITEM_BYTES
from turnstream_dev.deployment import Deployment

#: Yesterday: inside the raw tables' retention whenever the test runs (core/time_edges.py).
DAY = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
pytestmark = pytest.mark.integration

FAST_TRIGGERS = "[signals]\nquiet_seconds = 1.0\noldest_pending_seconds = 3.0\n"
EXPOSURE = "0190f5a2-7b3c-7def-8123-456789abcdef"
BROKER_DEFAULT = 1_048_588  # message.max.bytes of a broker left as installed


def _envelope(key: str, profile: str = "p-limits") -> dict[str, Any]:
    return {
        "space_id": "acme",
        "idempotency_key": key,
        "profile_id": profile,
        "source": "whatsapp",
        "occurred_at": f"{DAY}T10:00:00Z",
    }


def largest_turn() -> bytes:
    """1,000 claims, 1,000 constraint measurements at the UInt32 limit, 1,000 interactions."""
    claim = {"category": "preço", "class": "money", "nature": "computed", "role": "price_sale",
             "span": [0, 9], "value": "R$ 199,90", "verdict": "matched", "action": "none",
             "evidence": {"kind": "value", "call": "c1", "field": "price"}}  # fmt: skip
    call = {"tool": "search_plans", "sent": UINT32_MAX, "results_checked": UINT32_MAX,
            "violations": UINT32_MAX - 1, "unverifiable": 1, "relaxed": True}  # fmt: skip
    turn = {
        "type": "turn",
        **_envelope("turn-largest"),
        "turn_id": "t-largest",
        "agent": "vendas",
        "claims": [claim] * 1000,
        "constraints": [call] * 1000,
        "interactions": [
            {"kind": "engaged", "ref": f"item:{i}", "pos": UINT32_MAX, "action": "click"}
            for i in range(1000)
        ],
    }
    raw = json.dumps(turn, ensure_ascii=False).encode()
    assert len(raw) <= MAX_ITEM_BYTES
    return raw


def largest_list() -> bytes:
    """A presented list of 1,000 items on page 65,535, the last at position 2^32 - 1."""
    items = [
        {"pos": UINT32_MAX - 999 + i, "ref": f"item:{i}", "shown": {"cor": "preto", "preço": 9.9}}
        for i in range(1000)
    ]
    item = {
        "type": "interaction",
        **_envelope("list-largest"),
        "interaction": {"kind": "presented", "exposure_id": EXPOSURE, "list_id": "busca-1",
                        "list_kind": "search", "page": UINT16_MAX, "visible_k": 1000,
                        "delivered_at": f"{DAY}T10:00:00Z", "items": items},
    }  # fmt: skip
    return json.dumps(item, ensure_ascii=False).encode()


def one_mebibyte(key: str = "mib") -> bytes:
    """A turn of minimal presented items, as close under 1 MiB as it gets: the accepted
    message grows most for it (every item gains an empty ``shown``)."""

    def presented(j: int, count: int) -> dict[str, Any]:
        return {"kind": "presented", "exposure_id": f"{EXPOSURE[:24]}{j:012x}", "list_id": f"l{j}",
                "list_kind": "s",
                "delivered_at": f"{DAY}T10:00:00Z", "visible_k": 3,
                "items": [{"pos": i + 1, "ref": "r"} for i in range(count)]}  # fmt: skip

    def turn(n: int) -> dict[str, Any]:
        lists = [presented(j, min(1000, n - 1000 * j)) for j in range((n + 999) // 1000)]
        return {"type": "turn", **_envelope(key), "turn_id": "t-mib", "agent": "a",
                "interactions": lists}  # fmt: skip

    def dumps(value: Any) -> bytes:
        return json.dumps(value, separators=(",", ":")).encode()

    # The size of turn(n) without serializing it whole (the search asks ~18 sizes of
    # ~1 MiB): the empty turn, each full list (serialized once), the last list, commas.
    empty = len(dumps(turn(0)))
    full: list[int] = []

    def size(n: int) -> int:
        whole, rest = divmod(n, 1000)
        while len(full) < whole:
            full.append(len(dumps(presented(len(full), 1000))))
        lists = full[:whole] + ([len(dumps(presented(whole, rest)))] if rest else [])
        return empty + sum(lists) + len(lists) - 1 if lists else empty

    lo, hi = 1, 200_000
    while lo < hi:  # the most items that stay within the limit
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if size(mid) <= MAX_ITEM_BYTES else (lo, mid - 1)
    raw = dumps(turn(lo))
    assert len(raw) == size(lo) and len(dumps(turn(lo + 1))) > MAX_ITEM_BYTES
    assert MAX_ITEM_BYTES - 64 < len(raw) <= MAX_ITEM_BYTES
    return raw


def small(key: str) -> bytes:
    item = {"type": "interaction", **_envelope(key, "p-small"),
            "interaction": {"kind": "engaged", "ref": "item:1", "action": "cart"}}  # fmt: skip
    return json.dumps(item).encode()


def _q(deployment: Deployment, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    return read_query(deployment.settings, sql, params).rows


def test_items_at_the_contract_limits_land(
    deployment_factory: Callable[..., Deployment],
) -> None:
    deployment = deployment_factory(extra=FAST_TRIGGERS)
    deployment.worker.start()
    big = one_mebibyte()
    deployment.publish([largest_turn(), largest_list(), big, small("after")])
    deployment.drain(timeout=180)
    deployment.drain_signals(timeout=180)

    assert deployment.dead_letters() == {}
    # A table's name is text of the query, never a parameter (the SQL gate judges names).
    count = "SELECT count() FROM {} WHERE turn_id = {{turn:String}}"
    assert _q(deployment, count.format("turn_claims"), turn="t-largest") == [(1000,)]
    calls = _q(
        deployment,
        "SELECT count(), min(sent), max(violations), max(call_index) FROM turn_constraints",
    )
    assert calls == [(1000, UINT32_MAX, UINT32_MAX - 1, 999)]
    assert _q(deployment, count.format("interactions"), turn="t-largest") == [(1000,)]
    presented = _q(
        deployment,
        "SELECT JSONExtractUInt(payload, 'page'), JSONLength(payload, 'items') "
        "FROM interactions WHERE idempotency_key = 'list-largest'",
    )
    assert presented == [(UINT16_MAX, 1000)]
    # The largest list's exposures were derived, positions and page as sent.
    exposures = _q(
        deployment,
        "SELECT count(), max(pos), max(page) FROM exposure_items FINAL "
        "WHERE exposure_id = {e:String} AND list_id = 'busca-1'",
        e=EXPOSURE,
    )
    assert exposures == [(1000, UINT32_MAX, UINT16_MAX)]
    # The 1 MiB turn: its rows, and its accepted message, past 1 MiB, went through.
    lists = len(json.loads(big)["interactions"])
    assert _q(deployment, count.format("interactions"), turn="t-mib") == [(lists,)]
    assert _q(deployment, "SELECT count() FROM interactions WHERE idempotency_key = 'after'") == [
        (1,)
    ]
    status = deployment.worker.stats()
    assert status["ingest"]["state"] == "running" and status["derivation"]["state"] == "running"
    sizes = _accepted_sizes(deployment)
    assert max(sizes) > 1_048_576, sorted(sizes)[-3:]


def test_an_accepted_topic_that_takes_less_refuses_the_largest_item_with_a_reason(
    deployment_factory: Callable[..., Deployment],
) -> None:
    deployment = deployment_factory()
    names = TopicNames(deployment.settings.worker.topic_prefix)
    # Made before the worker, with the broker's default: the worker keeps it as it is.
    asyncio.run(
        ensure_topics(
            deployment.settings.broker.bootstrap,
            [names.accepted],
            4,
            configs={names.accepted: {"max.message.bytes": str(BROKER_DEFAULT)}},
        )
    )
    deployment.worker.start()
    deployment.publish([small("before"), one_mebibyte("too-big"), small("after")])
    deployment.drain(timeout=180)

    assert deployment.dead_letters() == {"too_large": 1}
    [(key, message)] = _q(deployment, "SELECT idempotency_key, message FROM dead_letters")
    assert key == "too-big"
    assert "accepted message would be" in message and f"takes {BROKER_DEFAULT - 1024}" in message
    landed = _q(deployment, "SELECT idempotency_key FROM interactions ORDER BY 1")
    assert landed == [("after",), ("before",)]
    assert _q(deployment, "SELECT count() FROM turns") == [(0,)]
    assert deployment.worker.stats()["ingest"]["state"] == "running"


def _accepted_sizes(deployment: Deployment) -> list[int]:
    """The size of every message on the accepted topic."""
    names = TopicNames(deployment.settings.worker.topic_prefix)
    return [
        len(value) for _, value in read_topic(deployment.settings.broker.bootstrap, names.accepted)
    ]
