"""Every verdict, with the natures that lead to it."""

from __future__ import annotations

from typing import Any

from turnstream.models.turns import Claim
from turnstream.sdk.claims import ClaimRecord

from .builders import DEADLINE, PRICE, PROMISE, call, claims, evidence, read, value

SALE = ("R$ 199,90", "money", 199.9, "BRL")
LIST = ("R$ 249,90", "money", 249.9, "BRL")
SPEC = "De R$ 249,90 por R$ 199,90."


def verdicts(records: list[ClaimRecord]) -> list[tuple[str, str, str]]:
    for r in records:  # every record is a valid claim entry of the turn record
        Claim.model_validate(r.as_wire())
    return [(r.category, r.nature, r.verdict) for r in records]


def check(text: str, *mentions: Any, cats: Any = (PRICE,), **ev: Any) -> list[ClaimRecord]:
    return claims(*mentions, categories=cats).check(text, context="chat", evidence=evidence(**ev))


def test_matched_by_a_value_of_its_role_from_a_call_and_a_read() -> None:
    records = check(
        SPEC,
        LIST,
        SALE,
        calls=[call("search", value("price_sale", "money", 199.9, obj="iv:1"))],
        reads=[read("iv:1", value("price_list", "money", 249.9))],
    )
    assert verdicts(records) == [("price", "computed", "matched")] * 2
    assert records[0].evidence == {"kind": "value", "object": "iv:1", "field": "price_list"}
    assert records[1].evidence == {
        "kind": "value",
        "call": "c1",
        "object": "iv:1",
        "field": "price_sale",
    }
    assert [r.action for r in records] == ["none", "none"]


def test_mismatch_when_values_of_the_role_exist_and_none_is_equal() -> None:
    records = check(SPEC, SALE, calls=[call("search", value("price_sale", "money", 189.9))])
    assert verdicts(records) == [("price", "computed", "mismatch")]


def test_same_role_compares_only_with_the_role() -> None:
    # 199.90 is in the turn, but as the list price: the sale price has nothing to check against.
    text = "Sai por R$ 199,90."
    records = check(text, SALE, calls=[call("search", value("price_list", "money", 199.9))])
    assert verdicts(records) == [("price", "computed", "no_evidence")]
    without = dict(PRICE, evidence={"value": {"fresh_for": "claim"}})
    records = check(
        text, SALE, cats=(without,), calls=[call("search", value("price_list", "money", 199.9))]
    )
    assert verdicts(records) == [("price", "computed", "matched")]


def test_unsupported_when_the_number_has_no_origin() -> None:
    records = check("Sai por R$ 199,90.", SALE, calls=[call("search", value("stock", "count", 3))])
    assert verdicts(records) == [("price", "model", "unsupported")]
    assert records[0].action == "warn"  # natures.model


def test_stale_when_every_equal_value_is_older_than_its_claim_age() -> None:
    old = read("iv:1", value("price_sale", "money", 199.9, age=900), ago_s=901)
    assert verdicts(check("Sai por R$ 199,90.", SALE, reads=[old])) == [
        ("price", "computed", "stale")
    ]
    at_limit = read("iv:1", value("price_sale", "money", 199.9, age=900), ago_s=900)
    assert verdicts(check("Sai por R$ 199,90.", SALE, reads=[at_limit])) == [
        ("price", "computed", "matched")
    ]
    no_freshness = dict(PRICE, evidence={"value": {"same_role": True}})
    assert verdicts(check("Sai por R$ 199,90.", SALE, cats=(no_freshness,), reads=[old])) == [
        ("price", "computed", "matched")
    ]


def test_gap_not_stated_until_the_output_says_the_gap() -> None:
    gapped = dict(
        DEADLINE,
        id="lead_time",
        detect={"classes": ["duration"], "terms": ["entrega"]},
        evidence={"value": {"must_state_gaps": True}},
    )
    five = ("5 dias úteis", "duration", 5, "business_day")
    quote = [
        call(
            "shipping_quote",
            value("lead_time", "duration", 5, gaps=["estimativa"], unit="business_day"),
        )
    ]
    said = check("A entrega leva 5 dias úteis.", five, cats=(gapped,), calls=quote)
    assert verdicts(said) == [("lead_time", "computed", "gap_not_stated")]
    assert said[0].evidence["gaps"] == ["estimativa"]
    stated = check(
        "A entrega leva 5 dias úteis. É uma estimativa.", five, cats=(gapped,), calls=quote
    )
    assert verdicts(stated) == [("lead_time", "computed", "matched")]


