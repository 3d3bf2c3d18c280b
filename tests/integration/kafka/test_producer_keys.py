"""Gates on the real broker: a broker that takes SASL clients only, a worker whose every
client authenticates, and producers bound to their space by its keys (``core/signing.py``).

One broker of the test's own with SASL (``sasl_broker``), one worker on it (user ``alice``,
SCRAM-SHA-512), two keyed spaces ``a`` and ``b``."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.adapters.worker_client import read_query
from turnstream.config import BrokerSecurity, BrokerSettings, Settings
from turnstream.core.signing import HEADER, sign
from turnstream.errors import TurnstreamError
from turnstream.models.deadletter import DeadLetter
from turnstream_dev import LocalKafka
from turnstream_dev.deployment import Deployment, new_deployment

pytestmark = pytest.mark.integration

A_KEY = "producer-key-of-space-a-0001"
A_ERASE = "erase-key-of-space-a-00000001"
B_KEY = "producer-key-of-space-b-0001"
B_ERASE = "erase-key-of-space-b-00000001"

SPACES = f"""
[spaces.a]
features = ["signals", "turns"]
producer_keys = ["{A_KEY}"]
erase_keys = ["{A_ERASE}"]

[spaces.b]
features = ["signals", "turns"]
producer_keys = ["{B_KEY}"]
erase_keys = ["{B_ERASE}"]
"""


def _security(kafka: LocalKafka, user: str, mechanism: str = "SCRAM-SHA-512") -> str:
    return (
        f'[broker.security]\nprotocol = "SASL_PLAINTEXT"\nmechanism = "{mechanism}"\n'
        f'username = "{user}"\npassword = "{kafka.users()[user]}"\n'
    )


@pytest.fixture
def keyed(sasl_broker: LocalKafka, tmp_path: Path) -> Iterator[Deployment]:
    """A worker on the SASL broker, as ``alice``, with the keyed spaces ``a`` and ``b``."""
    deployment = new_deployment(
        sasl_broker.bootstrap, tmp_path, extra=SPACES + _security(sasl_broker, "alice")
    )
    sasl_broker.grant(deployment.settings.worker)  # the ACLs of its topics and groups
    try:
        deployment.worker.start()
        yield deployment
    finally:
        deployment.worker.stop()


def _pref(space: str, key: str, profile: str = "p-1", **changes: Any) -> bytes:
    item = {
        "type": "interaction",
        "space_id": space,
        "idempotency_key": key,
        "profile_id": profile,
        "source": "web",
        "occurred_at": "2026-11-29T10:00:00Z",
        "interaction": {
            "kind": "preference",
            "attr": "item_variant.color",
            "op": "not_in",
            "values": ["black"],
            "strength": "must_not",
            "source": "stated",
        },
    }
    item.update(changes)
    return json.dumps(item).encode()


def _erase(space: str, key: str, profile: str = "p-1") -> bytes:
    return json.dumps(
        {
            "type": "command",
            "space_id": space,
            "idempotency_key": key,
            "profile_id": profile,
            "source": "crm",
            "occurred_at": "2026-11-29T11:00:00Z",
            "command": "erase",
        }
    ).encode()


def _send(settings: Settings, records: list[tuple[str, bytes, str | None]]) -> None:
    """Send (item type, value, key to sign with or None) as a hostile client would: with
    the broker credentials of ``settings``, its own headers, no validation."""
    names = TopicNames(settings.worker.topic_prefix)

    async def run() -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=settings.broker.bootstrap, acks="all", **client_options(settings)
        )
        await producer.start()
        try:
            for kind, value, key in records:
                headers = [(HEADER, sign(value, key.encode()))] if key else None
                await producer.send(names.input(kind), value, key=b"p", headers=headers)
            await producer.flush()
        finally:
            await producer.stop()

    asyncio.run(run())


def _rows(deployment: Deployment, sql: str) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in read_query(deployment.settings, sql).rows]


def _letters(deployment: Deployment, count: int) -> list[DeadLetter]:
    settings = deployment.settings

    async def read() -> list[DeadLetter]:
        consumer = AIOKafkaConsumer(
            TopicNames(settings.worker.topic_prefix).dead_letters,
            bootstrap_servers=settings.broker.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **client_options(settings),
        )
        await consumer.start()
        letters: list[DeadLetter] = []
        try:
            while len(letters) < count:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
                for batch in batches.values():
                    letters += [DeadLetter.model_validate_json(m.value) for m in batch]
        finally:
            await consumer.stop()
        return letters

    return asyncio.run(read())


def _as(deployment: Deployment, **security: Any) -> Settings:
    """The deployment's settings with other broker credentials (none: PLAINTEXT)."""
    broker = BrokerSettings(
        bootstrap=deployment.settings.broker.bootstrap, security=BrokerSecurity(**security)
    )
    return deployment.settings.model_copy(update={"broker": broker})


