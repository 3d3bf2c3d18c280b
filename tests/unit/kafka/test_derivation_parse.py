"""The derivation driver's parse of accepted messages: the same events as the standard
library's JSON gives, whichever parser reads a message."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from aiokafka import TopicPartition

from tests.unit.core.derivation.test_events import ENVELOPE, PRESENTED, accepted
from turnstream.core.derivation import events_from_accepted, holds_no_events
from turnstream.entrypoints.kafka.derivation_driver import parse_accepted

TOPIC = "t.accepted"


def records(values: list[bytes]) -> list[Any]:
    return [
        SimpleNamespace(topic=TOPIC, partition=n % 2, offset=n, value=v, key=None)
        for n, v in enumerate(values)
    ]


def standard(value: bytes) -> list[Any]:
    return events_from_accepted(json.loads(value))


ITEMS: list[dict[str, Any]] = [
    {**ENVELOPE, "type": "interaction", "for": "gift", "interaction": PRESENTED},
    {
        **ENVELOPE,
        "type": "turn",
        "session_id": "sess-é",
        "turn_id": "t-1",
        "agent": "seller",
        "interactions": [
            PRESENTED,
            {"kind": "seen", "exposure_id": PRESENTED["exposure_id"], "max_index_seen": 2},
        ],
    },
    {
        **ENVELOPE,
        "type": "outcome",
        "outcome": "purchase",
        "ref": "item_variant:acme:991",
        "order_id": "o-1",
        "attrs": {"preço": 1e308, "tiny": 5e-324, "n": -(2**63)},
    },
]


def test_the_events_are_the_standard_librarys() -> None:
    values = [json.dumps(accepted(item), ensure_ascii=False).encode() for item in ITEMS]
    parsed = parse_accepted(records(values))
    assert [offset for _, offset, _ in parsed] == [0, 1, 2]
    assert [tp for tp, _, _ in parsed] == [TopicPartition(TOPIC, n % 2) for n in range(3)]
    assert [events for _, _, events in parsed] == [standard(v) for v in values]
    assert [len(events) for _, _, events in parsed] == [1, 2, 1]


def test_what_orjson_refuses_is_read_by_the_standard_library() -> None:
    # Beyond 64 bits (orjson would read a float), NaN, 1e400 and a lone surrogate.
    message = accepted({**ITEMS[2], "attrs": {}})
    text = json.dumps(message)
    values = [
        text.replace('"attrs": {}', f'"attrs": {{"big": {2**70 + 1}}}').encode(),
        text.replace('"attrs": {}', '"attrs": {"nan": NaN}').encode(),
        text.replace('"attrs": {}', '"attrs": {"s": "\\ud800"}').encode(),
        text.replace('"attrs": {}', '"attrs": {"inf": 1e400}').encode(),
    ]
    assert all(v != text.encode() for v in values)
    parsed = parse_accepted(records(values))
    [big], [nan], [lone], [inf] = (events for _, _, events in parsed)
    assert big.payload["attrs"] == {"big": 2**70 + 1}
    assert nan.payload["attrs"]["nan"] != nan.payload["attrs"]["nan"]
    assert lone.payload["attrs"] == {"s": "\ud800"}
    assert inf.payload["attrs"] == {"inf": float("inf")}
    assert [big, lone, inf] == [standard(values[n])[0] for n in (0, 2, 3)]


def test_an_unreadable_message_gives_no_events_and_the_rest_go_on() -> None:
    good = json.dumps(accepted(ITEMS[0])).encode()
    unreadable = [b'{"type": "interaction", "sp', b'{"type": "x"}', b"[1, 2]", b'"x"']
    parsed = parse_accepted(records([*unreadable, good]))
    assert [events for _, _, events in parsed][:4] == [[], [], [], []]
    assert parsed[4][2] == standard(good)


def _accepted_messages(n: int) -> list[bytes]:
    """The accepted messages the ingest rule makes of ``n`` mixed items."""
    from tests.unit.core.test_accepted_message import SETTINGS
    from turnstream.core.ingest import Source, decide
    from turnstream.core.messages import accepted_for
    from turnstream_dev.sample import mixed_items

    out = []
    for i, raw in enumerate(mixed_items(n=n, bad=n // 100, seed=11).lines):
        decision = decide(raw, Source("t.in", 0, i), SETTINGS, lambda _key: None)
        if decision.item is not None and decision.profile_id is not None:
            out.append(accepted_for(decision))
    return out


def test_a_message_read_as_eventless_from_its_bytes_gives_no_events() -> None:
    values = _accepted_messages(2_000)
    skipped = [v for v in values if holds_no_events(v)]
    # The fast path takes every turn without interactions, and only messages without events.
    eventless_turns = [
        v for v in values if json.loads(v)["type"] == "turn" and not json.loads(v)["interactions"]
    ]
    assert skipped == eventless_turns and len(skipped) > 100
    assert all(standard(v) == [] for v in skipped)
    parsed = parse_accepted(records(values))
    assert [events for _, _, events in parsed] == [standard(v) for v in values]


def test_a_turn_with_interactions_is_read_whatever_its_values_spell() -> None:
    turn = {**ENVELOPE, "type": "turn", "turn_id": "t-2", "agent": "seller"}
    message = accepted({**turn, "interactions": [PRESENTED]})
    # A key "interactions" holding [] somewhere inside the turn's own interactions (the
    # contract's shown values are scalars, so only a hand-made message has one): the
    # turn's interactions are not empty, and the message is read.
    message["interactions"][0]["items"][0]["interactions"] = []
    value = json.dumps(message, separators=(",", ":")).encode()
    assert value.startswith(b'{"type":"turn"') and b'"interactions":[]' in value
    assert not holds_no_events(value)
    assert len(parse_accepted(records([value]))[0][2]) == 1
    # An empty turn spelled otherwise than the ingest spells it (spaces): read, not skipped.
    empty = accepted({**turn, "interactions": []})
    assert not holds_no_events(json.dumps(empty).encode())
    assert holds_no_events(json.dumps(empty, separators=(",", ":")).encode())
