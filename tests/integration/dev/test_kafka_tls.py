"""TLS to the broker: a broker on SASL_SSL with a certificate made at its first start
(``openssl``), the producer SDK and a consumer configured by ``[broker.security]``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer

from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.errors import TurnstreamError
from turnstream_dev import LocalKafka

pytestmark = pytest.mark.integration

ITEM = {
    "type": "interaction",
    "space_id": "acme",
    "idempotency_key": "tls-1",
    "profile_id": "p-1",
    "source": "web",
    "occurred_at": "2026-11-29T10:00:00Z",
    "interaction": {"kind": "engaged", "ref": "item:1", "action": "click"},
}


def _settings(kafka: LocalKafka, **security: Any) -> Settings:
    return Settings.model_validate(
        {
            "broker": {"bootstrap": kafka.bootstrap, "security": security},
            "identity": {"secret": "tls-test-secret"},
            "worker": {"topic_prefix": "tls"},
        }
    )


def _publish(settings: Settings) -> None:
    async def run() -> None:
        async with Producer(settings) as producer:
            await producer.publish(ITEM)

    asyncio.run(run())


def _read_one(settings: Settings) -> bytes:
    async def run() -> bytes:
        consumer = AIOKafkaConsumer(
            TopicNames("tls").input("interaction"),
            bootstrap_servers=settings.broker.bootstrap,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **client_options(settings),
        )
        await consumer.start()
        try:
            message = await asyncio.wait_for(consumer.getone(), 30)
            return message.value
        finally:
            await consumer.stop()

    return asyncio.run(run())


def test_sasl_ssl_with_the_broker_s_ca_lands_and_without_it_is_refused(
    tls_broker: LocalKafka,
) -> None:
    alice = {
        "protocol": "SASL_SSL",
        "username": "alice",
        "password": tls_broker.users()["alice"],
    }
    ca = str(tls_broker.ca_path)
    refused = [
        # The system's CAs do not know the broker's: the certificate does not verify.
        _settings(tls_broker, **alice),
        # Without TLS: the broker's listener speaks TLS only.
        _settings(tls_broker, **{**alice, "protocol": "SASL_PLAINTEXT"}),
        # TLS, the right CA, no credentials.
        _settings(tls_broker, protocol="SSL", ssl_cafile=ca),
    ]
    for settings in refused:
        with pytest.raises(TurnstreamError, match="cannot reach the Kafka broker"):
            _publish(settings)
    good = _settings(tls_broker, **alice, ssl_cafile=ca)
    tls_broker.grant(good.worker)  # alice: the worker's ACLs on the topics of "tls"
    _publish(good)
    assert json.loads(_read_one(good)) == ITEM


def test_the_certificate_and_the_ca_are_made_once(tls_broker: LocalKafka, tmp_path: Path) -> None:
    ca = tls_broker.ca_path.read_bytes()
    tls_broker.down()
    tls_broker.up(timeout=180)
    assert tls_broker.ca_path.read_bytes() == ca
    assert tls_broker.status().answering
