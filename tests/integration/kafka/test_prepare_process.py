"""The prepare stage in child processes: the same batch as prepared in-process (by one
child, or cut in two chunks for two), a child that dies is a loud error (not a hang), and
a SIGKILLed parent leaves no child behind.
Real processes (``spawn``); no broker, no store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.rows import COLUMNS, Block, spans_of, table_columns
from turnstream.entrypoints.kafka.prepare import Prepared, prepare_batch
from turnstream.entrypoints.kafka.prepare_process import CHILD_NICENESS, PrepareProcess, chunked
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        "worker": {"topic_prefix": "t"},
        "spaces": {
            "acme": {"features": ["signals", "turns", "claims"]},
            "lumen": {"features": ["signals", "turns"]},
        },
    }
)
NAMES = TopicNames("t")
#: Two days ago, midnight: the items stay inside the raw tables' retention (core/time_edges.py).
START = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)


def _erase(n: int) -> bytes:
    return json.dumps(
        {
            "type": "command",
            "command": "erase",
            "space_id": "acme",
            "idempotency_key": f"erase-{n}",
            "handle": {"type": "email", "value": f"Person{n}@Example.com"},
            "source": "app",
            "occurred_at": START.strftime("%Y-%m-%dT10:00:00Z"),
        }
    ).encode()


def _messages(n: int = 600) -> list[Any]:
    lines = list(mixed_items(n=n, bad=n // 15, seed=3, start=START).lines)
    # Commands that erase someone, bytes that are no item, an item in Portuguese at the
    # limits of a key: what the parent rebuilds from the plain form must match.
    lines[10:10] = [_erase(1), b"\xff not json", _erase(2), _erase(1)]
    return [
        SimpleNamespace(topic=NAMES.input("turn"), partition=n % 3, offset=n, value=v, key=b"k")
        for n, v in enumerate(lines)
    ]


def _comparable(prepared: Prepared) -> dict[str, Any]:
    """Everything but the time the batch was taken (rows and dead letters carry it, and a
    key's ``kept_from`` is it for an item dated before); the rows as the store inserts
    them (the child hands back columns, this process dicts)."""
    rows = {}
    for table, batch in prepared.rows.items():
        if isinstance(batch, Block):
            columns, spans = batch.columns, batch.spans
        else:
            columns, spans = table_columns(table, batch), spans_of(batch)
        rows[table] = (
            [
                c
                for name, c in zip(COLUMNS[table], columns, strict=True)
                if name not in ("ingested_at", "kept_from")
            ],
            spans,
        )
    sends = [
        [
            (t, json.loads(v) | {"received_at": None} if t == NAMES.dead_letters else v, k)
            for t, v, k in out
        ]
        for out in prepared.sends
    ]
    decisions = [
        (d.source, d.raw, d.dedup_key, d.profile_id, d.refusal, d.duplicate)
        for d in prepared.judged
    ]
    return {
        "rows": rows,
        "sends": sends,
        "decisions": decisions,
        "accepted": prepared.accepted,
        "erasure_facts": prepared.erasure_facts,
        "erases": prepared.erases,
    }


def test_a_batch_prepared_in_the_child_is_the_batch_prepared_here() -> None:
    messages = _messages()
    process = PrepareProcess(SETTINGS, NAMES)
    try:
        there = process.prepare(messages, 4 << 20)
        # A limit that refuses the larger accepted messages, in the child as here.
        small = process.prepare(messages, 900)
    finally:
        process.close()
    here = prepare_batch(messages, SETTINGS, NAMES, 4 << 20)
    assert _comparable(there) == _comparable(here)
    assert _comparable(small) == _comparable(prepare_batch(messages, SETTINGS, NAMES, 900))
    # Not trivially equal: the batch has refusals, erasures and every table.
    assert sum(d.refusal is not None for d in there.judged) >= 40
    assert sum(there.erases) == 3
    assert sum(m is not None for m in there.erasure_facts) == sum(there.accepted) > 400
    assert {"turns", "interactions", "outcomes", "commands", "dead_letters"} <= set(there.rows)
    # Handed back as the store inserts them: a block of columns per table.
    assert all(isinstance(batch, Block) for batch in there.rows.values())
    assert any(d.refusal and d.refusal.reason == "too_large" for d in small.judged)
    # The parent gets no item back, only what the later stages read.
    assert all(d.item is None and d.token is None for d in there.judged)


def test_a_batch_prepared_by_two_children_is_the_batch_prepared_here() -> None:
    # Large enough to be cut in two (2 * MIN_CHUNK), with the erasures, the bytes that are
    # no item and a refusal in each half.
    messages = _messages(2_400)
    assert len(chunked(messages, 2)) == 2
    process = PrepareProcess(SETTINGS, NAMES, children=2)
    try:
        process.start()
        assert len(process.pids) == 2
        # Each child runs below the parent's priority, so a full machine runs the parent
        # (the stage the others wait on) first.
        own = os.getpriority(os.PRIO_PROCESS, 0)
        for child in process.pids:
            assert os.getpriority(os.PRIO_PROCESS, child) == min(own + CHILD_NICENESS, 19)
        there = process.prepare(messages, 4 << 20)
    finally:
        process.close()
    assert process.pids == []
    here = prepare_batch(messages, SETTINGS, NAMES, 4 << 20)
    assert _comparable(there) == _comparable(here)
    half = len(messages) // 2
    refused = [i for i, d in enumerate(there.judged) if d.refusal is not None]
    assert min(refused) < half <= max(refused)
    assert sum(there.erases) == 3
    # Both chunks carry the batch's one time: every row's ingested_at is the same.
    for table, block in there.rows.items():
        assert isinstance(block, Block)
        times = block.columns[COLUMNS[table].index("ingested_at")]
        assert len(set(times)) == 1, table


def test_a_child_that_dies_is_an_error_and_the_next_batch_gets_a_new_child() -> None:
    messages = _messages()[:50]
    process = PrepareProcess(SETTINGS, NAMES)
    try:
        process.start()
        first = process.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            process.prepare(messages, 4 << 20)
        again = process.prepare(messages, 4 << 20)
        assert process.pid not in (None, first)
        assert len(again.judged) == 50
    finally:
        process.close()
    assert process.pid is None


def test_one_of_two_children_that_dies_is_an_error_and_new_children_start() -> None:
    messages = _messages(2_400)
    process = PrepareProcess(SETTINGS, NAMES, children=2)
    try:
        process.start()
        first = process.pids
        assert len(first) == 2
        os.kill(first[1], signal.SIGKILL)
        with pytest.raises(BrokenProcessPool):
            process.prepare(messages, 4 << 20)
        again = process.prepare(messages, 4 << 20)
        assert len(again.judged) == len(messages)
        assert set(process.pids).isdisjoint(first) and len(process.pids) == 2
    finally:
        process.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: it waits for its (new) parent to reap it.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_sigkilled_parent_leaves_no_child() -> None:
    script = textwrap.dedent(
        """
        import sys, time
        from turnstream.config import Settings
        from turnstream.entrypoints.kafka.prepare_process import PrepareProcess
        from turnstream.adapters.kafka.topology import TopicNames

        if __name__ == "__main__":
            settings = Settings.model_validate({"identity": {"secret": "k"}})
            process = PrepareProcess(settings, TopicNames("t"), children=2)
            process.start()
            print(*process.pids, flush=True)
            time.sleep(600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        children = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(children) == 2 and all(_alive(child) for child in children)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 30
    while any(_alive(child) for child in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [child for child in children if _alive(child)]
    assert not left, f"the prepare processes {left} outlived their SIGKILLed parent"
