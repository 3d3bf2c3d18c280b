"""The conversation and turn API: one record per turn, built from what its frame collected.

These use the example retail contract and the SDK's real number reader; records go to a
recorder (a list), and every one is checked against the wire model the worker applies.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.loop_thread import LoopThread
from turnstream.core.exposure_tokens import check_token
from turnstream.errors import TurnstreamError
from turnstream.models import Turn, parse_item
from turnstream.sdk import Conversation, current_frame, exposure_token, turn_key
from turnstream.sdk.claims import ClaimRecord, Evidence, StateRead, fingerprints, load_contract

RETAIL = load_contract(Path(__file__).resolve().parents[3] / "examples/claims/retail.json")
NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
KEY = "conversation-test-key-01"
OBJ = "item_variant:acme:991"
PHONE = {"type": "phone_e164", "value": "+5511900005678"}
PROMPT = "Nunca revele o desconto máximo de 30% que o gerente pode aprovar."


def price(value: float, field: str = "price_sale", age: int = 900) -> dict[str, Any]:
    return {"object": OBJ, "field": field, "class": "money", "value": value, "claim_age_s": age}


def conversation(records: list[dict[str, Any]], **kw: Any) -> Conversation:
    options: dict[str, Any] = {
        "space": "acme", "source": "whatsapp", "agent": "sales-assistant", "handle": PHONE,
        "conversation_id": "wa-8812", "contract": RETAIL, "recorder": records.append,
        "exposure_key": KEY, "now": lambda: NOW, "language": "pt", "context": "chat",
    }  # fmt: skip
    return Conversation(**(options | kw))


def verdicts(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["category"], c["verdict"], c["action"]) for c in record["claims"]]


def test_a_turn_publishes_one_record_with_the_verdicts_of_its_evidence() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records, build="sales@2026.11")
    with conv.turn() as frame:
        call = frame.record_call("search_products", [price(189.9)], at=NOW - timedelta(seconds=5))
        frame.record_read(OBJ, [price(249.9, "price_list")], at=NOW - timedelta(seconds=60))
        frame.record_call("shipping_quote", [
            {"field": "lead_time", "class": "duration", "value": 5, "unit": "business_day"}
        ])  # fmt: skip
        shown = frame.interact({
            "kind": "presented", "list_id": "l1", "list_kind": "search", "visible_k": 3,
            "items": [{"pos": 1, "ref": OBJ, "shown": {"price_sale": 189.9}}],
        })  # fmt: skip
        frame.interact({
            "kind": "preference", "attr": "item_variant.color", "op": "not_in",
            "values": ["black"], "strength": "must_not", "source": "stated",
        })  # fmt: skip
        frame.measure("search_products", sent=2, results_checked=8, violations=1, unverifiable=2)
        conv.agent(
            "De R$ 249,90 por R$ 189,90. A entrega chega em 5 dias úteis. "
            "Já reservei o tamanho M para você. Restam 3 unidades em estoque."
        )
    (record,) = records
    assert call == "c1"
    assert verdicts(record) == [
        ("price", "matched", "none"),
        ("price", "matched", "none"),
        ("deadline", "matched", "none"),
        ("action_promise", "no_evidence", "warn"),  # no reserve_item call in the turn
        ("stock", "unsupported", "warn"),  # no stock value: said by the model
    ]
    assert record["claims"][1]["evidence"] == {"kind": "value", "call": "c1", "object": OBJ,
                                               "field": "price_sale"}  # fmt: skip
    assert record["contract_version"] == "retail-2026-11"
    assert (record["guard_acted"], record["guard_budget_exceeded"]) == (False, False)
    assert record["build"] == "sales@2026.11" and record["turn_id"] == "wa-8812-t1"
    assert record["occurred_at"] == "2026-11-29T12:00:05.000Z"
    assert [i["kind"] for i in record["interactions"]] == ["presented", "preference"]
    assert record["interactions"][0] == shown
    assert shown["exposure_id"] and shown["delivered_at"].startswith("2026-11-29T12:00:05")
    assert record["constraints"] == [{
        "tool": "search_products", "sent": 2, "results_checked": 8, "violations": 1,
        "unverifiable": 2, "relaxed": False,
    }]  # fmt: skip
    assert record["idempotency_key"] == turn_key("acme", "wa-8812", "wa-8812-t1")
    item = parse_item(json.dumps(record).encode())
    assert isinstance(item, Turn) and len(item.claims) == 5


def test_count_mode_marks_what_the_contract_would_block_or_rewrite_and_changes_nothing() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    with conv.turn() as frame:
        frame.record_call("search_products", [price(189.9)], at=NOW - timedelta(seconds=5))
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        conv.agent("Esse tênis sai por R$ 199,90 hoje.")
    # check() says the chat context would rewrite this stale price; count mode took no
    # action, so the record says warn (as when text goes out past the guard's budget).
    with conv.turn() as frame:
        frame.record_call("search_products", [price(189.9)], at=NOW - timedelta(seconds=5))
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        checked = conv.claims.check("Esse tênis sai por R$ 199,90 hoje.")
    assert [(c.verdict, c.action) for c in checked] == [("stale", "rewrite")]
    assert verdicts(records[0]) == [("price", "stale", "warn")]
    assert records[0]["guard_acted"] is False
    assert records[1]["claims"] == []  # check() alone is no output of the turn


def test_the_guard_in_a_turn_puts_its_claims_and_guard_acted_in_the_record() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    with conv.turn() as frame:
        frame.record_call("search_products", [price(189.9)], at=NOW - timedelta(seconds=5))
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        guarded = conv.claims.guard_text("Esse tênis sai por R$ 199,90 hoje.")
        conv.agent(guarded.text)
    assert guarded.text == "Esse tênis sai por R$ 189,90 hoje."
    assert verdicts(records[0]) == [("price", "stale", "rewrite")]
    assert records[0]["guard_acted"] is True


def test_a_streamed_guard_in_a_turn_is_recorded_once_exhausted() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    with conv.turn() as frame:
        frame.record_call("search_products", [price(189.9)], at=NOW - timedelta(seconds=5))
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        said = "".join(conv.claims.guard(iter(["Esse tênis sai ", "por R$ 199,90 hoje. ", "Ok?"])))
    assert said == "Esse tênis sai por R$ 189,90 hoje. Ok?"
    assert verdicts(records[0]) == [("price", "stale", "rewrite")]
    assert records[0]["guard_acted"] is True


class JumpingClock:
    """Monotonic seconds that jump 0.2 s at every reading: any guard runs past 300 ms."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.2
        return self.t


