"""The guard's budgets (an injected clock, and one really slow resolver) and streaming."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from turnstream.sdk.claims import ClaimRecord, Claims, Evidence, StateRead

from .builders import NOW, PRICE, PROMISE, call, contract, evidence, read, reader_of, value

SALE = ("R$ 199,90", "money", 199.9, "BRL")
BLOCKING = dict(PRICE, actions={"default": "block"})
OBJ = "iv:991"


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


def stale() -> Evidence:
    return evidence(reads=[read(OBJ, value("price_sale", "money", 199.9), ago_s=3600)])


def fresh_read() -> StateRead:
    return StateRead.model_validate(
        {
            "object": OBJ,
            "at": "2026-11-29T12:00:04Z",
            "values": [
                {"field": "price_sale", "class": "money", "value": 199.9, "claim_age_s": 900}
            ],
        }
    )


def make(clock: Any, resolver: Any = None, cats: Any = (BLOCKING,), reader: Any = None) -> Claims:
    return Claims(
        contract(*cats),
        agent="sales",
        reader=reader or reader_of(SALE),
        clock=clock,
        now=lambda: NOW,
        verify_claim=resolver,
    )


def test_a_resolver_within_300_ms_turns_a_stale_value_into_a_matched_one() -> None:
    clock = FakeClock()
    asked: list[ClaimRecord] = []

    def resolver(claim: ClaimRecord, ev: Evidence) -> StateRead:
        asked.append(claim)
        clock.advance(0.29)
        return fresh_read()

    g = make(clock, resolver).guard_text("Sai por R$ 199,90.", context="chat", evidence=stale())
    assert [c.verdict for c in asked] == ["stale"]
    assert [(c.verdict, c.action) for c in g.claims] == [("matched", "none")]
    assert g.text == "Sai por R$ 199,90." and not g.guard_budget_exceeded


def test_past_the_budget_the_text_goes_as_it_is_and_is_marked() -> None:
    clock = FakeClock()

    def resolver(claim: ClaimRecord, ev: Evidence) -> StateRead:
        clock.advance(0.31)
        return fresh_read()

    g = make(clock, resolver).guard_text("Sai por R$ 199,90.", context="chat", evidence=stale())
    assert g.guard_budget_exceeded and not g.guard_acted
    assert g.text == "Sai por R$ 199,90."
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]  # block not taken


def test_without_a_resolver_the_block_happens() -> None:
    g = make(FakeClock()).guard_text("Sai por R$ 199,90.", context="chat", evidence=stale())
    assert g.text == "Sai por (price on request)." and g.guard_acted
    assert not g.guard_budget_exceeded


def test_a_really_slow_resolver_is_abandoned_at_300_ms() -> None:
    def resolver(claim: ClaimRecord, ev: Evidence) -> StateRead:
        time.sleep(1.5)
        return fresh_read()

    started = time.monotonic()
    g = make(time.monotonic, resolver).guard_text(
        "Sai por R$ 199,90.", context="chat", evidence=stale()
    )
    took = time.monotonic() - started
    assert 0.29 <= took < 1.0
    assert g.guard_budget_exceeded and g.text == "Sai por R$ 199,90."


def test_a_failing_resolver_keeps_the_verdict() -> None:
    def resolver(claim: ClaimRecord, ev: Evidence) -> StateRead:
        raise RuntimeError("store down")

    g = make(FakeClock(), resolver).guard_text(
        "Sai por R$ 199,90.", context="chat", evidence=stale()
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "block")]
    assert not g.guard_budget_exceeded


def chunks(
    text: str, size: int, clock: FakeClock | None = None, pause: float = 0.0
) -> Iterator[str]:
    for i in range(0, len(text), size):
        if clock is not None:
            clock.advance(pause)
        yield text[i : i + size]


STREAM = "Olá! Hoje sai por R$ 199,90. Já reservei o item. Até logo."
CATS = (BLOCKING, dict(PROMISE, actions={"default": "block"}, replace_with="Vou verificar."))


def test_a_stream_gives_what_guard_text_gives() -> None:
    clock = FakeClock()
    c = make(clock, cats=CATS)
    whole = c.guard_text(STREAM, context="chat", evidence=stale())
    stream = c.guard(chunks(STREAM, 7, clock, 0.01), context="chat", evidence=stale())
    out = list(stream)
    assert (
        "".join(out)
        == whole.text
        == "Olá! Hoje sai por (price on request). Vou verificar. Até logo."
    )
    assert len(out) > 1  # it went out sentence by sentence
    assert stream.result is not None
    assert stream.result.claims == whole.claims
    assert stream.result.guard_acted and not stream.result.guard_budget_exceeded


def test_a_candidate_held_past_150_ms_goes_as_it_is() -> None:
    clock = FakeClock()
    c = make(clock, cats=CATS)

    def slow_tail() -> Iterator[str]:
        yield "Hoje sai por R$ 199,90"
        clock.advance(0.16)  # the sentence is still open 160 ms later
        yield " à vista. Já reservei o item. "
        yield "Até logo."

    stream = c.guard(slow_tail(), context="chat", evidence=stale())
    text = "".join(stream)
    assert stream.result is not None and stream.result.guard_budget_exceeded
    assert text.startswith("Hoje sai por R$ 199,90")  # released unchecked
    assert "Vou verificar." in text  # the next sentence was guarded again
    actions = [(c.category, c.action) for c in stream.result.claims]
    assert actions == [("price", "warn"), ("action_promise", "block")]


def test_past_300_ms_of_checks_the_rest_of_the_message_goes_as_it_is() -> None:
    clock = FakeClock()
    base = reader_of(SALE)

    def slow_reader(text: str, lang: str) -> Any:
        clock.advance(0.11)  # every check of the message costs 110 ms
        return base(text, lang)

    c = make(clock, cats=CATS, reader=slow_reader)
    text = "Um. Dois. Três. Hoje sai por R$ 199,90. Já reservei o item. Fim."
    stream = c.guard(chunks(text, 4), context="chat", evidence=stale())
    out = "".join(stream)
    assert out == text  # the claims came after the budget was spent
    assert stream.result is not None and stream.result.guard_budget_exceeded
    assert [(c.verdict, c.action) for c in stream.result.claims] == [
        ("stale", "warn"),
        ("no_evidence", "warn"),
    ]


def test_an_immutable_stream_is_checked_whole_and_a_block_holds_all_of_it() -> None:
    c = make(FakeClock(), cats=(dict(BLOCKING, natures={}),))
    stream = c.guard(
        chunks("Proposta: R$ 199,90. Fim.", 5), context="proposal", evidence=evidence()
    )
    assert list(stream) == []
    assert stream.result is not None and stream.result.held_for_review
    ok = c.guard(
        chunks("Proposta: R$ 199,90.", 5),
        context="proposal",
        evidence=evidence(calls=[call("s", value("price_sale", "money", 199.9))]),
    )
    assert list(ok) == ["Proposta: R$ 199,90."]
