"""The bisect's order and reach, against a stand-in sink (the real store refusing real
rows is tests/integration/test_store_refusals.py)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from turnstream.adapters.clickhouse.bisect import Refused, write_isolating
from turnstream.core.ingest import Source
from turnstream.core.rows import BatchRows, Block, Rows, as_dicts
from turnstream.errors import StoreError


class _Sink:
    """Writes rows to a list, in order; refuses any write holding a poisoned source."""

    def __init__(self, poison: set[Source], code: int = 469) -> None:
        self.poison, self.code = poison, code
        self.landed: list[tuple[str, Source]] = []
        self.attempts = 0

    def write(self, rows: BatchRows) -> dict[str, int]:
        self.attempts += 1
        rows = {t: as_dicts(b) for t, b in rows.items()}
        sources = {(t, _source(r)) for t, batch in rows.items() for r in batch}
        if any(s in self.poison for table, s in sources if table != "dead_letters"):
            raise StoreError("refused", code=self.code, table="interactions")
        for table, batch in rows.items():
            self.landed.extend((table, _source(r)) for r in batch)
        return {t: len(b) for t, b in rows.items() if b}


def _source(row: dict[str, Any]) -> Source:
    return Source(row["_topic"], row["_partition"], row["_offset"])


def _batch(n: int) -> tuple[Rows, list[Source]]:
    order = [Source("in", p, o) for p in (0, 1) for o in range(n // 2)]
    return {"turns": [_row(s) for s in order]}, order


def _row(s: Source) -> dict[str, Any]:
    return {"_topic": s.topic, "_partition": s.partition, "_offset": s.offset}


def _letter(refused: Refused) -> Rows:
    return {"dead_letters": [_row(refused.source)]}


@pytest.mark.parametrize("poisoned", [[], [0], [999], [10, 11], [3, 500, 501, 998]])
def test_refused_messages_are_found_and_everything_lands_in_order(poisoned: list[int]) -> None:
    rows, order = _batch(1000)
    poison = {order[i] for i in poisoned}
    sink = _Sink(poison)
    done = write_isolating(sink, rows, order, _letter)  # type: ignore[arg-type]

    assert [r.source for r in done.refused] == [order[i] for i in sorted(poisoned)]
    assert all(r.table == "interactions" for r in done.refused)
    landed = [s for _, s in sink.landed]
    assert sorted(landed) == sorted(order)  # each message once: its rows, or its letter
    assert {s for t, s in sink.landed if t == "dead_letters"} == poison
    # Per partition, offsets land strictly in order: the high-water marks only move on,
    # and a refused message's letter lands before anything after it.
    for partition in (0, 1):
        offsets = [s.offset for s in landed if s.partition == partition]
        assert offsets == sorted(offsets)
    # A refused message costs about two writes per halving.
    bound = 1 + len(poisoned) * (2 * math.ceil(math.log2(1000)) + 1)
    assert done.writes == sink.attempts <= bound
    assert done.written["turns"] == 1000 - len(poisoned)


def test_a_block_of_columns_is_bisected_as_its_rows() -> None:
    """The prepare process hands back blocks: a refusal bisects them by message too."""
    order = [Source("in", p, o) for p in (0, 1) for o in range(50)]
    rows = [
        {"dedup_key": f"k{s.offset}", "space_id": "a", "kept_from": 0, "ingested_at": 0, **_row(s)}
        for s in order
    ]
    poison = {order[7], order[60]}
    by_dicts, by_block = _Sink(poison), _Sink(poison)
    done = write_isolating(by_dicts, {"idempotency_keys": rows}, order, _letter)  # type: ignore[arg-type]
    block = Block.of("idempotency_keys", rows)
    again = write_isolating(by_block, {"idempotency_keys": block}, order, _letter)  # type: ignore[arg-type]
    assert [r.source for r in again.refused] == [r.source for r in done.refused] == order[7:61:53]
    assert by_block.landed == by_dicts.landed
    assert again.written == done.written and again.writes == done.writes


def test_a_failure_that_is_not_a_refusal_is_raised_at_once() -> None:
    rows, order = _batch(100)
    sink = _Sink({order[40]}, code=210)  # NETWORK_ERROR
    with pytest.raises(StoreError):
        write_isolating(sink, rows, order, _letter)  # type: ignore[arg-type]
    assert sink.attempts == 1 and sink.landed == []


def test_a_refused_letter_is_left_out_and_the_rest_still_lands() -> None:
    rows, order = _batch(10)
    sink = _Sink({order[2]})

    def letter(refused: Refused) -> Rows:
        return {"interactions": _letter(refused)["dead_letters"]}  # refused too

    done = write_isolating(sink, rows, order, letter)  # type: ignore[arg-type]
    assert [r.source for r in done.refused] == [order[2]]
    assert sorted(s for _, s in sink.landed) == sorted(set(order) - {order[2]})
