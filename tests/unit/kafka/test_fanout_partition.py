"""The fan-out's cached partitioner gives every key the partition aiokafka's default
partitioner (the Java client's murmur2) gives it, whatever the topic's partition count."""

from __future__ import annotations

from aiokafka.partitioner import DefaultPartitioner

from turnstream.entrypoints.kafka.fanout import partition_of

KEYS = [
    b"",
    b"p",
    "profile-\u00e9\u4e2d\U0001f600".encode(),
    b"k" * 256,
    bytes(range(256)),
    *(f"profile-{n}".encode() for n in range(500)),
]


def test_each_key_lands_where_the_default_partitioner_puts_it() -> None:
    default = DefaultPartitioner()
    for count in (1, 3, 4, 12, 50):
        every = list(range(count))
        for key in KEYS:
            assert partition_of(key, every) == default(key, every, every), (key, count)


def test_the_same_key_under_other_partition_counts_is_not_served_from_the_cache() -> None:
    default = DefaultPartitioner()
    key = b"profile-moves"
    seen = {count: partition_of(key, list(range(count))) for count in range(1, 40)}
    assert seen == {count: default(key, list(range(count)), []) for count in range(1, 40)}
    assert len(set(seen.values())) > 1  # the counts do move it


def test_partition_ids_are_taken_from_the_list_given() -> None:
    every = [3, 7, 9]  # sorted ids, not 0..n-1
    default = DefaultPartitioner()
    for key in KEYS[:50]:
        assert partition_of(key, every) == default(key, every, every)
        assert partition_of(key, every) in every


def test_a_message_without_a_key_goes_to_one_of_the_partitions() -> None:
    every = [0, 1, 2, 3]
    chosen = {partition_of(None, every) for _ in range(400)}
    assert chosen <= set(every)
    assert len(chosen) > 1
