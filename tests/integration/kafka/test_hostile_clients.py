"""A hostile client against the documented secured deployment, on the real broker
(``sasl_broker``: SASL, the authorizer, the ACLs of docs/security.md) and a real worker
with the keyed spaces ``a`` and ``b``: what a producer's Kafka user (``bob``) and
space ``a``'s producer key let it do, and what they do not. Cross-space keys, unsigned
records, erases with a producer key, tampered bytes and wrong passwords:
``test_producer_keys.py``; the controller's listener, the accepted topic, reading the
inputs and joining the worker's group: ``tests/integration/dev/test_kafka_acls.py``."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic, RecordsToDelete
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import KafkaError, MessageSizeTooLargeError
from aiokafka.structs import OffsetAndMetadata

from tests.fixtures.kafka import PRODUCERS
from tests.integration.kafka.test_producer_keys import A_KEY, B_KEY, SPACES, _pref, _rows, _security
from turnstream.adapters.kafka.topology import INPUT_TOPIC_BYTES, TopicNames
from turnstream.core.signing import HEADER, PREFIX, sign
from turnstream_dev import LocalKafka
from turnstream_dev.deployment import Deployment, new_deployment

pytestmark = pytest.mark.integration

PRODUCER = PRODUCERS[0]


@pytest.fixture(scope="module")
def keyed(
    sasl_broker: LocalKafka, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Deployment]:
    """A worker on the SASL broker, as ``alice``, with the keyed spaces ``a`` and ``b``
    (one for the module: each test's items have keys of their own)."""
    deployment = new_deployment(
        sasl_broker.bootstrap,
        tmp_path_factory.mktemp("hostile"),
        extra=SPACES + _security(sasl_broker, "alice"),
    )
    sasl_broker.grant(deployment.settings.worker)
    try:
        deployment.worker.start()
        yield deployment
    finally:
        deployment.worker.stop()


def _bob(kafka: LocalKafka) -> dict[str, Any]:
    """The producer's credentials, as the docs hand them to an agent backend."""
    return kafka.client_options(PRODUCER, "SCRAM-SHA-512")


def _names(keyed: Deployment) -> TopicNames:
    return TopicNames(keyed.settings.worker.topic_prefix)


async def _produce(
    kafka: LocalKafka,
    records: list[tuple[str, bytes, list[tuple[str, bytes]] | None]],
    **options: Any,
) -> None:
    """Send (topic, value, headers) as bob, with no validation and headers of his own."""
    producer = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap, acks="all", **_bob(kafka), **options
    )
    await producer.start()
    try:
        for topic, value, headers in records:
            await producer.send_and_wait(topic, value, key=b"p", headers=headers)
    finally:
        await producer.stop()


def _signed(value: bytes, key: str) -> list[tuple[str, bytes]]:
    return [(HEADER, sign(value, key.encode()))]


def _letters_of(keyed: Deployment, prefix: str) -> dict[str, str]:
    """idempotency key -> reason of the dead letters whose key starts with ``prefix``."""
    sql = (
        "SELECT idempotency_key, reason FROM dead_letters "
        f"WHERE startsWith(idempotency_key, '{prefix}')"
    )
    return dict(_rows(keyed, sql))


def _landed(keyed: Deployment, prefix: str) -> list[tuple[Any, ...]]:
    sql = (
        "SELECT space_id, idempotency_key FROM interactions "
        f"WHERE startsWith(idempotency_key, '{prefix}') ORDER BY 2"
    )
    return _rows(keyed, sql)


