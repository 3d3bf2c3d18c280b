"""The ingest use case on fake ports (no store): its store calls in order, the erasure
only for a batch that erases, a message the raw tables refuse dead-lettered, and what
the store refused the first time refused again."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from turnstream.adapters.clickhouse.bisect import Isolated, Refused
from turnstream.adapters.clickhouse.erasure import Erasure
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.erasure import Subject, Tombstones
from turnstream.core.ingest import REFUSED_PREFIX, Reason, Source
from turnstream.core.rows import BatchRows, Rows, as_dicts
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream.service.ingest import Ingest

SETTINGS = Settings.model_validate(
    {"identity": {"secret": "s"}, "spaces": {"acme": {"features": ["signals", "turns"]}}}
)
NAMES = TopicNames("t")
TOPIC = NAMES.input("interaction")
NOW = datetime.now(UTC).replace(microsecond=0)


def _line(n: int, **extra: Any) -> bytes:
    item = {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": f"k-{n}",
        "profile_id": f"p-{n}",
        "source": "web",
        "occurred_at": NOW.isoformat(),
        "interaction": {"kind": "engaged", "ref": f"item:{n}", "action": "click"},
    }
    return json.dumps(item | extra).encode()


def _erase(n: int, person: int) -> bytes:
    item = {
        "type": "command",
        "space_id": "acme",
        "idempotency_key": f"k-{n}",
        "profile_id": f"p-{person}",
        "source": "desk",
        "occurred_at": NOW.isoformat(),
        "command": "erase",
    }
    return json.dumps(item).encode()


def _records(lines: list[bytes]) -> list[Any]:
    return [
        SimpleNamespace(topic=TOPIC, partition=0, offset=i, value=raw, key=None)
        for i, raw in enumerate(lines)
    ]


class _Ports:
    """Keys, raw tables and erasures in memory, recording what the use case asks."""

    def __init__(
        self, refuse: frozenset[int] = frozenset(), before: dict[int, str] | None = None
    ) -> None:
        self.refuse = refuse
        self.before = before or {}
        self.keys: dict[str, Source] = {}
        self.written: list[dict[str, Any]] = []
        self.log: list[str] = []

    def lookup(self, keys: Iterable[str]) -> dict[str, Source]:
        self.log.append("lookup")
        return {k: self.keys[k] for k in keys if k in self.keys}

    def remember(self, key: str, source: Source) -> None:
        self.keys[key] = source

    def drop(self, key: str, source: Source) -> None:
        if self.keys.get(key) == source:
            del self.keys[key]

    def refused(self) -> dict[str, Source]:
        return {k: s for k, s in self.keys.items() if k.startswith(REFUSED_PREFIX)}

    def write(
        self, rows: BatchRows, order: Sequence[Source], replace: Callable[[Refused], Rows]
    ) -> Isolated:
        self.log.append("write")
        done = Isolated()
        for source in order:
            if source.offset in self.refuse:
                refused = Refused(source, "interactions", "CHECK no")
                done.refused.append(refused)
                for table, batch in replace(refused).items():
                    self.written += [r | {"table": table} for r in batch]
        for table, batch in rows.items():
            self.written += [
                r | {"table": table} for r in as_dicts(batch) if r["_offset"] not in self.refuse
            ]
        return done

    def refused_before(self, sources: Sequence[Source]) -> dict[Source, str]:
        return {s: self.before[s.offset] for s in sources if s.offset in self.before}

    def forget(self) -> None:
        self.log.append("forget")

    def load_tombstones(self) -> dict[Subject, datetime]:
        self.log.append("load tombstones")
        return {}

    def record_tombstones(self, tombstones: Tombstones) -> None:
        self.log.append(f"tombstones {sorted(p for _, p in tombstones)}")

    def erase(self, subjects: Sequence[Subject]) -> list[Erasure]:
        self.log.append(f"erase {sorted(p for _, p in subjects)}")
        return []


def _ingest(ports: _Ports) -> Ingest:
    def prepare(messages: list[Any], fanout_max_bytes: int, received_at: Any = None) -> Any:
        return prepare_batch(messages, SETTINGS, NAMES, fanout_max_bytes, received_at)

    return Ingest(SETTINGS, NAMES.dead_letters, prepare, ports, ports, ports)


def _one_by_one(ingest: Ingest, lines: list[bytes]) -> list[Any]:
    """The decisions of ``lines``, each consumed in a batch of its own."""
    return [
        d
        for record in _records(lines)
        for d in ingest.batch(ingest.prepare([record], 1 << 20)).run().decisions
    ]


def _written(ports: _Ports) -> list[tuple[str, int]]:
    return sorted((r["table"], r["_offset"]) for r in ports.written)


#: A refused line 0 sent twice, then fixed (line 2) and sent twice: what is written.
_ONE_LETTER_AND_THE_FIXED_ITEM = [
    ("dead_letters", 0),
    ("idempotency_keys", 0),
    ("idempotency_keys", 2),
    ("interactions", 2),
]


def _run(ingest: Ingest, lines: list[bytes]) -> tuple[list[str], Any]:
    batch = ingest.batch(ingest.prepare(_records(lines), 1 << 20))
    names = []
    for what, call in batch.calls():
        names.append(what)
        call()
    return names, batch.settled


def test_the_store_calls_run_in_order_and_the_erasure_only_when_the_batch_erases() -> None:
    ports = _Ports()
    ingest = _ingest(ports)
    calls, settled = _run(ingest, [_line(0), _line(1)])
    assert calls == ["key look-up", "write"]
    assert settled.accepted == [True, True] and sum(settled.written.values()) == 0

    calls, settled = _run(ingest, [_line(2), _erase(3, person=2), _line(0)])
    assert calls == ["key look-up", "write", "erasure"]
    assert settled.decisions[2].duplicate  # k-0, taken by the first batch
    # The tombstones are loaded once, recorded before the erasure.
    assert ports.log == [
        "load tombstones", "lookup", "write", "lookup", "write", "tombstones ['p-2']",
        "erase ['p-2']",
    ]  # fmt: skip
    assert ingest.tombstones == {("acme", "p-2"): NOW}


def test_a_message_the_raw_tables_refuse_becomes_a_store_refused_dead_letter() -> None:
    ports = _Ports(refuse=frozenset({1}))
    _, settled = _run(_ingest(ports), [_line(0), _line(1), _line(2)])
    refused = settled.decisions[1]
    assert refused.refusal is not None and refused.refusal.reason is Reason.store_refused
    assert refused.refusal.message == "interactions refused it: CHECK no"
    assert settled.accepted == [True, False, True]
    assert [topic for topic, _, _ in settled.sends[1]] == [NAMES.dead_letters]
    assert [r["_offset"] for r in ports.written if r["table"] == "dead_letters"] == [1]


def test_what_the_store_refused_the_first_time_is_refused_again() -> None:
    ports = _Ports(before={0: "interactions refused it: CHECK no"})
    _, settled = _run(_ingest(ports), [_line(0), _line(1)])
    first = settled.decisions[0]
    assert first.refusal is not None and first.refusal.reason is Reason.store_refused
    assert settled.accepted == [False, True]
    assert not [r for r in ports.written if r["_offset"] == 0 and r["table"] == "interactions"]


def test_an_item_refused_at_a_time_edge_is_accepted_when_sent_again_fixed() -> None:
    ports = _Ports()
    ingest = _ingest(ports)
    wrong, fixed = _line(0, occurred_at="2350-01-01T00:00:00Z"), _line(0)
    refused, same_bytes, accepted, again, wrong_again = _one_by_one(
        ingest, [wrong, wrong, fixed, fixed, wrong]
    )
    assert refused.refusal is not None and refused.refusal.reason is Reason.ahead_of_clock
    assert same_bytes.duplicate  # the same wrong bytes: one dead letter
    assert not accepted.duplicate and accepted.refusal is None
    assert again.duplicate and wrong_again.duplicate
    # The refusal took the digest of its bytes; the item's key, the fixed item.
    assert ports.keys == {refused.taken_key: refused.source, accepted.dedup_key: accepted.source}
    assert _written(ports) == _ONE_LETTER_AND_THE_FIXED_ITEM


def test_an_item_the_store_refused_leaves_its_key_free_for_the_item_corrected() -> None:
    ports = _Ports(refuse=frozenset({0}))
    ingest = _ingest(ports)
    wrong, fixed = _line(0, source="bad"), _line(0)
    refused, same_bytes, accepted, again = _one_by_one(ingest, [wrong, wrong, fixed, fixed])
    assert refused.refusal is not None and refused.refusal.reason is Reason.store_refused
    assert same_bytes.duplicate  # the same bytes: one dead letter, no row
    assert not accepted.duplicate and accepted.refusal is None
    assert again.duplicate
    # The item's key, taken at the look-up, was given back: the digest of the bytes.
    assert ports.keys == {refused.taken_key: refused.source, accepted.dedup_key: accepted.source}
    assert _written(ports) == _ONE_LETTER_AND_THE_FIXED_ITEM


def test_a_correction_later_in_a_batch_consumed_again_takes_the_key() -> None:
    # Redelivered after a crash: 0 was refused the first time, 1 (its correction) landed.
    ports = _Ports(before={0: "interactions refused it: CHECK no"})
    _, settled = _run(_ingest(ports), [_line(0, source="bad"), _line(0)])
    first, corrected = settled.decisions
    assert first.refusal is not None and first.refusal.reason is Reason.store_refused
    assert not corrected.duplicate and settled.accepted == [False, True]
    assert ports.keys == {first.taken_key: first.source, corrected.dedup_key: corrected.source}
