"""How the prepare process cuts a batch for its children and joins what they hand back:
contiguous chunks in order, none under ``MIN_CHUNK``, and the hand-backs joined as the
batch's own (indices of refusals shifted, blocks joined per table). Pure; the children
themselves are tested in tests/integration/kafka/test_prepare_process.py."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from turnstream.core.ingest import Reason, Refusal
from turnstream.core.rows import Block
from turnstream.entrypoints.kafka.prepare_process import MIN_CHUNK, chunked, joined

AT = datetime(2026, 11, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("size", "children", "lengths"),
    [
        (0, 2, [0]),
        (1, 4, [1]),
        (2 * MIN_CHUNK - 1, 2, [2 * MIN_CHUNK - 1]),  # too small to cut: one child
        (2 * MIN_CHUNK, 2, [MIN_CHUNK, MIN_CHUNK]),
        (20_000, 2, [10_000, 10_000]),
        (20_001, 2, [10_001, 10_000]),
        (20_000, 3, [6_667, 6_667, 6_666]),
        (3 * MIN_CHUNK + 5, 4, [1_002, 1_002, 1_001]),  # no chunk under MIN_CHUNK
        (20_000, 1, [20_000]),
        (4 * MIN_CHUNK + 1, 4, [1_001, 1_000, 1_000, 1_000]),
    ],
)
def test_a_batch_is_cut_into_contiguous_chunks(
    size: int, children: int, lengths: list[int]
) -> None:
    messages = list(range(size))
    chunks = chunked(messages, children)
    assert [len(c) for c in chunks] == lengths
    assert [m for c in chunks for m in c] == messages  # in order, each once


def _block(table: str, offsets: list[int]) -> Block:
    # dedup_key, _topic, _partition, _offset: enough columns for a join's checks.
    columns: list[list[Any]] = [[f"k{o}" for o in offsets], ["t"] * len(offsets)]
    columns += [[0] * len(offsets), offsets]
    return Block(table, columns, {("t", 0): (min(offsets), max(offsets))})


def _slim(first: int, count: int, refused: dict[int, str], tables: list[str]) -> Any:
    offsets = list(range(first, first + count))
    return (
        [f"k{o}" for o in offsets],
        [f"p{o}" for o in offsets],
        {i: Refusal(Reason.invalid, field, "bad") for i, field in refused.items()},
        {table: _block(table, offsets) for table in tables},
        [[("accepted", b"v%d" % o, b"p")] for o in offsets],
        [i not in refused for i in range(count)],
        [None] * count,
        [False] * count,
        AT,
    )


def test_the_chunks_hand_backs_join_as_the_batch_s_own() -> None:
    first = _slim(0, 3, {1: "type"}, ["turns", "dead_letters"])
    second = _slim(3, 4, {0: "space_id", 3: "payload"}, ["turns", "outcomes"])
    keys, profile_ids, refusals, blocks, sends, accepted, facts, erasing, at = joined(
        [first, second]
    )
    assert keys == [f"k{o}" for o in range(7)]
    assert profile_ids == [f"p{o}" for o in range(7)]
    # A refusal's index is its message's in the whole batch.
    paths = {i: r.field_path for i, r in refusals.items()}
    assert paths == {1: "type", 3: "space_id", 6: "payload"}
    assert accepted == [True, False, True, False, True, True, False]
    assert [s[0][1] for s in sends] == [b"v%d" % o for o in range(7)]
    assert facts == [None] * 7 and erasing == [False] * 7 and at == AT
    # Each table's rows from every chunk that had some, in order.
    assert blocks["turns"].columns[3] == list(range(7))
    assert blocks["turns"].spans == {("t", 0): (0, 6)}
    assert blocks["dead_letters"].columns[3] == [0, 1, 2]
    assert blocks["outcomes"].columns[3] == [3, 4, 5, 6]


def test_one_chunk_is_handed_back_as_it_is() -> None:
    only = _slim(0, 2, {}, ["turns"])
    assert joined([only]) is only