def test_a_guard_past_its_budget_marks_the_turn_and_lets_the_text_go() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records, clock=JumpingClock())
    asked: list[str] = []

    @conv.verify_claim
    def resolver(claim: ClaimRecord, evidence: Evidence) -> StateRead | None:
        asked.append(claim.category)
        return None

    with conv.turn() as frame:
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        guarded = conv.claims.guard_text("Esse tênis sai por R$ 199,90 hoje.")
        conv.agent(guarded.text)
    assert guarded.text == "Esse tênis sai por R$ 199,90 hoje."  # went as it was
    assert records[0]["guard_budget_exceeded"] is True and records[0]["guard_acted"] is False
    assert verdicts(records[0]) == [("price", "stale", "warn")]


def test_the_resolver_registered_on_the_conversation_reads_again() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)

    @conv.verify_claim
    def resolver(claim: ClaimRecord, evidence: Evidence) -> StateRead | None:
        return StateRead.model_validate(
            {"object": OBJ, "at": NOW.isoformat(), "values": [price(199.9)]}
        )

    with conv.turn() as frame:
        frame.record_read(OBJ, [price(199.9)], at=NOW - timedelta(hours=1))
        guarded = conv.claims.guard_text("Esse tênis sai por R$ 199,90 hoje.")
        conv.agent(guarded.text)
    assert verdicts(records[0]) == [("price", "matched", "none")]


def test_internal_text_never_reaches_the_record() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records, prompt_fingerprints=fingerprints(PROMPT))
    output = f"Claro! {PROMPT} Posso ajudar?"
    with conv.turn():
        conv.agent(output)
    with conv.turn():
        guarded = conv.claims.guard_text(output)
        conv.agent(guarded.text)
    for record in records:
        (claim,) = record["claims"]
        assert (claim["category"], claim["verdict"], claim["value"]) == (
            "internal_text", "internal_text_found", None,
        )  # fmt: skip
        dumped = json.dumps(record, ensure_ascii=False)
        for word in ("revele", "desconto", "gerente", "aprovar", "Claro"):
            assert word not in dumped
    assert records[0]["claims"][0]["action"] == "warn"  # count mode: the text went out
    assert records[1]["claims"][0]["action"] == "block" and records[1]["guard_acted"] is True
    assert "revele" not in guarded.text


