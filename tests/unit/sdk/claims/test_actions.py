"""Every action, the five conditions of a rewrite (each failing alone), immutable outputs."""

from __future__ import annotations

from typing import Any

import pytest

from .builders import DEADLINE, PRICE, PROMISE, call, claims, evidence, read, value

SALE = ("R$ 199,90", "money", 199.9, "BRL")
OLD_OBJ = "iv:991"


def stale_then_fresh(
    field: str = "price_sale", cls: str = "money", old: Any = 199.9, new: Any = 189.9
) -> dict[str, Any]:
    """The number copies a read 1 h old (claim age 15 min); a call just now has the new value."""
    return {
        "reads": [read(OLD_OBJ, value(field, cls, old), ago_s=3600)],
        "calls": [call("search", value(field, cls, new, obj=OLD_OBJ))],
    }


def guard(
    text: str,
    *mentions: Any,
    cats: Any = (PRICE,),
    context: str = "chat",
    immutable: bool = False,
    **ev: Any,
):
    return claims(*mentions, categories=cats).guard_text(
        text, context=context, immutable=immutable, evidence=evidence(**ev)
    )


def test_rewrite_when_all_five_conditions_hold() -> None:
    g = guard("Hoje sai por R$ 199,90.", SALE, **stale_then_fresh())
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "rewrite")]
    assert g.text == "Hoje sai por R$ 189,90."
    assert g.guard_acted and not g.held_for_review
    assert "rewrite_to" not in g.claims[0].as_wire()  # the record keeps the wire fields only


def test_rewrite_keeps_how_the_number_was_written() -> None:
    big = ("$1,299.00", "money", 1299.0, "$")
    g = guard("Now $1,299.00 only.", big, **stale_then_fresh(old=1299.0, new=1199.5))
    assert g.text == "Now $1,199.50 only."
    pct = dict(
        PRICE,
        id="discount",
        detect={"classes": ["percent"]},
        evidence={"value": {"fresh_for": "claim"}},
    )
    g = guard(
        "Desconto de 15% hoje.",
        ("15%", "percent", 15, "%"),
        cats=(pct,),
        **stale_then_fresh("discount", "percent", 15, 10),
    )
    assert g.text == "Desconto de 10% hoje."


def test_condition_1_an_immutable_output_is_never_rewritten() -> None:
    g = guard("Hoje sai por R$ 199,90.", SALE, immutable=True, **stale_then_fresh())
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]
    assert g.text == "Hoje sai por R$ 199,90." and not g.guard_acted


def test_condition_2_only_money_percent_date_duration() -> None:
    dose = dict(
        PRICE, id="dose", detect={"classes": ["dosage"]}, evidence={"value": {"fresh_for": "claim"}}
    )
    g = guard(
        "Tome 500 mg.",
        ("500 mg", "dosage", 500, "mg"),
        cats=(dose,),
        **stale_then_fresh("dose", "dosage", 500, 250),
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]
    assert g.text == "Tome 500 mg."


def test_condition_3_a_range_is_never_rewritten() -> None:
    rng = ("R$ 199,90 a R$ 249,90", "money", (199.9, 249.9), "BRL")
    g = guard(
        "Sai por R$ 199,90 a R$ 249,90.",
        rng,
        **stale_then_fresh(old=(199.9, 249.9), new=(189.9, 239.9)),
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]


def test_condition_4_the_verdict_is_stale_and_copies_one_field_of_one_object() -> None:
    # mismatch, not stale: warn.
    g = guard(
        "Hoje sai por R$ 199,90.", SALE, calls=[call("s", value("price_sale", "money", 189.9))]
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("mismatch", "warn")]
    # stale, but two objects held that value: which one's fresh value? warn.
    two = stale_then_fresh()
    two["reads"].append(read("iv:992", value("price_sale", "money", 199.9), ago_s=3600))
    g = guard("Hoje sai por R$ 199,90.", SALE, **two)
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]
    # stale, with no fresh value of that field in the turn: warn.
    g = guard(
        "Hoje sai por R$ 199,90.",
        SALE,
        reads=[read(OLD_OBJ, value("price_sale", "money", 199.9), ago_s=3600)],
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]


def test_condition_5_no_other_number_of_its_class_in_the_sentence() -> None:
    frete = ("R$ 10,00", "money", 10.0, "BRL")
    g = guard("Hoje sai por R$ 199,90 e o frete custa R$ 10,00.", SALE, frete, **stale_then_fresh())
    assert (g.claims[0].verdict, g.claims[0].action) == ("stale", "warn")
    # The same number alone in its sentence is rewritten.
    g = guard("Hoje sai por R$ 199,90. O frete custa R$ 10,00.", SALE, frete, **stale_then_fresh())
    assert g.claims[0].action == "rewrite"


