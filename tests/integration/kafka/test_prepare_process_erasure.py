"""Erase tombstones with the prepare process on and off: the same batches (erases, and
items of the erased before and after them, in the same batch and in later ones) drop,
erase and write the same, through the ingest driver's whole batch (prepare, settle,
write, erase) on real chDB, the child a real ``spawn``ed process. No broker: the fan-out
messages are compared as the driver hands them to the loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from turnstream.adapters.clickhouse.store import AsyncStore, Store
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core import identity
from turnstream.core.identity import profile_id_for, resolve_profile
from turnstream.entrypoints.bootstrap import build_parts
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream.models import parse_item
from turnstream.models.common import Handle

#: Yesterday: inside the raw tables' retention whenever the test runs (core/time_edges.py).
DAY = (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%d")
pytestmark = pytest.mark.integration

CONFIG = {
    "identity": {"secret": "k"},
    "worker": {"topic_prefix": "t"},
    "spaces": {
        "acme": {"features": ["signals", "turns", "claims"], "language": "pt"},
        "lumen": {"features": ["signals", "turns"], "language": "es"},
    },
}
NAMES = TopicNames("t")
#: Ana is known by her handle (upper case in the address, to be normalized), Bea
#: by her profile id; Ana is erased at 11:00 in batch 1, Bea at 12:00 in batch 2.
ANA = {"type": "email", "value": "Ana.Souza@Exemplo.com.BR"}
BEA = "p_bea"
#: Columns of the wall clock: when the driver took the batch, when an erase ran.
#: Columns of the moment, not of what the batches did: the times, and the insert's id
#: (from its token, which names the sink's life: two runs never share one); a key's
#: ``kept_from`` is ``ingested_at`` for an item dated before it.
NOW_COLUMNS = {"ingested_at", "kept_from", "received_at", "recorded_at", "requested_at", "_insert"}


def _envelope(kind: str, key: str, at: str, who: str | dict[str, str], space: str) -> dict:
    person = {"handle": who} if isinstance(who, dict) else {"profile_id": who}
    return {
        "type": kind,
        "space_id": space,
        "idempotency_key": key,
        "source": "app",
        "occurred_at": at,
        **person,
    }


def _interaction(key: str, at: str, who: str | dict[str, str], space: str = "acme") -> bytes:
    item = _envelope("interaction", key, at, who, space)
    item["interaction"] = {"kind": "engaged", "ref": f"item:{key}", "action": "click"}
    return json.dumps(item, ensure_ascii=False).encode()


def _turn(key: str, at: str, who: str | dict[str, str]) -> bytes:
    item = _envelope("turn", key, at, who, "acme")
    item |= {
        "turn_id": f"t-{key}",
        "agent": "vendas",
        "interactions": [{"kind": "engaged", "ref": "item:ñandú", "action": "click"}],
    }
    return json.dumps(item, ensure_ascii=False).encode()


def _outcome(key: str, at: str, who: str | dict[str, str]) -> bytes:
    item = _envelope("outcome", key, at, who, "acme")
    item |= {"outcome": "purchase", "ref": "item_variant:acme:991", "order_id": f"o-{key}"}
    return json.dumps(item).encode()


def _command(key: str, at: str, who: str | dict[str, str], command: str = "erase") -> bytes:
    item = _envelope("command", key, at, who, "acme")
    item["command"] = command
    return json.dumps(item, ensure_ascii=False).encode()


def _batches() -> list[list[bytes]]:
    day = f"{DAY}T"
    return [
        [  # batch 1: Ana before her erase, the erase, Ana after it in the same batch
            _interaction("a1", day + "10:00:00Z", ANA),
            _turn("a2", day + "10:05:00Z", ANA),
            _interaction("b1", day + "09:00:00Z", BEA),
            _command("a-erase", day + "11:00:00Z", ANA),
            _interaction("a3", day + "10:30:00Z", ANA),  # before it, later in the batch
            _interaction("a4", day + "11:30:00Z", ANA),  # after it
            _interaction("a-lumen", day + "10:00:00Z", ANA, space="lumen"),  # another space
            b"\xff not json",
        ],
        [  # batch 2: Ana's late arrivals; Bea erased, with hers around it
            _interaction("a5", day + "10:45:00Z", ANA),  # forgotten
            _outcome("a6", day + "11:00:00Z", ANA),  # at the erase itself: forgotten
            _interaction("a7", day + "11:00:00.001Z", ANA),  # just after: kept
            _command("a-erase-early", day + "10:50:00Z", ANA),  # an erase is never forgotten
            _command("a-optout", day + "10:40:00Z", ANA, command="opt_out"),  # forgotten
            _interaction("a1", day + "10:00:00Z", ANA),  # a duplicate of batch 1's
            _interaction("b2", day + "11:00:00Z", BEA),
            _command("b-erase", day + "12:00:00Z", BEA),
            _turn("b3", day + "11:59:00Z", BEA),
        ],
        [  # batch 3: both tombstones from the store's own memory of them
            _interaction("a8", day + "10:59:59.999Z", ANA),  # forgotten
            _interaction("a9", day + "12:00:00Z", ANA),  # kept
            _outcome("b4", day + "11:59:59Z", BEA),  # forgotten
            _interaction("b5", day + "12:00:01Z", BEA),  # kept
            _command("a-erase", day + "11:00:00Z", ANA),  # a duplicate erase
        ],
    ]


def _records(batches: list[list[bytes]]) -> list[list[Any]]:
    """Consumer records, each item on its type's topic, offsets rising per partition."""
    next_offset: dict[str, int] = {}
    out = []
    for batch in batches:
        records = []
        for raw in batch:
            try:
                kind = json.loads(raw)["type"]
            except ValueError:
                kind = "interaction"
            topic = NAMES.input(kind)
            offset = next_offset[topic] = next_offset.get(topic, -1) + 1
            records.append(SimpleNamespace(topic=topic, partition=0, offset=offset, value=raw))
        for r in records:
            r.key = None
        out.append(records)
    return out


