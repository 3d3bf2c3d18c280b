"""Messages the store refuses for good are isolated and dead-lettered; the rest land,
exactly once, however the batch is replayed (real chDB).

Past validation no value of the contract is refused by the schema any more (counts and
positions are bounded by their columns), so the refusal here is the store's own: a
CHECK constraint, as an operator may add (``interactions`` refuses rows of one source;
a date before 2000 no longer reaches the store: it is past the raw tables' retention,
``core/time_edges.py``). ClickHouse refuses such a row with VIOLATED_CONSTRAINT (469),
the same way on every retry.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from turnstream.adapters.clickhouse.bisect import Refused, write_isolating
from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.kafka.topology import FANOUT_MAX_BYTES, TopicNames
from turnstream.config import Settings
from turnstream.core.ingest import Decision, Reason, refused_by_store
from turnstream.core.rows import Rows, rows_for
from turnstream.entrypoints.bootstrap import build_parts, build_replay
from turnstream.service.ingest import Ingest, ingest_batch, rows_to_write

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {
        "identity": {"secret": "k"},
        # Prepare on the calling thread: these tests are about the store's refusals (the
        # child's own tests: test_prepare_process*.py), and start no child to stop.
        "worker": {"topic_prefix": "t", "prepare_process": False},
        "spaces": {"acme": {"features": ["signals", "turns", "claims"]}},
    }
)
NAMES = TopicNames("t")
TOPIC = NAMES.input("interaction")
#: The source whose interaction rows the store refuses (its CHECK constraint).
POISONED = "poisoned"
CONSTRAINT = f"ALTER TABLE interactions ADD CONSTRAINT no_poison CHECK source != '{POISONED}'"
#: Yesterday: inside the raw tables' retention whenever the test runs.
WHEN = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT10:00:00Z")


def _interaction(n: int, source: str = "web") -> dict[str, Any]:
    return {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": f"k-{n}",
        "profile_id": f"p-{n % 7}",
        "source": source,
        "occurred_at": WHEN,
        "interaction": {"kind": "engaged", "ref": f"item:{n}", "action": "click"},
    }


def _turn(n: int, source: str) -> dict[str, Any]:
    return {
        "type": "turn",
        "space_id": "acme",
        "idempotency_key": f"k-{n}",
        "profile_id": "p-turn",
        "source": source,
        "occurred_at": WHEN,
        "turn_id": f"t-{n}",
        "agent": "sales",
        "interactions": [{"kind": "engaged", "ref": "item:t", "action": "click"}],
    }


#: 60 messages over two partitions. Refused by the store: 7 and 8 (side by side), 33, and
#: the turn at 50 (its turn row lands before its interaction is refused). 20 is invalid;
#: 41 copies the key of 33 (a duplicate of a refused message).
POISON = {7, 8, 33, 50}


def _lines() -> list[bytes]:
    lines = []
    for n in range(60):
        if n == 20:
            item: Any = "not an item"
        elif n == 50:
            item = _turn(n, POISONED)
        elif n == 41:
            item = _interaction(33, POISONED)
        else:
            item = _interaction(n, POISONED if n in POISON else "web")
        lines.append(json.dumps(item).encode())
    return lines


def _messages(lines: list[bytes]) -> list[Any]:
    """Consumer records: partition by parity, in each partition's order."""
    by_partition = [
        SimpleNamespace(topic=TOPIC, partition=n % 2, offset=n // 2, value=raw, key=None)
        for n, raw in enumerate(lines)
    ]
    return sorted(by_partition, key=lambda m: (m.partition, m.offset))


def _poison_sources() -> set[tuple[int, int]]:
    return {(n % 2, n // 2) for n in POISON}


@pytest.fixture
def refusing(store: Store) -> Store:
    store.command(CONSTRAINT)
    return store


def _loop(store: Store) -> Ingest:
    """The live ingest driver's use case, fresh on the store: new sink marks and key
    cache, as after a restart."""
    return build_parts(SETTINGS, AsyncStore(store)).ingest.ingest


def _tables(store: Store) -> dict[str, Any]:
    def q(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in store.query(sql).rows]

    # The store's message names the database and the table's UUID: not the same in two
    # stores that must otherwise be equal.
    letters = [
        (reason, partition, offset, message.replace(store.database, "db"))
        for reason, partition, offset, message in q(
            "SELECT reason, _partition, _offset, "
            "replaceRegexpAll(message, '\\([0-9a-f-]{36}\\)', '') "
            "FROM dead_letters ORDER BY 2, 3"
        )
    ]
    return {
        "interactions": q("SELECT _partition, _offset FROM interactions ORDER BY 1, 2"),
        "turns": q("SELECT _partition, _offset FROM turns ORDER BY 1, 2"),
        "dead_letters": letters,
        "keys": q("SELECT dedup_key, count() FROM idempotency_keys GROUP BY 1 ORDER BY 1"),
    }


def _write(loop: Ingest, messages: list[Any]) -> tuple[list[Decision], list[Any]]:
    settled = ingest_batch(loop, messages, FANOUT_MAX_BYTES)
    return settled.decisions, settled.sends


def test_refused_messages_are_isolated_and_dead_lettered_while_the_rest_land(
    refusing: Store,
) -> None:
    messages = _messages(_lines())
    decisions, sends = _write(_loop(refusing), messages)

    refused = {
        (d.source.partition, d.source.offset): d
        for d in decisions
        if d.refusal is not None and d.refusal.reason is Reason.store_refused
    }
    assert set(refused) == _poison_sources()
    for d in refused.values():
        assert d.refusal is not None
        assert d.refusal.message.startswith("interactions refused it: ")
        assert "VIOLATED_CONSTRAINT" in d.refusal.message and "no_poison" in d.refusal.message
        assert "Stack trace" not in d.refusal.message and len(d.refusal.message) < 1100
    # Their fan-out is their dead letter alone, with the original bytes.
    for d, out in zip(decisions, sends, strict=True):
        if (d.source.partition, d.source.offset) in refused:
            assert [topic for topic, _, _ in out] == [NAMES.dead_letters]
            letter = json.loads(out[0][1])
            assert letter["reason"] == "store_refused"
            assert letter["original"] and letter["offset"] == d.source.offset

    tables = _tables(refusing)
    good = [
        (n % 2, n // 2) for n in range(60) if n not in POISON and n not in (20, 41)
    ]  # 41 duplicates 33's key: dropped, as any copy of a taken key
    assert tables["interactions"] == sorted(good)
    # The refused turn's own row was written with its batch before its interaction was
    # refused (turns come first): it stays, and its dead letter says which table refused.
    assert tables["turns"] == [(50 % 2, 50 // 2)]
    reasons = Counter(reason for reason, _, _, _ in tables["dead_letters"])
    assert reasons == {"store_refused": 4, "invalid": 1}
    # One key per message that is not a duplicate, each once.
    assert len(tables["keys"]) == 59 and {n for _, n in tables["keys"]} == {1}
    copy = next(d for d in decisions if (d.source.partition, d.source.offset) == (1, 20))
    assert copy.duplicate  # message 41: the key of refused 33, taken


def test_a_replay_however_cut_adds_nothing(refusing: Store) -> None:
    messages = _messages(_lines())
    _write(_loop(refusing), messages)
    first = _tables(refusing)

    again, _ = _write(_loop(refusing), messages)  # after a restart: marks read back
    assert _tables(refusing) == first
    assert {
        (d.source.partition, d.source.offset)
        for d in again
        if d.refusal is not None and d.refusal.reason is Reason.store_refused
    } == _poison_sources()

    loop = _loop(refusing)  # cut differently this time
    for start in range(0, 60, 17):
        _write(loop, messages[start : start + 17])
    assert _tables(refusing) == first


def _constrained(store: Store) -> Store:
    """``store`` refusing the poisoned rows (:data:`CONSTRAINT`)."""
    store.command(CONSTRAINT)
    return store


def _written_without_a_crash(store_factory: Callable[[], Store], messages: list[Any]) -> Store:
    """A store of its own with ``messages`` written by one loop that never dies."""
    store = _constrained(store_factory())
    _write(_loop(store), messages)
    return store


class _Died(Exception):
    """The process stops here (as by SIGKILL): nothing after this point happens."""


@pytest.mark.parametrize("dies_after", [0, 1, 3])
def test_a_crash_in_the_middle_of_a_split_batch_and_a_replay_leave_every_table_exact(
    store_factory: Callable[[], Store], dies_after: int
) -> None:
    messages = _messages(_lines())
    expected = _tables(_written_without_a_crash(store_factory, messages))
    store = _constrained(store_factory())
    loop = _loop(store)
    batch = loop.batch(loop.prepare(messages, FANOUT_MAX_BYTES))
    batch.settle()
    prepared, decisions = batch.prepared, batch.decisions
    at = {d.source: i for i, d in enumerate(decisions)}
    isolated = 0

    def replace(refused: Refused) -> Rows:
        # What the loop does for a refused message, until the process dies: after
        # ``dies_after`` dead letters, while isolating the next refused message.
        nonlocal isolated
        if isolated == dies_after:
            raise _Died
        isolated += 1
        table = refused.table or "the store"
        letter = refused_by_store(
            decisions[at[refused.source]], f"{table} refused it: {refused.reason}"
        )
        return rows_for(letter, SETTINGS, prepared.received_at)

    with pytest.raises(_Died):
        write_isolating(
            loop.raw.sink,  # type: ignore[attr-defined]
            rows_to_write(prepared, decisions),
            [d.source for d in decisions if not d.duplicate],
            replace,
        )
    assert _tables(store) != expected
    # Restarted: the batch is consumed again from its first offset, by a new process.
    _write(_loop(store), messages)
    assert _tables(store) == expected


@pytest.mark.parametrize("cut", [60, 17])
def test_a_dead_letter_whose_insert_a_crash_cut_after_its_token_lands_on_the_restart(
    store_factory: Callable[[], Store], monkeypatch: pytest.MonkeyPatch, cut: int
) -> None:
    """A SIGKILL in the middle of a refused message's dead-letter insert can leave the
    insert's token in the table's deduplication log and its row nowhere (ClickHouse logs
    the token, then commits the part: ``writer.py``). The restarted process isolates the
    message again and writes its dead letter, one row at the same offset however the
    batch is cut: it must land, not be dropped as a repeat of the lost insert (the
    poison-batch fault test found 23 dead letters of 24). The state the crash leaves is
    made here: the insert done, its row deleted (a lightweight DELETE leaves the log as
    it is), nothing after it."""
    messages = _messages(_lines())
    expected = _tables(_written_without_a_crash(store_factory, messages))
    store = _constrained(store_factory())
    insert = store.insert

    def dies_in_the_first_dead_letter(
        table: str, rows: Any, columns: Any, token: str | None = None, **options: Any
    ) -> None:
        insert(table, rows, columns, token, **options)
        if table != "dead_letters":
            return
        ident = {"ident": rows[-1][0]}  # column-oriented: ``_insert`` comes last
        where = "WHERE _insert = {ident:UInt64}"
        assert store.query(f"SELECT reason FROM dead_letters {where}", ident).rows == [
            ("store_refused",)
        ]
        store.command(f"DELETE FROM dead_letters {where}", parameters=ident)
        raise _Died

    monkeypatch.setattr(store, "insert", dies_in_the_first_dead_letter)
    with pytest.raises(_Died):
        _write(_loop(store), messages)
    monkeypatch.undo()
    assert store.scalar("SELECT count() FROM dead_letters") == 0

    loop = _loop(store)  # restarted: the batch is consumed again, cut by ``cut``
    for start in range(0, 60, cut):
        _write(loop, messages[start : start + cut])
    assert _tables(store) == expected


def _by_line(tables: dict[str, Any], line: Callable[[int, int], int]) -> dict[str, Any]:
    """``tables`` (:func:`_tables`) with each message named by its index in
    :func:`_lines`, ``line(partition, offset)``, whatever its source."""
    letters = sorted(
        (reason, line(p, o), message) for reason, p, o, message in tables["dead_letters"]
    )
    return {
        "interactions": sorted(line(p, o) for p, o in tables["interactions"]),
        "turns": sorted(line(p, o) for p, o in tables["turns"]),
        "dead_letters": letters,
        "keys": tables["keys"],
    }


def test_a_replay_bisects_a_refused_batch_into_dead_letters_as_live_does(
    store_factory: Callable[[], Store], tmp_path: Path
) -> None:
    lines = _lines()
    live = store_factory()
    live.command(CONSTRAINT)
    _write(_loop(live), _messages(lines))
    expected = _by_line(_tables(live), lambda p, o: 2 * o + p)

    events = tmp_path / "events.jsonl"
    events.write_bytes(b"\n".join(lines) + b"\n")
    replayed = store_factory()
    replayed.command(CONSTRAINT)
    report = build_replay(SETTINGS, replayed).run(events)  # one batch of 60 lines

    tables = _by_line(_tables(replayed), lambda _, number: number - 1)
    assert tables == expected
    assert [n for reason, n, _ in tables["dead_letters"] if reason == "store_refused"] == sorted(
        POISON
    )
    assert report.lines == 60 and report.dead_letters == 5 and report.duplicates == 1
    assert report.accepted == 60 - 5 - 1
    # Replayed again, the same lines are refused again, and nothing is added.
    again = build_replay(SETTINGS, replayed).run(events)
    assert _by_line(_tables(replayed), lambda _, number: number - 1) == expected
    assert again.dead_letters == 5 and again.accepted == report.accepted


def test_an_item_the_store_refused_is_accepted_corrected_with_its_key_and_not_twice(
    store_factory: Callable[[], Store], tmp_path: Path
) -> None:
    wrong = json.dumps(_interaction(3, POISONED)).encode()
    fixed = json.dumps(_interaction(3)).encode()  # corrected, the same idempotency key
    live = store_factory()
    live.command(CONSTRAINT)

    def send(loop: Ingest, offset: int, raw: bytes) -> Decision:
        message = SimpleNamespace(topic=TOPIC, partition=0, offset=offset, value=raw, key=None)
        (decision,), _ = _write(loop, [message])
        return decision

    loop = _loop(live)
    refused = send(loop, 0, wrong)
    assert refused.refusal is not None and refused.refusal.reason is Reason.store_refused
    again = send(loop, 1, wrong)  # the same bytes: no second dead letter, no row
    assert again.duplicate
    after_restart = send(_loop(live), 2, wrong)  # the refused keys read back from the store
    assert after_restart.duplicate
    accepted = send(_loop(live), 3, fixed)
    assert not accepted.duplicate and accepted.refusal is None
    assert send(loop, 4, fixed).duplicate and send(loop, 5, wrong).duplicate
    tables = _tables(live)
    assert tables["interactions"] == [(0, 3)]
    assert [(reason, o) for reason, _, o, _ in tables["dead_letters"]] == [("store_refused", 0)]
    # Two keys, each once: the digest of the refused bytes, and the item's.
    assert [n for _, n in tables["keys"]] == [1, 1]

    # Replayed from a file, in one batch of lines: decided as live decided.
    events = tmp_path / "resent.jsonl"
    events.write_bytes(b"\n".join([wrong, wrong, fixed, fixed, wrong]) + b"\n")
    replayed = store_factory()
    replayed.command(CONSTRAINT)
    report = build_replay(SETTINGS, replayed).run(events)
    assert (report.accepted, report.dead_letters, report.duplicates) == (1, 1, 3)
    tables = _tables(replayed)
    assert tables["interactions"] == [(0, 3)]  # line 3, the first fixed one
    assert [(reason, o) for reason, _, o, _ in tables["dead_letters"]] == [("store_refused", 1)]
    assert [n for _, n in tables["keys"]] == [1, 1]
    # Replayed again (as after a crash): the same refusal, nothing added.
    again_report = build_replay(SETTINGS, replayed).run(events)
    assert (again_report.accepted, again_report.dead_letters) == (1, 1)
    assert _tables(replayed) == tables
