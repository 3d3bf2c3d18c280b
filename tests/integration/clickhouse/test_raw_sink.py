"""The raw sink against real ClickHouse (chDB): exact under every kind of redelivery."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from turnstream.adapters.clickhouse.idempotency_keys import KeyRegistry
from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store
from turnstream.adapters.clickhouse.writer import RawSink
from turnstream.config import MAX_BATCH_SIZE, Settings
from turnstream.core.ingest import Source, decide, refused_key_for
from turnstream.core.rows import Rows, rows_for

pytestmark = pytest.mark.integration

SETTINGS = Settings.model_validate(
    {"identity": {"secret": "k"}, "spaces": {"acme": {"features": ["signals", "turns", "claims"]}}}
)
PHONE = "+5511900005678"


def _item(i: int) -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": "acme",
            "idempotency_key": f"k-{i}",
            "handle": {"type": "phone_e164", "value": PHONE},
            "source": "web",
            "occurred_at": datetime.now(UTC).isoformat(),
            "interaction": {"kind": "engaged", "ref": f"item:{i}", "action": "click"},
        }
    ).encode()


def _rows(offsets: range) -> Rows:
    out: Rows = {}
    now = datetime.now(UTC)
    for o in offsets:
        raw = _item(o) if o % 10 else b"not json"
        decision = decide(raw, Source("in", o % 2, o), SETTINGS, lambda _: None)
        for table, rows in rows_for(decision, SETTINGS, now).items():
            out.setdefault(table, []).extend(rows)
    return out


def _counts(store: Store) -> tuple[int, int]:
    return (
        store.scalar("SELECT count() FROM interactions"),
        store.scalar("SELECT count() FROM dead_letters"),
    )


def test_migrations_are_idempotent(store: Store) -> None:
    assert apply_migrations(store) == []
    tables = {r[0] for r in store.query("SHOW TABLES").rows}
    assert {"turns", "interactions", "outcomes", "commands", "dead_letters"} <= tables


def test_the_same_batch_twice_counts_once(store: Store) -> None:
    rows = _rows(range(0, 40))
    RawSink(store).write(rows)
    RawSink(store).write(rows)  # a fresh sink: the marks it reads skip the batch
    assert _counts(store) == (36, 4)


def test_a_token_a_crash_left_without_its_rows_does_not_drop_them_after_a_restart(
    store: Store,
) -> None:
    """A SIGKILL between ClickHouse logging an insert's token and committing its part
    leaves the token in the table's deduplication log and the rows nowhere. A lightweight
    DELETE leaves the same (the rows gone, the log untouched): the restarted sink, whose
    marks say the rows are missing, writes them, and ClickHouse does not drop them as
    a repeat of the lost insert."""
    rows = _rows(range(0, 40))
    RawSink(store).write(rows)
    for table in (*rows, "sink_marks"):
        store.command(f"DELETE FROM {table} WHERE true")
    assert _counts(store) == (0, 0)
    RawSink(store).write(rows)
    assert _counts(store) == (36, 4)
    assert store.scalar("SELECT count() FROM idempotency_keys") == 40


def test_a_differently_cut_batch_after_a_restart_counts_once(store: Store) -> None:
    RawSink(store).write(_rows(range(0, 25)))
    # After a crash the consumer resumes from an older commit and cuts other batches.
    restarted = RawSink(store)
    restarted.write(_rows(range(10, 33)))
    restarted.write(_rows(range(30, 40)))
    assert _counts(store) == (36, 4)
    offsets = [r[0] for r in store.query("SELECT _offset FROM interactions ORDER BY _offset").rows]
    assert offsets == [o for o in range(40) if o % 10]


def test_no_raw_handle_reaches_the_store(store: Store) -> None:
    RawSink(store).write(_rows(range(0, 20)))
    for table in ("interactions", "dead_letters"):
        columns = [r[0] for r in store.query(f"DESCRIBE TABLE {table}").rows]
        concat = ", ".join(f"toString(`{c}`)" for c in columns)
        hits = store.scalar(
            f"SELECT countIf(position(concat({concat}), '{PHONE}') > 0) FROM {table}"
        )
        assert hits == 0, table


def test_datetimes_round_trip_in_utc(store: Store) -> None:
    RawSink(store).write(_rows(range(1, 2)))
    stored = store.scalar("SELECT toUnixTimestamp64Milli(occurred_at) FROM interactions")
    assert abs(stored / 1000 - datetime.now(UTC).timestamp()) < 60


@pytest.mark.parametrize(
    "key",
    ["plain", "tab\there", "new\nline", "cr\rlf", "back\\slash", "quo'te", "nul\0byte",
     "\\t literally", "ünïcødé \U0001f600", "k\x1facme\x1fpref-1"],
)  # fmt: skip
def test_a_taken_key_is_found_whatever_its_characters(store: Store, key: str) -> None:
    cols = ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"]
    now = datetime.now(UTC)
    store.insert("idempotency_keys", [[key, "acme", now, "in", 1, 7]], cols)
    store.insert("idempotency_keys", [["other" + key, "acme", now, "in", 1, 8]], cols)
    found = KeyRegistry(store).lookup([key, key + "-never-taken"])
    assert found == {key: Source("in", 1, 7)}


def test_a_largest_batch_of_keys_of_256_characters_in_one_look_up(store: Store) -> None:
    # 5 MB of keys (a batch of MAX_BATCH_SIZE): twenty times ClickHouse's max_query_size,
    # had they gone into the SQL. A dedup key is the space and the producer's key, which
    # may be 256 characters.
    keys = [f"k\x1facme\x1f{i:05d}" + "'\\\tç😀"[i % 5] * 251 for i in range(MAX_BATCH_SIZE)]
    assert {len(k) - len("k\x1facme\x1f") for k in keys} == {256}
    cols = ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"]
    now = datetime.now(UTC)
    store.insert(
        "idempotency_keys", [[k, "acme", now, "in", 0, i] for i, k in enumerate(keys[::2])], cols
    )
    found = KeyRegistry(store, cache_size=0).lookup(keys)
    assert found == {k: Source("in", 0, i) for i, k in enumerate(keys[::2])}


def test_the_look_up_table_comes_back_when_the_session_lost_it(store: Store) -> None:
    cols = ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"]
    store.insert("idempotency_keys", [["a", "acme", datetime.now(UTC), "in", 0, 1]], cols)
    registry = KeyRegistry(store, cache_size=0)
    assert registry.lookup(["a", "b"]) == {"a": Source("in", 0, 1)}
    # A server drops an idle session's temporary tables (session_timeout).
    store.command("DROP TEMPORARY TABLE turnstream_key_probe")
    assert registry.lookup(["a", "b"]) == {"a": Source("in", 0, 1)}


def test_the_key_cache_answers_first_and_keeps_the_most_recent(store: Store) -> None:
    """Cached keys are answered from memory, the rest from the store, in one look-up; the
    cache keeps the ``cache_size`` most recently remembered keys."""
    cols = ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"]
    store.insert("idempotency_keys", [["stored", "acme", datetime.now(UTC), "in", 0, 1]], cols)
    registry = KeyRegistry(store, cache_size=2)
    registry.remember("a", Source("in", 1, 1))
    registry.remember("b", Source("in", 1, 2))
    registry.remember("a", Source("in", 1, 1))  # a again: b is now the oldest
    registry.remember("c", Source("in", 1, 3))
    assert registry.lookup(["a", "b", "c", "stored", "a"]) == {
        "a": Source("in", 1, 1),
        "c": Source("in", 1, 3),
        "stored": Source("in", 0, 1),
    }
    # The stored key, found, is remembered too, and a, the oldest remembered, dropped
    # (a look-up answered from the cache does not make a key recent).
    store.command("TRUNCATE TABLE idempotency_keys")
    assert registry.lookup(["a", "c", "stored"]) == {
        "c": Source("in", 1, 3),
        "stored": Source("in", 0, 1),
    }
    assert registry.lookup([]) == {}


def test_the_keys_of_refused_messages_are_read_once_and_kept_in_memory(store: Store) -> None:
    cols = ["dedup_key", "space_id", "ingested_at", "_topic", "_partition", "_offset"]
    now = datetime.now(UTC)
    first, later = refused_key_for(b"wrong"), refused_key_for(b"wrong again")
    store.insert(
        "idempotency_keys", [[first, "", now, "in", 0, 1], ["k", "", now, "in", 0, 2]], cols
    )
    registry = KeyRegistry(store)
    assert registry.refused() == {first: Source("in", 0, 1)}  # not the item's key
    store.insert("idempotency_keys", [[later, "", now, "in", 1, 5]], cols)
    registry.remember(later, Source("in", 1, 5))  # what this worker refuses
    registry.remember("k2", Source("in", 1, 6))
    assert set(registry.refused()) == {first, later}
    store.command("TRUNCATE TABLE idempotency_keys")
    assert set(registry.refused()) == {first, later}  # in memory
    registry.forget()  # a rebalance: read again
    assert registry.refused() == {}
    # A key given back (the store refused its message) is forgotten; another's is not.
    registry.drop("k2", Source("in", 1, 7))
    registry.drop(later, Source("in", 1, 5))
    assert registry.lookup(["k2", later]) == {"k2": Source("in", 1, 6)}


def _turn(key: str, language: str | None) -> bytes:
    item = {
        "type": "turn", "space_id": "acme", "idempotency_key": key,
        "handle": {"type": "phone_e164", "value": PHONE}, "source": "web",
        "occurred_at": datetime.now(UTC).isoformat(), "turn_id": key, "agent": "a",
        "claims": [{"category": "price", "class": "money", "nature": "computed",
                    "value": "1.00", "verdict": "matched", "action": "none"}],
    }  # fmt: skip
    if language is not None:
        item["language"] = language
    return json.dumps(item).encode()


def test_a_turn_s_language_lands_on_the_turn_and_its_claims(store: Store) -> None:
    now = datetime.now(UTC)
    out: Rows = {}
    for o, (key, lang) in enumerate((("t-pt", "pt"), ("t-none", None))):
        decision = decide(_turn(key, lang), Source("in", 0, 900 + o), SETTINGS, lambda _: None)
        for table, rows in rows_for(decision, SETTINGS, now).items():
            out.setdefault(table, []).extend(rows)
    RawSink(store).write(out)
    turns = dict(store.query("SELECT turn_id, language FROM turns ORDER BY turn_id").rows)
    claims = dict(store.query("SELECT turn_id, language FROM turn_claims ORDER BY turn_id").rows)
    assert turns == claims == {"t-none": "", "t-pt": "pt"}
    bad = decide(_turn("t-xx", "fr"), Source("in", 0, 999), SETTINGS, lambda _: None)
    assert "dead_letters" in rows_for(bad, SETTINGS, now)  # a language the SDK never reads
