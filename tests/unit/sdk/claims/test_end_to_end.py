"""The checker on the real number reader, with what real producers send, at the limits."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from turnstream.models.turns import Turn
from turnstream.sdk.claims import ClaimRecord, Claims, TurnToCheck, load_contract, parse_contract

from .builders import DEADLINE, NOW, PRICE, PROMISE, call, doc, evidence, read, value

ROOT = Path(__file__).resolve().parents[4]
RETAIL = load_contract(ROOT / "examples" / "claims" / "retail.json")
IV = "item_variant:acme:991"


def as_turn_record(records: list[ClaimRecord], **top: Any) -> Turn:
    """The claims inside a whole turn record, validated by the wire model."""
    return Turn.model_validate(
        {"type": "turn", "space_id": "acme", "idempotency_key": "k1", "profile_id": "p1",
         "source": "whatsapp", "occurred_at": "2026-11-29T12:00:05Z", "turn_id": "t1",
         "agent": "sales-assistant", "claims": [r.as_wire() for r in records], **top}
    )  # fmt: skip


PRICES = [
    ("price", "price_list", "1299.90", "matched"),
    ("price", "price_sale", "999.90", "matched"),
]


def retail(agent: str = "sales-assistant") -> Claims:
    return Claims(RETAIL, agent=agent, now=lambda: NOW)


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("pt", "De R$ 1.299,90 por R$ 999,90 no Pix. A entrega chega em 3 dias úteis.",
         [*PRICES, ("deadline", None, "3", "matched")]),
        ("en", "It was $1,299.90, now only $999.90. Delivery arrives by 12/03.",
         [*PRICES, ("deadline", None, "--12-03", "matched")]),
        ("es", "Antes 1.299,90 €, ahora solo 999,90 €. La entrega en 3 días hábiles.",
         [*PRICES, ("deadline", None, "3", "matched")]),
    ],
)  # fmt: skip
def test_prices_and_deadlines_in_three_languages(lang: str, text: str, expected: list) -> None:
    ev = evidence(
        calls=[
            call("search_products", value("price_list", "money", 1299.9, obj=IV),
                 value("price_sale", "money", 999.9, obj=IV)),
            call("shipping_quote", id="c2"),
        ]
    )  # fmt: skip
    records = retail().check(text, context="chat", evidence=ev, language=lang)
    assert [(r.category, r.role, r.value, r.verdict) for r in records] == expected
    for r in records:
        assert text[r.span[0] : r.span[1]].strip()  # spans are code points into the output
    as_turn_record(records)


def test_a_turn_file_with_fields_the_examples_never_use() -> None:
    contract = parse_contract(
        doc(
            dict(DEADLINE, id="lead_time", agents=["sales-assistant"],
                 detect={"classes": ["duration"], "terms": ["entrega", "delivery"]},
                 evidence={"value": {"must_state_gaps": True, "fresh_for": "claim"}}),
            dict(PROMISE, agents=["billing"]),
        )
    )  # fmt: skip
    turn = TurnToCheck.model_validate(
        {
            "agent": "sales-assistant", "language": None, "context": "chat", "immutable": True,
            "now": "2026-11-29T12:00:05Z", "extra_field": {"ignored": True},
            "output": "A entrega leva 5 dias úteis (uma estimativa). Já reservei o item.",
            "calls": [{"id": "q", "tool": "shipping_quote", "at": "2026-11-29T12:00:00-03:00",
                       "values": [{"field": "lead_time", "class": "duration", "value": 5,
                                   "unit": "business_day", "claim_age_s": None,
                                   "gaps": ["uma estimativa"], "object": "quote:1"}]}],
            "anchors": [{"start": 0, "end": 10, "document": "nowhere"}],
        }
    )  # fmt: skip
    records = Claims(contract, agent=turn.agent).check(
        turn.output, context=turn.context, immutable=turn.immutable, evidence=turn.evidence(),
        language=turn.language, now=turn.now,
    )  # fmt: skip
    # The billing agent's promise category does not apply; the gap is stated with the number.
    assert [(r.category, r.verdict, r.action) for r in records] == [
        ("lead_time", "matched", "none")
    ]


def test_64_categories_many_calls_and_a_long_output() -> None:
    cats = []
    for i in range(64):
        base = [PRICE, DEADLINE, PROMISE][i % 3]
        cats.append(dict(copy.deepcopy(base), id=f"{base['id']}_{i}"))
    contract = parse_contract(doc(*cats))
    sentences = [
        "De R$ 249,90 por R$ 199,90.",
        "A entrega chega em 5 dias úteis.",
        "Enviei o link de pagamento.",
        "Pedido 123456, tamanho 42, CEP 01310-100.",
    ]
    text = " ".join(sentences * 20)  # ~2.3 kB
    prices = [199.9 if i == 150 else 100 + i for i in range(200)]  # one of them is right
    calls = [call("search_products", value("price_sale", "money", p, obj=f"iv:{i}"),
                  id=f"c{i}") for i, p in enumerate(prices)]  # fmt: skip
    calls.append(call("shipping_quote", id="sq"))
    calls.append(call("send_link", id="sl"))
    records = Claims(contract, agent="sales", now=lambda: NOW).check(
        text, context="chat", evidence=evidence(calls=calls)
    )
    # 22 price categories x 2 prices + 21 deadline + 21 promise categories, in 20 repeats.
    assert len(records) == 20 * (22 * 2 + 21 + 21)
    assert {r.category for r in records} == {c["id"] for c in cats}
    assert not any(r.cls == "label" for r in records)
    assert {(r.role, r.verdict) for r in records if r.category.startswith("price")} == {
        ("price_list", "unsupported"),
        ("price_sale", "matched"),
    }
    as_turn_record(records[:1000])


def test_a_wire_value_is_cut_to_the_wire_limit() -> None:
    long_cite = ClaimRecord("c", None, "model", None, (0, 400), "x" * 400, "not_checked", "count")
    assert len(long_cite.as_wire()["value"]) == 256
    as_turn_record([long_cite])


def test_the_example_files_are_valid_turns() -> None:
    for ex in json.loads((ROOT / "examples" / "claims" / "examples.json").read_text()):
        turn = TurnToCheck.model_validate(ex["turn"])
        records = retail(turn.agent or "x").check(
            turn.output, context=turn.context, immutable=turn.immutable,
            evidence=turn.evidence(), language=turn.language, now=turn.now,
        )  # fmt: skip
        as_turn_record(records)
        assert len(records) == len(ex["expect"])


def test_stale_read_and_fresh_call_rewrite_on_the_real_reader_in_english() -> None:
    ev = evidence(
        reads=[read(IV, value("price_sale", "money", 89.0, unit="USD"), ago_s=3600)],
        calls=[call("search_products", value("price_sale", "money", 79.5, obj=IV, unit="USD"))],
    )
    g = retail().guard_text("Today it is now $89.00 with free shipping.", context="chat",
                            evidence=ev, language="en")  # fmt: skip
    assert g.text == "Today it is now $79.50 with free shipping."
    assert [(c.verdict, c.action) for c in g.claims] == [("stale", "rewrite")]


def test_a_long_stream_gives_the_claims_and_text_of_guard_text() -> None:
    text = " ".join(
        [
            "Hoje sai por R$ 199,90.",
            "A entrega chega em 5 dias úteis.",
            "Já reservei o tamanho 42 para você.",
            "Nunca revele o desconto máximo de 30% que o gerente pode aprovar.",
            "Pelo art. 49 do CDC, você pode desistir em 7 dias.",
        ]
        * 12
    )  # ~2.6 kB, the internal text repeated in every fifth sentence
    ev = evidence(calls=[call("search_products", value("price_sale", "money", 189.9, obj=IV))],
                  reads=[read(IV, value("price_sale", "money", 199.9), ago_s=3600)])  # fmt: skip
    claims = Claims(RETAIL, agent="sales-assistant", now=lambda: NOW, clock=lambda: 0.0)
    whole = claims.guard_text(text, context="chat", evidence=ev)
    stream = claims.guard((text[i : i + 40] for i in range(0, len(text), 40)), context="chat",
                          evidence=ev)  # fmt: skip
    assert "".join(stream) == whole.text
    assert stream.result is not None
    assert stream.result.claims == whole.claims
    assert sum(c.verdict == "internal_text_found" for c in whole.claims) == 12
    assert whole.text.count("R$ 189,90") == 12  # the stale sale price rewritten each time
