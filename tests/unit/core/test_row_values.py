"""A batch's rows as tuples in column order (``add_row_values``, what the prepare child
builds its blocks from) are the dict rows ``add_rows`` gives, value for value, and their
block is the block of those dicts: the same columns (times in ticks) and spans. Pure."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from itertools import compress
from typing import Any

import pytest

from turnstream.config import Settings
from turnstream.core.ingest import Gate, Source, judge
from turnstream.core.rows import (
    COLUMNS,
    Block,
    ValueRows,
    add_row_values,
    add_rows,
    named,
    rows_for,
    spans_of,
)
from turnstream.models import InteractionItem, Turn
from turnstream.models.interactions import INTERACTION_KINDS
from turnstream_dev.sample import mixed_items, sample_day

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        "signals": {"sensitive": ["person.carrier"]},
        "spaces": {
            "acme": {"features": ["signals", "turns", "claims"]},
            "lumen": {"features": ["signals", "turns"]},
        },
    }
)
#: When the batch is taken: its items occurred in the day before (inside the time edges).
AT = datetime.now(UTC).replace(microsecond=123_456)


def _rows() -> tuple[ValueRows, dict[str, list[dict[str, Any]]]]:
    lines = mixed_items(n=800, bad=80, seed=4, start=AT - timedelta(hours=1)).lines
    gate = Gate(SETTINGS)
    values: ValueRows = defaultdict(list)
    dicts: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for offset, raw in enumerate(lines):
        decision = judge(raw, Source("t", offset % 3, offset), SETTINGS, gate, now=AT)
        add_row_values(values, decision, SETTINGS, AT)
        add_rows(dicts, decision, SETTINGS, AT)
    return values, dict(dicts)


def test_the_tuples_are_the_dict_rows_and_their_block_the_dicts_block() -> None:
    values, dicts = _rows()
    # Not trivially equal: a mixed batch fills every raw table (a carrier is sensitive).
    assert set(values) == set(dicts) == set(COLUMNS)
    for table, rows in values.items():
        assert named(table, rows) == dicts[table], table
        assert all(len(row) == len(COLUMNS[table]) for row in rows), table
        block, expected = Block.of_values(table, rows), Block.of(table, dicts[table])
        assert block.columns == expected.columns, table
        assert block.spans == expected.spans, table
        assert all(isinstance(v, int) for v in block.columns[COLUMNS[table].index("ingested_at")])


def test_a_row_of_the_wrong_width_is_refused() -> None:
    values, _ = _rows()
    rows = values["idempotency_keys"]
    with pytest.raises(ValueError, match="idempotency_keys"):
        Block.of_values("idempotency_keys", [row[:-1] for row in rows])
    with pytest.raises(ValueError):
        Block.of_values("idempotency_keys", [rows[0], rows[1][:-1]])


@pytest.mark.parametrize("topics", [["t"], ["t", "u", "a.b"]])
def test_the_spans_are_each_sources_lowest_and_highest_offset(topics: list[str]) -> None:
    rand = random.Random(len(topics))
    rows = [
        {"_topic": rand.choice(topics), "_partition": rand.randrange(4), "_offset": o}
        for o in rand.sample(range(100_000), 3_000)
    ]
    naive: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        naive.setdefault((row["_topic"], row["_partition"]), []).append(row["_offset"])
    spans = spans_of(rows)
    assert spans == {tp: (min(o), max(o)) for tp, o in naive.items()}
    assert list(spans) == sorted(naive)  # in the order of the sources
    one = spans_of(rows[:1])
    assert one == {(rows[0]["_topic"], rows[0]["_partition"]): (rows[0]["_offset"],) * 2}
    assert spans_of([]) == {}


def test_an_interactions_payload_is_its_model_dumped_without_whose_it_is() -> None:
    lines = sample_day(AT.date() - timedelta(days=1))
    gate = Gate(SETTINGS)
    kinds: set[str] = set()
    for offset, raw in enumerate(lines):
        decision = judge(raw, Source("t", 0, offset), SETTINGS, gate)
        item = decision.item
        if isinstance(item, Turn) and decision.keep_interactions:
            interactions = item.interactions
        elif isinstance(item, InteractionItem):
            interactions = [item.interaction]
        else:
            continue
        rows = rows_for(decision, SETTINGS, AT)["interactions"]
        # A sensitive stated value's payload is withheld (test_sensitive_stated.py).
        plain = [one.__dict__.get("attr") != "person.carrier" for one in interactions]
        payloads = list(compress((r["payload"] for r in rows), plain))
        expected = [one.model_dump_json(exclude={"for_"}) for one in interactions]
        assert payloads == list(compress(expected, plain))
        kinds.update(one.kind for one in interactions)
    assert kinds == INTERACTION_KINDS