def test_a_client_without_credentials_is_refused_and_one_with_them_lands(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    async def publish(settings: Settings) -> None:
        async with Producer(settings) as producer:
            await producer.publish(_pref("a", "lands-1"))

    wrong = {"protocol": "SASL_PLAINTEXT", "username": "alice", "password": "not-alice-s"}
    for refused in (_as(keyed), _as(keyed, **wrong)):
        with pytest.raises(TurnstreamError, match="cannot reach the Kafka broker"):
            asyncio.run(publish(refused))
    # Bob, on PLAIN, through the SDK's producer (which signs with a's key): it lands,
    # through the worker, whose every client is alice's on SCRAM-SHA-512.
    bob = {
        "protocol": "SASL_PLAINTEXT",
        "mechanism": "PLAIN",
        "username": "bob",
        "password": sasl_broker.users()["bob"],
    }
    asyncio.run(publish(_as(keyed, **bob)))
    keyed.drain()
    assert _rows(keyed, "SELECT space_id, idempotency_key FROM interactions") == [("a", "lands-1")]


def test_a_credential_of_space_a_lands_nothing_in_space_b(keyed: Deployment) -> None:
    # What a hostile producer holding a's keys (and the broker's credentials) can send.
    forged = [
        ("interaction", _pref("b", "b-1", profile="victim"), A_KEY),  # b's item, a's key
        ("command", _erase("b", "b-erase", profile="victim"), A_ERASE),  # b's erase, a's
        ("interaction", _pref("b", "b-2", profile="victim"), None),  # unsigned
        ("command", _erase("a", "a-erase-1", profile="p-a"), A_KEY),  # erase, producer key
    ]
    tampered_value = _pref("a", "a-tampered")
    _send(keyed.settings, forged)
    names = TopicNames(keyed.settings.worker.topic_prefix)

    async def tamper() -> None:  # signed, then a byte added: the signature no longer holds
        producer = AIOKafkaProducer(
            bootstrap_servers=keyed.settings.broker.bootstrap, **client_options(keyed.settings)
        )
        await producer.start()
        try:
            await producer.send_and_wait(
                names.input("interaction"),
                tampered_value + b" ",
                headers=[(HEADER, sign(tampered_value, A_KEY.encode()))],
            )
        finally:
            await producer.stop()

    asyncio.run(tamper())
    # Then the real items: b's own, with the idempotency key the forgery came with first,
    # a's own, and a's erase signed with a's erase key.
    _send(
        keyed.settings,
        [
            ("interaction", _pref("b", "b-1", profile="victim"), B_KEY),
            ("interaction", _pref("a", "a-1", profile="p-a"), A_KEY),
        ],
    )
    keyed.drain()
    _send(keyed.settings, [("command", _erase("a", "a-erase-2", profile="p-a"), A_ERASE)])
    keyed.drain()

    assert keyed.dead_letters() == {"bad_signature": 4, "unsigned": 1}
    # b holds its own item only (taken under the key the forgery came with first); had
    # the forged erase been applied, it would have been forgotten as erased.
    assert _rows(keyed, "SELECT idempotency_key FROM interactions WHERE space_id = 'b'") == [
        ("b-1",)
    ]
    # a's erase signed with a's erase key erased a's person; the one signed with a
    # producer key did not come first.
    assert _rows(keyed, "SELECT count() FROM interactions WHERE space_id = 'a'") == [(0,)]
    # Each dead letter keeps its reason and the original bytes, as sent.
    letters = _letters(keyed, 5)
    assert sorted(letter.reason for letter in letters) == ["bad_signature"] * 4 + ["unsigned"]
    sent = {value for _, value, _ in forged} | {tampered_value + b" "}
    assert {base64.b64decode(letter.original) for letter in letters} == sent


def test_the_profile_api_s_commands_are_signed_by_the_worker_and_land(keyed: Deployment) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{keyed.worker.web_port}/v1/profiles/p-9/traits/opt-out",
        data=json.dumps({"space_id": "b"}).encode(),
        headers={"Content-Type": "application/json", **keyed.headers()},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 202
    keyed.drain()
    assert _rows(keyed, "SELECT space_id, command FROM commands") == [("b", "opt_out")]
    assert keyed.dead_letters() == {}