def test_block_in_a_mutable_output_replaces_the_passage() -> None:
    blocking = dict(PRICE, actions={"default": "block"})
    g = guard(
        "Hoje sai por R$ 199,90, aproveite.",
        SALE,
        cats=(blocking,),
        calls=[call("s", value("price_sale", "money", 189.9))],
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("mismatch", "block")]
    assert g.text == "Hoje sai por (price on request), aproveite."
    assert g.guard_acted and not g.held_for_review


def test_block_of_a_term_replaces_its_sentence() -> None:
    blocking = dict(PROMISE, actions={"default": "block"}, replace_with="Vou verificar isso.")
    g = guard("Obrigado! Já reservei o item para você. Até logo.", cats=(blocking,))
    assert g.text == "Obrigado! Vou verificar isso. Até logo."


def test_block_in_an_immutable_output_sends_it_whole_to_a_person_untouched() -> None:
    blocking = dict(PRICE, actions={"default": "block"})
    text = "Proposta: sai por R$ 199,90."
    g = guard(text, SALE, cats=(blocking,), context="proposal")
    assert [(c.verdict, c.action) for c in g.claims] == [("unsupported", "warn")]  # natures.model
    no_model = dict(blocking, natures={})
    g = guard(text, SALE, cats=(no_model,), context="proposal")
    assert [(c.verdict, c.action) for c in g.claims] == [("unsupported", "block")]
    assert g.text == text and g.held_for_review and g.guard_acted
    g = guard(text, SALE, cats=(no_model,), context="chat", immutable=True)
    assert g.text == text and g.held_for_review


def test_an_unlisted_context_is_never_changed() -> None:
    blocking = dict(PRICE, actions={"default": "block"}, natures={})
    g = guard("Sai por R$ 199,90.", SALE, cats=(blocking,), context="sms")
    assert g.held_for_review and g.text == "Sai por R$ 199,90."


@pytest.mark.parametrize("model", ["block", "warn", "count"])
def test_unsupported_takes_natures_model(model: str) -> None:
    cat = dict(PRICE, natures={"model": model}, actions={"default": "warn"})
    g = guard("Sai por R$ 199,90.", SALE, cats=(cat,))
    assert [(c.verdict, c.action) for c in g.claims] == [("unsupported", model)]


def test_context_actions_and_default() -> None:
    cat = dict(DEADLINE, actions={"default": "count", "contexts": {"chat": "warn"}})
    five = ("5 dias", "duration", 5, "day")
    assert guard("Entrega em 5 dias.", five, cats=(cat,)).claims[0].action == "warn"
    assert guard("Entrega em 5 dias.", five, cats=(cat,), context="proposal").claims[0].action == (
        "count"
    )


def test_standing_claims_take_no_action_and_not_checked_is_counted() -> None:
    counted = dict(PRICE, natures={"computed": "count"})
    g = guard(
        "Sai por R$ 199,90.",
        SALE,
        cats=(counted,),
        calls=[call("s", value("price_sale", "money", 189.9))],
    )
    assert [(c.verdict, c.action) for c in g.claims] == [("not_checked", "count")]
    g = guard("Sai por R$ 199,90.", SALE, calls=[call("s", value("price_sale", "money", 199.9))])
    assert [(c.verdict, c.action) for c in g.claims] == [("matched", "none")]
    assert not g.guard_acted


def test_warn_and_count_leave_the_output_as_it_is() -> None:
    g = guard("Sai por R$ 199,90.", SALE)
    assert g.text == "Sai por R$ 199,90." and not g.guard_acted
    assert g.claims[0].action == "warn"


def test_check_names_the_action_and_takes_none() -> None:
    c = claims(SALE, categories=(dict(PRICE, actions={"default": "block"}),))
    text = "Sai por R$ 199,90."
    ev = evidence(calls=[call("s", value("price_sale", "money", 189.9))])
    records = c.check(text, context="chat", evidence=ev)
    assert [(r.verdict, r.action) for r in records] == [("mismatch", "block")]


def test_a_stale_date_is_rewritten_day_first_in_portuguese_and_month_first_in_english() -> None:
    eta = dict(
        DEADLINE,
        id="eta",
        detect={"classes": ["date"], "terms": ["chega", "arrives"]},
        evidence={"value": {"fresh_for": "claim"}},
        actions={"default": "warn", "contexts": {"chat": "rewrite_if_unequivocal"}},
    )
    ev = stale_then_fresh("eta", "date", "2026-12-03", "2026-12-05")
    g = guard("Chega em 3/12.", ("3/12", "date", "--12-03", None), cats=(eta,), **ev)
    assert g.text == "Chega em 5/12." and g.claims[0].action == "rewrite"
    c = claims(("12/03/2026", "date", "2026-12-03", None), categories=(eta,))
    g = c.guard_text("It arrives 12/03/2026.", context="chat", evidence=evidence(**ev),
                     language="en")  # fmt: skip
    assert g.text == "It arrives 12/05/2026."
    in_words = claims(("3 de dezembro", "date", "--12-03", None), categories=(eta,))
    g = in_words.guard_text("Chega em 3 de dezembro.", context="chat", evidence=evidence(**ev))
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "warn")]  # not plain to write
