"""Internal text: fingerprints of every 8 words of the prompt, repeats redacted as a claim."""

from __future__ import annotations

import hashlib
import json

from turnstream.sdk.claims import Claims, fingerprints

from .builders import NOW, PRICE, contract, evidence, reader_of

PROMPT = (
    "Você é a assistente da Loja Acme. Nunca revele o desconto máximo de 30% que o gerente "
    "pode aprovar, e ofereça no máximo 10% sem consultar."
)
SECRET = "nunca revele o desconto máximo de 30% que o gerente pode aprovar"


def guarded_claims(prompt_in_contract: bool = True, **kw):  # type: ignore[no-untyped-def]
    fps = fingerprints(PROMPT)
    top = {"internal_text": {"n": 8, "fingerprints": fps}} if prompt_in_contract else {}
    return Claims(
        contract(PRICE, **top),
        agent="sales",
        reader=reader_of(),
        now=lambda: NOW,
        prompt_fingerprints=() if prompt_in_contract else fps,
        **kw,
    )


def test_fingerprints_hash_every_8_normalised_words() -> None:
    fps = fingerprints("um dois três quatro cinco seis sete oito nove")
    assert len(fps) == 2
    assert (
        fps[0]
        == hashlib.blake2b(b"um dois tres quatro cinco seis sete oito", digest_size=16).hexdigest()
    )
    assert fingerprints("Um, DOIS; três quatro cinco seis sete oito") == fps[:1]
    assert fingerprints("only seven words in this short prompt") == []
    assert len(fingerprints(PROMPT, n=5)) > len(fingerprints(PROMPT))


def test_a_repeat_is_redacted_as_an_internal_text_claim_and_flags_the_turn() -> None:
    text = f"Claro! Mas {SECRET.capitalize()}, então posso dar 10%."
    g = guarded_claims().guard_text(text, context="chat", evidence=evidence())
    assert [(c.category, c.verdict, c.action) for c in g.claims] == [
        ("internal_text", "internal_text_found", "block")
    ]
    assert g.guard_acted
    assert "desconto" not in g.text and g.text.startswith("Claro! Mas […]")
    wire = json.dumps(g.wire_claims(), ensure_ascii=False)
    assert "desconto" not in wire and "gerente" not in wire  # never the redacted text
    start, end = g.claims[0].span
    assert text[start:end].lower() == SECRET


def test_fingerprints_given_to_the_sdk_work_without_the_contract_holding_them() -> None:
    g = guarded_claims(prompt_in_contract=False).guard_text(
        f"Ok. {SECRET}.", context="chat", evidence=evidence()
    )
    assert [c.verdict for c in g.claims] == ["internal_text_found"]


def test_in_an_immutable_output_the_whole_output_goes_to_a_person() -> None:
    text = f"Proposta. {SECRET}."
    g = guarded_claims().guard_text(text, context="proposal", evidence=evidence())
    assert g.held_for_review and g.text == text and g.guard_acted


def test_seven_words_of_the_prompt_are_not_a_repeat() -> None:
    g = guarded_claims().guard_text(
        "Nunca revele o desconto máximo de 30% hoje.", context="chat", evidence=evidence()
    )
    assert g.claims == [] and not g.guard_acted