def test_forged_signatures_and_header_tricks_are_dead_letters(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    names = _names(keyed)
    interactions, commands = names.input("interaction"), names.input("command")
    # b's item signed with a's key, sent through another input topic than its own.
    b_topic = _pref("b", "forge-topic", profile="victim")
    # A made-up signature of the right shape, and one of the wrong shape.
    b_random = _pref("b", "forge-random", profile="victim")
    b_short = _pref("b", "forge-short", profile="victim")
    # a's valid signature on a's item, then the body edited into b's (and re-signed with
    # a's key: a producer holds its own key only).
    a_value = _pref("a", "forge-edited", profile="victim")
    b_edited = a_value.replace(b'"space_id": "a"', b'"space_id": "b"')
    b_resigned = b_edited.replace(b"forge-edited", b"forge-resigned")
    # The space named twice: a first (what a's signer may have read), b last (what the
    # worker's parser keeps).
    b_twice = _pref("b", "forge-twice", profile="victim").replace(
        b'{"type"', b'{"space_id": "a", "type"', 1
    )
    # The header's name in other letters: no signature, even a valid one (b's key here,
    # which bob does not hold). Two headers: the first a forgery, the second a's valid
    # signature on a's item (the first is the signature).
    b_upper = _pref("b", "forge-upper", profile="victim")
    a_two = _pref("a", "forge-two-headers", profile="victim")
    records = [
        (commands, b_topic, _signed(b_topic, A_KEY)),
        (interactions, b_random, [(HEADER, PREFIX + bytes(range(32)))]),
        (interactions, b_short, [(HEADER, b"v1:")]),
        (interactions, b_edited, _signed(a_value, A_KEY)),
        (interactions, b_resigned, _signed(b_resigned, A_KEY)),
        (interactions, b_twice, _signed(b_twice, A_KEY)),
        (interactions, b_upper, [(HEADER.upper(), sign(b_upper, B_KEY.encode()))]),
        (interactions, a_two, [(HEADER, b"v1:" + bytes(32)), *_signed(a_two, A_KEY)]),
    ]
    asyncio.run(_produce(sasl_broker, records))
    keyed.drain()
    assert _letters_of(keyed, "forge-") == {
        "forge-topic": "bad_signature",
        "forge-random": "bad_signature",
        "forge-short": "bad_signature",
        "forge-edited": "bad_signature",
        "forge-resigned": "bad_signature",
        "forge-twice": "bad_signature",
        "forge-upper": "unsigned",
        "forge-two-headers": "bad_signature",
    }
    assert _landed(keyed, "forge-") == []


def test_a_replayed_record_is_a_duplicate_on_any_topic_and_partition(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    names = _names(keyed)
    value = _pref("a", "replay-now", profile="p-replay")
    signature = _signed(value, A_KEY)

    async def replay() -> None:
        await _produce(sasl_broker, [(names.input("interaction"), value, signature)])
        producer = AIOKafkaProducer(bootstrap_servers=sasl_broker.bootstrap, **_bob(sasl_broker))
        await producer.start()
        try:  # the same bytes and header, to every partition of another input topic
            for partition in range(4):
                await producer.send_and_wait(
                    names.input("turn"), value, partition=partition, headers=signature
                )
        finally:
            await producer.stop()

    asyncio.run(replay())
    keyed.drain()
    assert _landed(keyed, "replay-now") == [("a", "replay-now")]
    assert _letters_of(keyed, "replay-now") == {}


_EXPIRE_KEYS = """
import sys
from turnstream.adapters.clickhouse.store import Store
store = Store(sys.argv[1], sys.argv[2])
# As if the key had been taken when its item occurred, N days ago: the table's TTL
# applies at the merge.
store.command(
    "ALTER TABLE idempotency_keys UPDATE ingested_at = ingested_at - toIntervalDay("
    + sys.argv[3] + ") WHERE position(dedup_key, {key:String}) > 0",
    settings={"mutations_sync": 2},
    parameters={"key": sys.argv[4]},
)
store.command("OPTIMIZE TABLE idempotency_keys FINAL")
store.close()
"""


def test_a_record_replayed_while_its_date_is_still_accepted_is_a_duplicate(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    """A signed record (taken from a producer's log, or the network of a SASL_PLAINTEXT
    listener) sent again 35 days after it first landed: its ``occurred_at`` is inside the
    45 days the gate accepts, so its key must still be known."""
    days = 35
    occurred = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    value = _pref("a", "replay-late", profile="p-late", occurred_at=occurred)
    record = (_names(keyed).input("interaction"), value, _signed(value, A_KEY))
    settings = keyed.settings
    asyncio.run(_produce(sasl_broker, [record]))
    keyed.drain()
    assert _landed(keyed, "replay-late") == [("a", "replay-late")]
    keyed.worker.stop()
    try:
        subprocess.run(
            [
                sys.executable,
                "-c",
                _EXPIRE_KEYS,
                settings.store.dsn,
                settings.store.database,
                str(days),
                "replay-late",
            ],
            check=True,
            timeout=120,
        )
    finally:
        keyed.worker.start()
    asyncio.run(_produce(sasl_broker, [record]))
    keyed.drain()
    assert _landed(keyed, "replay-late") == [("a", "replay-late")]


def test_a_producer_reads_no_topic_and_changes_no_topic_group_or_config(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    names = _names(keyed)
    group = keyed.topology.ingest.group
    interactions = names.input("interaction")
    # Something for the worker's group to have committed, to move, and a dead letter.
    value = _pref("a", "acl-probe", profile="p-acl")
    unsigned = _pref("b", "acl-probe-unsigned", profile="p-acl")
    records = [(interactions, value, _signed(value, A_KEY)), (interactions, unsigned, None)]
    asyncio.run(_produce(sasl_broker, records))
    keyed.drain()

    async def committed() -> dict[TopicPartition, int]:
        admin = AIOKafkaAdminClient(
            bootstrap_servers=sasl_broker.bootstrap, **sasl_broker.client_options()
        )
        await admin.start()
        try:
            offsets = await admin.list_consumer_group_offsets(group)
        finally:
            await admin.close()
        return {tp: meta.offset for tp, meta in offsets.items()}

    before = asyncio.run(committed())
    assert before

    async def attempts() -> dict[str, str]:
        refused: dict[str, str] = {}
        admin = AIOKafkaAdminClient(bootstrap_servers=sasl_broker.bootstrap, **_bob(sasl_broker))
        await admin.start()
        try:
            calls = {
                "create a topic": admin.create_topics([NewTopic(f"{names.prefix}.evil", 400, 1)]),
                "delete an input topic": admin.delete_topics([interactions]),
                "add partitions": admin.create_partitions({interactions: NewPartitions(400)}),
                "alter a topic's config": admin.alter_configs(
                    [
                        ConfigResource(
                            ConfigResourceType.TOPIC, interactions, {"retention.ms": "1000"}
                        )
                    ]
                ),
                "read a topic's config": admin.describe_configs(
                    [ConfigResource(ConfigResourceType.TOPIC, interactions)]
                ),
                "delete records": admin.delete_records(
                    {TopicPartition(interactions, 0): RecordsToDelete(1)}, timeout_ms=5000
                ),
                "read the worker's offsets": admin.list_consumer_group_offsets(group),
            }
            for name, call in calls.items():
                refused[name] = await _refusal(call)
        finally:
            await admin.close()
        # Read the dead letters (bytes of every space), the accepted items, the offsets.
        for topic in (names.dead_letters, names.accepted, "__consumer_offsets"):
            consumer = AIOKafkaConsumer(
                bootstrap_servers=sasl_broker.bootstrap,
                auto_offset_reset="earliest",
                **_bob(sasl_broker),
            )
            await consumer.start()
            try:
                consumer.assign([TopicPartition(topic, 0)])
                # Refused, or nothing within 10 s (the worker's user reads them at once).
                refused[f"read {topic}"] = await _refusal(asyncio.wait_for(consumer.getone(), 10))
            finally:
                await consumer.stop()
        # Move the worker's group back to 0 (replay everything) or to the end (skip),
        # without joining it: a simple consumer's commit under the group's id.
        consumer = AIOKafkaConsumer(
            bootstrap_servers=sasl_broker.bootstrap,
            group_id=group,
            enable_auto_commit=False,
            **_bob(sasl_broker),
        )
        await consumer.start()
        try:
            consumer.assign(list(before))
            refused["commit the worker's offsets"] = await _refusal(
                consumer.commit({tp: OffsetAndMetadata(0, "") for tp in before})
            )
        finally:
            await consumer.stop()
        return refused

    refused = asyncio.run(attempts())
    assert {name: why for name, why in refused.items() if why == "done"} == {}
    assert asyncio.run(committed()) == before


async def _refusal(call: Any) -> str:
    """How the broker answered: the error's name, or ``done`` (nothing refused)."""
    try:
        result = await call
    except (KafkaError, TimeoutError) as exc:
        return type(exc).__name__
    errors = _error_codes(result)
    return f"error codes {sorted(errors)}" if errors else "done"


def _error_codes(result: Any) -> set[int]:
    """The non-zero error codes in an admin response (aiokafka returns some refusals in
    the response, as ``error_code=29``, rather than raising them)."""
    return {int(code) for code in re.findall(r"error_code=(-?\d+)", repr(result))} - {0}


def test_a_message_past_the_input_topic_s_limit_is_refused_by_the_broker(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    value = b"x" * (INPUT_TOPIC_BYTES + 1)
    with pytest.raises(MessageSizeTooLargeError):
        asyncio.run(
            _produce(
                sasl_broker,
                [(_names(keyed).input("interaction"), value, None)],
                max_request_size=4 * INPUT_TOPIC_BYTES,
            )
        )


@pytest.mark.parametrize(
    ("protocol", "mechanism"),
    [("PLAINTEXT", None), ("SASL_PLAINTEXT", "OAUTHBEARER"), ("SASL_SSL", "SCRAM-SHA-512")],
)
def test_a_client_without_the_listener_s_protocol_is_not_served(
    sasl_broker: LocalKafka, protocol: str, mechanism: str | None
) -> None:
    options: dict[str, Any] = {"security_protocol": protocol, "request_timeout_ms": 5000}
    if mechanism == "OAUTHBEARER":
        from aiokafka.abc import AbstractTokenProvider

        class Token(AbstractTokenProvider):
            async def token(self) -> str:
                return "not-a-token"

        options |= {"sasl_mechanism": mechanism, "sasl_oauth_token_provider": Token()}
    elif mechanism is not None:
        import ssl

        options |= {
            "sasl_mechanism": mechanism,
            "sasl_plain_username": PRODUCER,
            "sasl_plain_password": sasl_broker.users()[PRODUCER],
            "ssl_context": ssl.create_default_context(),
        }

    async def attempt() -> str:
        admin = AIOKafkaAdminClient(bootstrap_servers=sasl_broker.bootstrap, **options)
        try:
            await asyncio.wait_for(admin.start(), 20)
            await asyncio.wait_for(admin.describe_cluster(), 20)
        except (KafkaError, TimeoutError, OSError) as exc:
            return type(exc).__name__
        finally:
            await admin.close()
        return "served"

    assert asyncio.run(attempt()) != "served"


def test_a_producer_s_timestamps_do_not_roll_the_input_topics_segments(
    keyed: Deployment, sasl_broker: LocalKafka
) -> None:
    """Kafka rolls a partition's segment when a record's timestamp is ``segment.ms`` (7
    days) past the segment's first: records stamped by their producer from 2001 on, 8 days
    apart, would make one segment (a log and two index files) each, ~1,300 a partition up
    to today, until the broker runs out of files and memory maps. (A stamp more than an
    hour ahead the broker refuses.) The input topics are stamped by the broker at append."""
    topic = _names(keyed).input("interaction")
    year_2001 = int(datetime(2001, 1, 1, tzinfo=UTC).timestamp() * 1000)
    days_8 = 8 * 86_400_000

    async def send_and_read() -> tuple[int, int]:
        producer = AIOKafkaProducer(bootstrap_servers=sasl_broker.bootstrap, **_bob(sasl_broker))
        await producer.start()
        try:
            for n in range(40):
                value = _pref("a", f"stamped-{n}", profile="p-stamp")
                sent = await producer.send_and_wait(
                    topic,
                    value,
                    partition=3,
                    timestamp_ms=year_2001 + n * days_8,
                    headers=_signed(value, A_KEY),
                )
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=sasl_broker.bootstrap, **sasl_broker.client_options()
        )
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 3)])
            consumer.seek(TopicPartition(topic, 3), sent.offset)
            record = await asyncio.wait_for(consumer.getone(), 30)
        finally:
            await consumer.stop()
        return record.timestamp, record.timestamp_type

    stamped, kind = asyncio.run(send_and_read())
    segments = list((sasl_broker.data_dir / f"{topic}-3").glob("*.log"))
    assert (len(segments), stamped < year_2001 + 40 * days_8, kind) == (
        1,
        False,
        1,
    )  # 1: LogAppendTime
    keyed.drain()  # the items themselves land as any other
    assert len(_landed(keyed, "stamped-")) == 40