def test_the_idempotency_key_is_the_turn_s_own() -> None:
    first: list[dict[str, Any]] = []
    again: list[dict[str, Any]] = []
    for records in (first, again):
        conv = conversation(records)
        for _ in range(2):
            with conv.turn():
                conv.agent("Restam 3 unidades em estoque.")
        with conv.turn(turn_id="retry-me"):
            pass
    assert first == again  # the same turns built again: the same records, the same keys
    keys = [r["idempotency_key"] for r in first]
    assert len(set(keys)) == 3
    assert keys[2] == turn_key("acme", "wa-8812", "retry-me")
    assert turn_key("acme", "wa-8813", "retry-me") != keys[2]
    assert turn_key("lumen", "wa-8812", "retry-me") != keys[2]
    assert len(turn_key("acme", "c" * 256, "t" * 256)) <= 256


def test_a_turn_whose_body_raised_still_publishes_what_it_collected() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    with pytest.raises(RuntimeError, match="the model timed out"), conv.turn() as frame:
        frame.interact({"kind": "presented", "list_id": "l1", "list_kind": "search",
                        "visible_k": 1, "items": [{"pos": 1, "ref": OBJ}]})  # fmt: skip
        frame.measure("search_products", sent=1, results_checked=1, violations=0, unverifiable=0)
        raise RuntimeError("the model timed out")
    (record,) = records
    assert [i["kind"] for i in record["interactions"]] == ["presented"]
    assert record["claims"] == [] and len(record["constraints"]) == 1
    assert current_frame() is None


def test_an_interrupted_turn_publishes_nothing_but_keeps_its_record() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    scope = conv.turn()
    with pytest.raises(KeyboardInterrupt), scope:
        conv.agent("Restam 3 unidades em estoque.")
        raise KeyboardInterrupt
    assert records == []
    assert scope.frame.record is not None and len(scope.frame.record["claims"]) == 1


def test_the_frame_is_reachable_by_tools_that_never_see_the_conversation() -> None:
    """The hook issue 13's bound tools use: ``current_frame()`` inside the turn."""

    def search_tool(color: str) -> list[dict[str, Any]]:
        results = [{"id": OBJ, "color": "navy", "price": 189.9}]
        frame = current_frame()
        assert frame is not None
        frame.record_call("search_products", [price(189.9)], args={"color": color},
                          result=results)  # fmt: skip
        frame.measure("search_products", sent=1, results_checked=1, violations=0,
                      unverifiable=0, relaxed=True)  # fmt: skip
        return results

    records: list[dict[str, Any]] = []
    conv = conversation(records)
    assert current_frame() is None
    with conv.turn() as frame:
        search_tool("navy")
        conv.agent("Sai por R$ 189,90.")
    assert frame.calls[0].args == {"color": "navy"} and frame.calls[0].result[0]["id"] == OBJ
    assert "args" not in json.dumps(records[0])  # arguments and raw results are not published
    assert records[0]["constraints"][0]["relaxed"] is True
    assert verdicts(records[0]) == [("price", "matched", "none")]


def test_misuse_is_named() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    with pytest.raises(TurnstreamError, match=r"inside conversation\.turn"):
        conv.agent("hello")
    with conv.turn() as frame:
        conv.agent("hello")
        with pytest.raises(TurnstreamError, match="one output per turn"):
            conv.agent("again")
        with pytest.raises(TurnstreamError, match="already has a call 'c1'"):
            frame.record_call("t", id="c1")
            frame.record_call("t", id="c1")
        with pytest.raises(TurnstreamError, match="violations"):
            frame.measure("t", sent=1, results_checked=1, violations=2, unverifiable=0)
    with pytest.raises(TurnstreamError, match="exactly one of handle and profile_id"):
        Conversation(space="acme", source="web", agent="a")
    without = Conversation(space="acme", source="web", agent="a", profile_id="p_1",
                           recorder=records.append)  # fmt: skip
    with without.turn():
        without.agent("Sai por R$ 189,90.")
    assert records[-1]["claims"] == [] and "contract_version" not in records[-1]


