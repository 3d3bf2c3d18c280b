"""The topology: one object says which topics exist and who reads and writes them; the
drivers take their groups and topics from it."""

from __future__ import annotations

from pathlib import Path

from turnstream.adapters.clickhouse.derivations import SIGNAL_COLUMNS
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.kafka.topology import (
    ACCEPTED_TOPIC_BYTES,
    INPUT_TOPIC_BYTES,
    INPUT_TOPIC_CONFIG,
    topology_of,
)
from turnstream.config import Settings, WorkerSettings
from turnstream.models.items import MAX_ITEM_BYTES

SETTINGS = Settings(worker=WorkerSettings(app_id="shop", topic_prefix="ts"))


def test_every_topic_read_or_written_is_declared() -> None:
    topology = topology_of(SETTINGS)
    declared = {t.name for t in topology.topics}
    assert declared == set(topology.names.every)
    for processor in topology.processors:
        assert set(processor.reads) <= declared and set(processor.writes) <= declared
    # every topic but the inferences' is read by someone, and everything is written
    read = {t for p in topology.processors for t in p.reads}
    written = {t for p in topology.processors for t in p.writes}
    assert declared - read == {"ts.inferences", "ts.dead-letters"}
    assert written == declared


def test_the_drivers_groups_topics_and_tables() -> None:
    topology = topology_of(SETTINGS)
    assert topology.ingest.group == "shop"
    assert topology.ingest.reads == ("ts.turns", "ts.interactions", "ts.outcomes", "ts.commands")
    assert topology.ingest.writes == ("ts.accepted", "ts.dead-letters")
    assert topology.ingest.tables == RAW_TABLES
    assert topology.derivation.group == "shop-signals"  # where its offsets were committed
    assert topology.derivation.reads == ("ts.accepted",)
    assert topology.derivation.tables == tuple(SIGNAL_COLUMNS)


def test_the_rendering_names_every_topic_and_group() -> None:
    text = topology_of(SETTINGS).render()
    for topic in topology_of(SETTINGS).names.every:
        assert topic in text
    assert "ingest (consumer group shop)" in text
    assert "derivation (consumer group shop-signals)" in text


def test_topics_are_created_to_take_the_largest_valid_item() -> None:
    topology = topology_of(SETTINGS)
    configs = topology.names.configs()
    by_name = {t.name: t for t in topology.topics}
    for topic in topology.names.inputs:
        # an item of the contract's 1 MiB, with its key and framing
        assert int(configs[topic]["max.message.bytes"]) == INPUT_TOPIC_BYTES > MAX_ITEM_BYTES
        assert by_name[topic].max_bytes == INPUT_TOPIC_BYTES
        # the broker's time on each record, not its producer's
        assert configs[topic]["message.timestamp.type"] == "LogAppendTime"
    accepted = topology.names.accepted
    assert int(configs[accepted]["max.message.bytes"]) == ACCEPTED_TOPIC_BYTES
    assert by_name[accepted].max_bytes == ACCEPTED_TOPIC_BYTES
    # the others keep the broker's default
    assert set(configs) == {*topology.names.inputs, accepted}
    assert f"{ACCEPTED_TOPIC_BYTES:,} bytes" in topology.render()


def test_the_deployment_doc_names_the_settings_of_topics_made_beforehand() -> None:
    doc = " ".join((Path(__file__).parents[3] / "docs" / "deployment.md").read_text().split())
    for key, value in INPUT_TOPIC_CONFIG.items():
        assert f"`{key}={value}`" in doc, key
    assert f"`max.message.bytes={ACCEPTED_TOPIC_BYTES}`" in doc
