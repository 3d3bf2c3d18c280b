"""No raw handle reaches ClickHouse: every column of every table of the database is
searched for every handle value a run used (phones, e-mails, external ids), valid or not.

The run is the sample day (people known by handle, and some invalid lines carrying
handles) plus handle-bearing items that are refused for a reason (a malformed handle, an
unknown space, a space with signals off) or accepted in an unusual spelling (an e-mail in
capitals is normalized before hashing; neither spelling may be stored). The search is
case-insensitive and also looks for phone numbers without their ``+``. The fan-out
topics (``accepted``, ``inferences``) are searched too; the dead-letter topic keeps the
original bytes by design and is not.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from tests.chaos.helpers import Factory, q, scalar
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.core.sql_gate import PRIVATE_TABLES
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import sample_day

pytestmark = pytest.mark.chaos(budget=240)

SIGNALS = """
[signals]
quiet_seconds = 1.0
oldest_pending_seconds = 3.0
"""
_HANDLE = re.compile(rb'"handle":\s*\{\s*"type":\s*"[^"]*",\s*"value":\s*"([^"\\]+)"')
#: ClickHouse takes at most 255 needles per multiSearch call.
CHUNK = 200


def _extra_lines() -> list[bytes]:
    """Handle-bearing items that are refused, or accepted in an unusual spelling."""
    at = (datetime.now(UTC) - timedelta(hours=1)).isoformat(timespec="seconds")
    at = at.replace("+00:00", "Z")

    def item(n: int, space: str, handle: dict[str, str], **fields: object) -> bytes:
        body = {
            "type": "interaction",
            "space_id": space,
            "idempotency_key": f"privacy-{n}",
            "handle": handle,
            "source": "whatsapp",
            "conversation_id": f"wa-privacy-{n}",
            "occurred_at": at,
            "interaction": {
                "kind": "preference",
                "attr": "item_variant.color",
                "op": "in",
                "values": ["navy"],
                "strength": "prefer",
                "source": "stated",
            },
            **fields,
        }
        return json.dumps(body, separators=(",", ":")).encode()

    phone = {"type": "phone_e164", "value": "+5521987650001"}
    return [
        item(1, "acme", {"type": "email", "value": "Marta.Quintela@Example.COM"}),
        item(2, "lumen", {"type": "email", "value": "ROBERTO.VAZ@PROVEDOR.COM.BR"}),
        item(3, "acme", {"type": "phone_e164", "value": "+55 21 98765-0002"}),  # malformed
        item(4, "acme", {"type": "email", "value": "beatriz.lemos@@example.com"}),  # malformed
        item(5, "acme", {"type": "email", "value": " helena.prado@example.com"}),  # malformed
        item(6, "ghost", {"type": "phone_e164", "value": "+5521987650003"}),  # unknown space
        item(7, "vida", {"type": "external_id", "value": "vida-member-77123"}),  # signals off
        item(8, "acme", phone, occurred_at="2026-02-30T10:00:00Z"),  # invalid time
        item(9, "acme", phone),  # the same person, accepted
        item(10, "acme", {"type": "external_id", "value": "CRM-Acme-000981"}),
    ]


def _handles(lines: list[bytes]) -> set[str]:
    """Every handle value in the lines (also in lines that are not valid JSON), and
    every phone number without its ``+`` (a raw handle all the same)."""
    values = {m.decode() for raw in lines for m in _HANDLE.findall(raw)}
    values |= {v.strip() for v in values}
    values |= {v.lstrip("+") for v in values if v.startswith("+")}
    return {v for v in values if v}


def _scan_tables(deployment: Deployment, needles: list[str]) -> tuple[dict[str, int], dict]:
    """Rows per table, and the columns where a needle was found with their hit counts."""
    database = deployment.settings.store.database
    columns: dict[str, list[str]] = {}
    for table, name in q(
        deployment,
        "SELECT table, name FROM system.columns WHERE database = {database:String} "
        "ORDER BY table, position",
        {"database": database},
    ):
        columns.setdefault(table, []).append(name)
    rows: dict[str, int] = {}
    hits: dict[str, int] = {}
    for table, names in columns.items():
        if table in PRIVATE_TABLES:
            # The worker's SQL refuses it; it holds the profile id and the words of values
            # stated on sensitive fields (core/rows.py), never a handle.
            continue
        rows[table] = scalar(deployment, f"SELECT count() FROM {database}.`{table}`")
        for start in range(0, len(needles), CHUNK):
            found = q(
                deployment,
                "WITH {needles:Array(String)} AS needles SELECT "
                + ", ".join(
                    f"countIf(multiSearchAnyCaseInsensitive(toString(`{c}`), needles))"
                    for c in names
                )
                + f" FROM {database}.`{table}`",
                {"needles": needles[start : start + CHUNK]},
            )[0]
            for name, count in zip(names, found, strict=True):
                if int(count):
                    hits[f"{table}.{name}"] = hits.get(f"{table}.{name}", 0) + int(count)
    return rows, hits


def _scan_topics(deployment: Deployment, needles: list[str]) -> tuple[int, list[str]]:
    names = TopicNames(deployment.settings.worker.topic_prefix)
    lowered = [n.lower().encode() for n in needles]

    async def read() -> tuple[int, list[str]]:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=deployment.settings.broker.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        admin = AIOKafkaAdminClient(bootstrap_servers=deployment.settings.broker.bootstrap)
        await admin.start()
        try:
            described = await admin.describe_topics([names.accepted, names.inferences])
        finally:
            await admin.close()
        partitions = [
            TopicPartition(d["topic"], p["partition"]) for d in described for p in d["partitions"]
        ]
        await consumer.start()
        seen, found = 0, []
        try:
            consumer.assign(partitions)
            ends = await consumer.end_offsets(partitions)
            left = {tp: end for tp, end in ends.items() if end > 0}
            while left:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                for tp, batch in batches.items():
                    for message in batch:
                        seen += 1
                        body = (message.value or b"").lower() + (message.key or b"").lower()
                        found += [f"{tp.topic}@{message.offset}" for n in lowered if n in body]
                    if batch and batch[-1].offset + 1 >= left.get(tp, 0):
                        left.pop(tp, None)
        finally:
            await consumer.stop()
        return seen, found

    return asyncio.run(read())


def test_no_raw_handle_in_any_column_of_any_table(deployment_factory: Factory) -> None:
    day = datetime.now(UTC).date() - timedelta(days=1)
    lines = sample_day(day) + _extra_lines()
    needles = sorted(_handles(lines))
    assert len(needles) > 60  # phones, e-mails and external ids of the sample, and ours
    deployment = deployment_factory(extra=SIGNALS)
    deployment.worker.start()
    deployment.publish(lines)
    deployment.drain()
    deployment.drain_signals()

    rows, hits = _scan_tables(deployment, needles)
    assert hits == {}, f"raw handles found in ClickHouse: {hits}"
    # The search finds what is there (case aside): a key we sent, in capitals.
    _, control = _scan_tables(deployment, ["PRIVACY-9"])
    assert {"interactions.idempotency_key", "stated.origin"} <= set(control), control
    # The search covered tables that hold something: raw rows, dead letters (some with
    # handles in their bytes) and what the derivation driver derived.
    filled = {t for t, n in rows.items() if n}
    assert {
        "turns",
        "interactions",
        "outcomes",
        "commands",
        "dead_letters",
        "idempotency_keys",
        "stated",
        "exposure_items",
        "inferences",
        "signal_state",
    } <= filled, sorted(filled)
    assert rows["dead_letters"] >= 8

    seen, found = _scan_topics(deployment, needles)
    assert seen >= rows["turns"] + rows["outcomes"] + rows["commands"]  # one each at least
    assert found == [], f"raw handles found on fan-out topics: {found[:10]}"