def test_a_record_the_worker_would_refuse_fails_at_the_turn() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records, source="")
    with pytest.raises(Exception, match="source"), conv.turn():
        pass
    assert records == []


# --------------------------------------------------------------------------- async, threads


class LoopPublisher:
    """A publisher on an event loop in another thread, as ``Producer`` runs under a sync
    agent: records what it was asked to publish (the real broker is in the integration
    test)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.settings = None
        self.published: list[dict[str, Any]] = []

    async def publish(self, item: dict[str, Any]) -> None:
        assert asyncio.get_running_loop() is self.loop
        self.published.append(item)


@pytest.fixture
def publisher(loop_thread: LoopThread) -> LoopPublisher:
    return LoopPublisher(loop_thread.loop)


def test_a_sync_turn_publishes_through_the_producer_s_loop(publisher: LoopPublisher) -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records, producer=publisher)
    with conv.turn():
        conv.agent("Restam 3 unidades em estoque.")
    assert publisher.published == records and len(records) == 1


def test_an_async_turn_awaits_the_producer_and_an_async_recorder() -> None:
    class AsyncPublisher:
        loop = None
        settings = None

        def __init__(self) -> None:
            self.published: list[dict[str, Any]] = []

        async def publish(self, item: dict[str, Any]) -> None:
            await asyncio.sleep(0)
            self.published.append(item)

    recorded: list[dict[str, Any]] = []

    async def recorder(record: dict[str, Any]) -> None:
        await asyncio.sleep(0)
        recorded.append(record)

    async def agent() -> tuple[AsyncPublisher, str]:
        producer = AsyncPublisher()
        conv = conversation([], recorder=recorder, producer=producer)
        async with conv.turn() as frame:
            shown = frame.interact({"kind": "presented", "list_id": "l", "list_kind": "search",
                                    "visible_k": 1, "items": [{"pos": 1, "ref": OBJ}]})  # fmt: skip
            await asyncio.sleep(0)
            token = exposure_token(shown["exposure_id"], 1)  # the turn's space and key
            conv.agent("Restam 3 unidades em estoque.")
        return producer, token

    producer, token = asyncio.run(agent())
    assert producer.published == recorded and len(recorded) == 1
    assert check_token(token, "acme", [KEY.encode()]).status == "valid"


def test_a_sync_turn_inside_the_producer_s_own_loop_says_to_use_async_with() -> None:
    class SameLoopPublisher:
        settings = None

        def __init__(self) -> None:
            self.loop: asyncio.AbstractEventLoop | None = None

        async def publish(self, item: dict[str, Any]) -> None:  # pragma: no cover
            raise AssertionError("must not be reached")

    async def agent() -> None:
        producer = SameLoopPublisher()
        producer.loop = asyncio.get_running_loop()
        conv = conversation([], producer=producer)
        with conv.turn():
            pass

    with pytest.raises(TurnstreamError, match=r"async with conversation\.turn"):
        asyncio.run(agent())


def test_turns_of_concurrent_tasks_keep_their_own_frames() -> None:
    async def one(conv: Conversation, n: int) -> None:
        async with conv.turn(turn_id=f"t{n}") as frame:
            await asyncio.sleep(0.01 * (3 - n))
            assert current_frame() is frame
            frame.measure(f"tool{n}", sent=n, results_checked=n, violations=0, unverifiable=0)

    records: list[dict[str, Any]] = []

    async def main() -> None:
        convs = [conversation(records, conversation_id=f"c{n}") for n in range(1, 3)]
        await asyncio.gather(*(one(c, n) for n, c in enumerate(convs, 1)))

    asyncio.run(main())
    tools = {r["turn_id"]: [c["tool"] for c in r["constraints"]] for r in records}
    assert tools == {"t1": ["tool1"], "t2": ["tool2"]}


def test_a_failed_publish_raises_unless_the_body_did(caplog: pytest.LogCaptureFixture) -> None:
    def broken(record: dict[str, Any]) -> None:
        raise ConnectionError("broker down")

    conv = conversation([], recorder=broken)
    with pytest.raises(ConnectionError, match="broker down"), conv.turn() as frame:
        conv.agent("Restam 3 unidades em estoque.")
    assert frame.record is not None  # kept, to publish again with the same key
    with pytest.raises(ValueError, match="the body's"), conv.turn():
        raise ValueError("the body's")
    assert "could not be published" in caplog.text and "+5511" not in caplog.text


def test_values_of_a_declared_type_take_its_class_and_claim_age() -> None:
    from turnstream.models.object_types import load_types

    types = load_types(Path(__file__).resolve().parents[3] / "examples/types.toml")
    declared = types.field("item_variant.price_sale")
    assert declared is not None and declared.claim_age == timedelta(hours=1)
    records: list[dict[str, Any]] = []
    conv = conversation(records, types=types)
    for minutes in (10, 90):  # within the type's claim age (1 h), then past it
        with conv.turn() as frame:
            frame.record_read(
                OBJ,
                [{"object": OBJ, "field": "price_sale", "value": 189.9}],
                at=NOW - timedelta(minutes=minutes),
                type="item_variant",
            )
            conv.agent("Por R$ 189,90.")
        (value,) = frame.reads[0].values
        assert (value.class_, value.claim_age_s) == ("money", 3600.0)
    fresh, old = (verdicts(r) for r in records)
    assert fresh == [("price", "matched", "none")]
    assert old != fresh and old[0][1] != "matched"  # too old for a claim
    with conv.turn() as frame, pytest.raises(TurnstreamError, match=r"values\.0\.field"):
        frame.record_call(
            "search_products", [{"field": "flavour", "value": 1}], type="item_variant"
        )
    with conv.turn() as frame, pytest.raises(TurnstreamError, match="'shoe'"):
        frame.record_read(OBJ, [], type="shoe")


@pytest.mark.parametrize(
    ("interaction", "says"),
    [
        ({"kind": "preference", "attr": "color", "op": "in", "values": ["red"],
          "strength": "must", "source": "stated"},
         r"interaction\.attr: .*\(got 'color'\)"),
        ({"kind": "preference", "attr": "item_variant.color", "op": "in", "values": []},
         r"interaction\.values: .*; interaction\.strength: required; "
         r"interaction\.source: required"),
        ({"kind": "bogus"}, r"interaction\.kind: 'bogus' is not a kind \(one of .*presented"),
        ({"ref": "x"}, r"interaction\.kind: required"),
        ({"kind": "engaged", "ref": "x"}, r"interaction\.action: required"),
        ({"kind": "seen", "exposure_id": "x", "max_index_seen": 1},
         r"interaction\.exposure_id: must be a UUID"),
    ],
)  # fmt: skip
def test_an_invalid_interaction_says_what_to_fix(interaction: dict[str, Any], says: str) -> None:
    conv = conversation([])
    with pytest.raises(TurnstreamError, match=says) as raised, conv.turn() as frame:
        frame.interact(interaction)
    assert "tagged-union" not in str(raised.value) and "function-after" not in str(raised.value)


def test_a_turn_with_an_invalid_interaction_is_refused_whole() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)
    # the body caught the error and went on: leaving the turn raises it again
    refused = pytest.raises(TurnstreamError, match=r"refused whole, not published: .*strength")
    with refused, conv.turn() as frame:
        frame.interact({"kind": "engaged", "ref": OBJ, "action": "click"})
        with pytest.raises(TurnstreamError):
            frame.interact({"kind": "preference", "attr": "item_variant.color",
                            "op": "in", "values": ["red"], "source": "stated"})  # fmt: skip
        conv.agent("Restam 3 unidades em estoque.")
    # the body let it go on: that error goes on, and nothing is published either
    with pytest.raises(TurnstreamError, match=r"interaction\.action"), conv.turn() as frame:
        frame.interact({"kind": "engaged", "ref": OBJ})
    assert records == []
    with conv.turn() as frame:  # the next turn is its own
        frame.interact({"kind": "engaged", "ref": OBJ, "action": "click"})
    assert len(records) == 1 and len(records[0]["interactions"]) == 1


def test_the_record_names_the_language_its_output_was_read_in() -> None:
    records: list[dict[str, Any]] = []
    conv = conversation(records)  # language="pt" on the conversation
    with conv.turn():
        conv.agent("Restam 3 unidades em estoque.")
    with conv.turn():
        conv.agent("Only 3 left in stock.", language="en")
    with conv.turn():
        pass  # no output: the conversation's language all the same
    assert [r.get("language") for r in records] == ["pt", "en", "pt"]
    parse_item(json.dumps(records[1]).encode())
