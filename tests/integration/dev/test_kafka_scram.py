"""The local SASL broker's SCRAM credentials follow its password files on every ``up``
(``turnstream_dev/kafka_scram.py``): a rotated password replaces the old one, and a user
whose file is gone loses its credentials."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaError

from turnstream_dev import LocalKafka, free_ports

pytestmark = pytest.mark.integration


def _logs_in(kafka: LocalKafka, user: str, password: str, mechanism: str) -> bool:
    """Whether ``user`` with ``password`` is served a metadata request over ``mechanism``."""

    async def attempt() -> bool:
        admin = AIOKafkaAdminClient(
            bootstrap_servers=kafka.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism=mechanism,
            sasl_plain_username=user,
            sasl_plain_password=password,
            request_timeout_ms=5000,
        )
        try:
            await asyncio.wait_for(admin.start(), 15)
            await asyncio.wait_for(admin.describe_cluster(), 15)
        except (KafkaError, TimeoutError):
            return False
        finally:
            await admin.close()
        return True

    return asyncio.run(attempt())


MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")


def test_scram_follows_the_password_files_on_every_up(tmp_path: Path) -> None:
    port, controller_port = free_ports(2)
    kafka = LocalKafka(
        home=tmp_path / "kafka",
        port=port,
        controller_port=controller_port,
        sasl_users=("w2", "gone"),
    )
    kafka.up(timeout=120)
    try:
        old = kafka.users()
        for mechanism in MECHANISMS:
            assert _logs_in(kafka, "w2", old["w2"], mechanism)
            assert _logs_in(kafka, "gone", old["gone"], mechanism)
        # Rotate w2's password, drop gone's file; `up` on the running broker applies both.
        kafka.password_file("w2").write_text("a-new-password-of-w2\n")
        kafka.password_file("gone").unlink()
        said: list[str] = []
        again = LocalKafka(home=kafka.home, port=port, controller_port=controller_port)
        again.up(timeout=60, progress=said.append)
        assert any("SCRAM takes them now, PLAIN after `down` and `up`" in line for line in said)
        for mechanism in MECHANISMS:
            assert _logs_in(kafka, "w2", "a-new-password-of-w2", mechanism)
            assert not _logs_in(kafka, "w2", old["w2"], mechanism)
            assert not _logs_in(kafka, "gone", old["gone"], mechanism)
    finally:
        kafka.down()