def test_role_ambiguous_is_never_approved() -> None:
    text = "O preço de R$ 199,90 por unidade."
    records = check(text, SALE, calls=[call("s", value("price_sale", "money", 199.9))])
    assert verdicts(records) == [("price", "computed", "role_ambiguous")]
    assert records[0].action == "warn" and records[0].role is None


def test_quoted_found_and_missing_in_the_turns_documents() -> None:
    text = "O cliente escreveu “paguei R$ 199,90 ontem” no chamado."
    docs = [{"id": "ticket", "text": "Olá, PAGUEI R$ 199,90 ontem e nada chegou."}]
    assert verdicts(check(text, SALE, documents=docs)) == [("price", "quoted", "quoted_found")]
    assert verdicts(check(text, SALE)) == [("price", "quoted", "quoted_missing")]
    for marks in ('"{}"', "«{}»", "\u2018{}\u2019"):
        quoted = "Ele disse " + marks.format("paguei R$ 199,90 ontem") + "."
        assert verdicts(check(quoted, SALE, documents=docs)) == [
            ("price", "quoted", "quoted_found")
        ]


def test_count_handlings_give_not_checked() -> None:
    counted = dict(PRICE, natures={"computed": "count", "quoted": "count"})
    records = check(
        "Sai por R$ 199,90. Ele disse “foi R$ 249,90”.",
        SALE,
        LIST,
        cats=(counted,),
        calls=[call("s", value("price_sale", "money", 189.9))],
    )
    assert verdicts(records) == [
        ("price", "computed", "not_checked"),
        ("price", "quoted", "not_checked"),
    ]
    assert [r.action for r in records] == ["count", "count"]


def test_tool_evidence_no_call_is_no_evidence_a_call_is_matched() -> None:
    text = "A entrega chega em 5 dias úteis."
    five = ("5 dias úteis", "duration", 5, "business_day")
    assert verdicts(check(text, five, cats=(DEADLINE,))) == [
        ("deadline", "computed", "no_evidence")
    ]
    assert verdicts(check(text, five, cats=(DEADLINE,), calls=[call("shipping_quote")])) == [
        ("deadline", "computed", "matched")
    ]
    seven = call("shipping_quote", value("days", "duration", 7, unit="business_day"))
    assert verdicts(check(text, five, cats=(DEADLINE,), calls=[seven])) == [
        ("deadline", "computed", "mismatch")
    ]
    other_tool = call("search_products")
    assert verdicts(check(text, five, cats=(DEADLINE,), calls=[other_tool])) == [
        ("deadline", "computed", "no_evidence")
    ]


def test_tool_any_for_promises() -> None:
    records = check("Enviei o link do carrinho.", cats=(PROMISE,), calls=[call("send_link")])
    assert verdicts(records) == [("action_promise", "model", "matched")]
    records = check("Enviei o link do carrinho.", cats=(PROMISE,), calls=[call("search")])
    assert verdicts(records) == [("action_promise", "model", "no_evidence")]


def test_units_and_dates_must_agree() -> None:
    five_days = ("5 dias", "duration", 5, "day")
    business = call("shipping_quote", value("days", "duration", 5, unit="business_day"))
    assert (
        verdicts(check("A entrega leva 5 dias.", five_days, cats=(DEADLINE,), calls=[business]))[0][
            2
        ]
        == "mismatch"
    )
    date = ("3/12", "date", "--12-03", None)
    on_day = call("shipping_quote", value("eta", "date", "2026-12-03"))
    assert verdicts(check("Chega em 3/12.", date, cats=(DEADLINE,), calls=[on_day]))[0][2] == (
        "matched"
    )
    later = call("shipping_quote", value("eta", "date", "2026-12-04T10:00:00Z"))
    assert verdicts(check("Chega em 3/12.", date, cats=(DEADLINE,), calls=[later]))[0][2] == (
        "mismatch"
    )