def _tables(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the database but the migrations', every column but the clock's."""
    tables = [
        r[0]
        for r in store.query(
            "SELECT name FROM system.tables WHERE database = {db:String} "
            "AND engine NOT IN ('View', 'MaterializedView') AND name != 'schema_migrations' "
            "ORDER BY name",
            {"db": store.database},
        ).rows
    ]
    out = {}
    for table in tables:
        columns = [
            r[0]
            for r in store.query(
                "SELECT name FROM system.columns WHERE database = {db:String} "
                "AND table = {t:String} ORDER BY position",
                {"db": store.database, "t": table},
            ).rows
            if r[0] not in NOW_COLUMNS
        ]
        names = ", ".join(f"`{c}`" for c in columns)
        out[table] = sorted(
            (tuple(map(str, r)) for r in store.query(f"SELECT {names} FROM `{table}`").rows),
        )
    return out


def _run(store: Store, prepare_process: bool) -> tuple[list[Any], dict[str, Any]]:
    """The batches through one ingest driver: the fan-out each hands to the loop, and
    the driver's counters."""
    worker = {"topic_prefix": "t", "prepare_process": prepare_process}
    settings = Settings.model_validate(CONFIG | {"worker": worker})
    driver = build_parts(settings, AsyncStore(store)).ingest
    assert (driver.stage.process is not None) is prepare_process
    sent: list[Any] = []

    async def batches() -> None:
        for records in _records(_batches()):
            step = await driver.finish(driver.prepare(records))
            for topic, value, key in step.messages:
                if topic == NAMES.dead_letters:
                    value = json.loads(value) | {"received_at": None}
                sent.append((topic, value, key))
            assert step.done is not None
            step.done()

    try:
        asyncio.run(batches())
    finally:
        driver.close()
    clock = ("uptime_seconds", "first_batch_at")  # times, not what the batches did
    stats = {k: v for k, v in driver.stats.as_dict().items() if k not in clock}
    return sent, stats


def test_the_child_drops_and_erases_what_the_thread_does(
    store_factory: Callable[[], Store],
) -> None:
    on, off = store_factory(), store_factory()
    sent_on, stats_on = _run(on, prepare_process=True)
    sent_off, stats_off = _run(off, prepare_process=False)
    assert sent_on == sent_off
    assert stats_on == stats_off
    assert _tables(on) == _tables(off)

    # Not trivially equal: what each rule did, as the erase policy says.
    assert stats_on["erased_before_arrival"] == 5  # a5, a6, a-optout, a8, b4
    assert stats_on["duplicates"] == 2
    accepted = {json.loads(v)["idempotency_key"] for t, v, _ in sent_on if t == NAMES.accepted}
    assert accepted == {
        "a1", "a2", "b1", "a-erase", "a3", "a4", "a-lumen",
        "a7", "a-erase-early", "b2", "b-erase", "b3", "a9", "b5",
    }  # fmt: skip
    ana = resolve_profile(parse_item(_interaction("x", f"{DAY}T10:00:00Z", ANA)), b"k")
    through = {
        r[0]: r[1]
        for r in on.query(
            "SELECT profile_id, toString(max(erased_through)) FROM erase_tombstones GROUP BY 1"
        ).rows
    }
    assert through == {ana: f"{DAY} 11:00:00.000000", BEA: f"{DAY} 12:00:00.000000"}
    kept = {
        r[0]
        for r in on.query(
            "SELECT idempotency_key FROM interactions WHERE space_id = 'acme' "
            "AND profile_id IN ({a:String}, {b:String})",
            {"a": ana, "b": BEA},
        ).rows
    }
    # Each batch's erase takes every row of its person, those of the batch included (a1,
    # a3 and a4 in batch 1; a7 in batch 2, with its second erase); what occurred after
    # the erase and arrived in a later batch stays.
    assert kept == {"a9", "b5"}


@pytest.mark.parametrize("prepare_process", [False, True], ids=["thread", "child"])
def test_an_erase_leaves_no_handle_in_the_workers_cache_of_hashed_handles(
    store: Store, prepare_process: bool
) -> None:
    """The handles hashed in the worker (its block route's, and its batches' when they
    are prepared here) are keys of a cache (core/identity.py): a batch that erases
    someone empties it, in the process that prepared the batch and in the worker's."""
    identity._hashed.cache_clear()  # other tests' handles
    # The block route hashes the handle in the worker's process, the child or not.
    profile_id_for("acme", Handle.model_validate(ANA), b"k")
    assert identity._hashed.cache_info().currsize == 1
    worker = {"topic_prefix": "t", "prepare_process": prepare_process}
    driver = build_parts(
        Settings.model_validate(CONFIG | {"worker": worker}), AsyncStore(store)
    ).ingest
    day = f"{DAY}T"
    batch = [
        _interaction("a1", day + "10:00:00Z", ANA),
        _command("a-erase", day + "11:00:00Z", ANA),
    ]

    async def run() -> None:
        step = await driver.finish(driver.prepare(_records([batch])[0]))
        assert step.done is not None
        step.done()

    try:
        asyncio.run(run())
    finally:
        driver.close()
    assert driver.stats.as_dict()["rows_written"]["commands"] == 1  # the erase was written
    assert identity._hashed.cache_info().currsize == 0


def test_preparing_an_erase_empties_the_cache_of_hashed_handles() -> None:
    """What the child does with its own cache: preparing a batch that erases empties it
    (one without an erase keeps it)."""
    settings = Settings.model_validate(CONFIG)
    day = f"{DAY}T"
    before = _records([[_interaction("a1", day + "10:00:00Z", ANA)]])[0]
    identity._hashed.cache_clear()  # other tests' handles
    prepare_batch(before, settings, NAMES, 1 << 20)
    assert identity._hashed.cache_info().currsize == 1
    erase = _records([[_command("a-erase", day + "11:00:00Z", ANA)]])[0]
    prepare_batch(erase, settings, NAMES, 1 << 20)
    assert identity._hashed.cache_info().currsize == 0
