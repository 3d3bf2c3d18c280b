"""The offsets a batch commits: past the highest offset read of each partition."""

from __future__ import annotations

from types import SimpleNamespace

from aiokafka import TopicPartition

from turnstream.entrypoints.kafka.ingest_driver import next_offsets


def _m(topic: str, partition: int, offset: int) -> SimpleNamespace:
    return SimpleNamespace(topic=topic, partition=partition, offset=offset)


def test_each_partition_commits_past_its_highest_offset() -> None:
    messages = [
        _m("t.turns", 0, 5),
        _m("t.turns", 0, 6),
        _m("t.turns", 1, 0),
        _m("t.commands", 0, 41),
        _m("t.turns", 0, 4),  # lower than one before it: the highest still counts
        _m("t.commands", 0, 42),
    ]
    assert next_offsets(messages) == {
        TopicPartition("t.turns", 0): 7,
        TopicPartition("t.turns", 1): 1,
        TopicPartition("t.commands", 0): 43,
    }


def test_a_batch_of_nothing_commits_nothing() -> None:
    assert next_offsets([]) == {}
