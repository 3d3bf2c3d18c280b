"""Detection: classes with terms, roles within 6 words, ties, terms alone, patterns, sections."""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.sdk.claims.detect import Candidate, Detector, mention_value
from turnstream.sdk.claims.sentences import sentence_spans

from .builders import DEADLINE, PRICE, PROMISE, Mention, contract, mention


def detect(
    text: str,
    mentions: list[Mention],
    *cats: dict[str, Any],
    lang: str = "pt",
    agent: str | None = "sales",
) -> list[Candidate]:
    return Detector(contract(*cats)).detect(text, sentence_spans(text, lang), mentions, agent)


def roles(text: str, mentions: list[Mention], lang: str = "pt") -> list[tuple[str | None, tuple]]:
    return [(c.role, c.role_tied) for c in detect(text, mentions, PRICE, lang=lang)]


def money(text: str, written: str, value: float, nth: int = 0) -> Mention:
    return mention(text, written, "money", value, "BRL", nth=nth)


def test_the_spec_example_gives_list_and_sale_roles() -> None:
    text = "De R$ 249,90 por R$ 199,90."
    found = detect(text, [money(text, "R$ 249,90", 249.9), money(text, "R$ 199,90", 199.9)], PRICE)
    assert [(c.role, c.value, c.start, c.end) for c in found] == [
        ("price_list", "249.90", 3, 12),
        ("price_sale", "199.90", 17, 26),
    ]


def test_the_same_in_english_and_spanish_terms() -> None:
    text = "It was $249.90, now $199.90."
    ms = [
        mention(text, "$249.90", "money", 249.9, "$"),
        mention(text, "$199.90", "money", 199.9, "$"),
    ]
    assert roles(text, ms, "en") == [("price_list", ()), ("price_sale", ())]
    text = "Antes $ 249,90, ahora sale por $ 199,90."
    ms = [
        mention(text, "$ 249,90", "money", 249.9, "$"),
        mention(text, "$ 199,90", "money", 199.9, "$"),
    ]
    assert roles(text, ms, "es") == [("price_list", ()), ("price_sale", ())]


@pytest.mark.parametrize("between", [0, 1, 5])
def test_a_role_term_within_6_words_gives_the_role(between: int) -> None:
    filler = " ".join(["muito"] * between)
    text = f"O tênis era {filler} R$ 300,00 na vitrine.".replace("  ", " ")
    assert roles(text, [money(text, "R$ 300,00", 300)]) == [("price_list", ())]


@pytest.mark.parametrize("between", [6, 9])
def test_beyond_6_words_the_term_gives_no_role(between: int) -> None:
    filler = " ".join(["muito"] * between)
    text = f"O tênis era {filler} R$ 300,00 na vitrine."
    # "era" is the 7th word or farther before the number: no role, still a claim of price.
    assert roles(text, [money(text, "R$ 300,00", 300)]) == [(None, ())]


def test_a_term_after_the_number_counts_too_and_the_window_is_in_words() -> None:
    text = "Fica R$ 180,00 com desconto."
    assert roles(text, [money(text, "R$ 180,00", 180)]) == [("price_sale", ())]
    text = "Fica R$ 180,00 um dois três quatro cinco seis com desconto."
    assert roles(text, [money(text, "R$ 180,00", 180)]) == [(None, ())]


def test_the_nearest_term_wins() -> None:
    text = "Antes custava bem mais, agora por R$ 150,00."  # antes: 5 words away, por: 1
    assert roles(text, [money(text, "R$ 150,00", 150)]) == [("price_sale", ())]


def test_two_roles_tied_leave_the_number_ambiguous() -> None:
    text = "O preço de R$ 200,00 por unidade."  # "de" and "por", one word each side
    assert roles(text, [money(text, "R$ 200,00", 200)]) == [(None, ("price_list", "price_sale"))]
    text = "Antes R$ 90,00 now."
    assert roles(text, [money(text, "R$ 90,00", 90)]) == [(None, ("price_list", "price_sale"))]


def test_a_longer_term_is_one_term_and_roles_stop_at_the_sentence() -> None:
    text = "O tênis sai por R$ 99,00. Era bom."
    assert roles(text, [money(text, "R$ 99,00", 99)]) == [("price_sale", ())]
    text = "Era o que tínhamos. R$ 99,00 hoje."
    assert roles(text, [money(text, "R$ 99,00", 99)]) == [(None, ())]


def test_with_terms_a_number_counts_only_in_a_sentence_holding_one() -> None:
    text = "A entrega chega em 5 dias úteis. O prazo para contestar é de 15 dias úteis."
    ms = [
        mention(text, "5 dias úteis", "duration", 5, "business_day"),
        mention(text, "15 dias úteis", "duration", 15, "business_day"),
    ]
    found = detect(text, ms, DEADLINE)
    assert [(c.value, c.cls) for c in found] == [("5", "duration")]


def test_terms_keep_their_accents() -> None:
    spanish = dict(PROMISE, detect={"terms": ["reservé"]})
    assert len(detect("Ya reservé la talla 40.", [], spanish, lang="es")) == 1
    assert detect("¿Quieres que reserve la talla 40?", [], spanish, lang="es") == []


def test_terms_match_whole_words_in_any_case() -> None:
    text = "ENTREGA EM 3 DIAS. Entregamos em 4 dias."  # "Entregamos" is not the term "entrega"
    ms = [
        mention(text, "3 DIAS", "duration", 3, "day"),
        mention(text, "4 dias", "duration", 4, "day"),
    ]
    assert [c.value for c in detect(text, ms, DEADLINE)] == ["3"]
    text = "La entrega en 2 días."
    assert [
        c.value
        for c in detect(text, [mention(text, "2 días", "duration", 2, "day")], DEADLINE, lang="es")
    ] == ["2"]


def test_labels_are_never_claims_and_other_classes_are_not_this_category() -> None:
    text = "Pedido 123456: entrega do tamanho 42 chega com 2 itens."
    ms = [
        mention(text, "123456", "label", "123456", kind="order"),
        mention(text, "42", "label", "42", kind="size"),
        mention(text, "2", "count", 2, nth=1),
    ]
    assert detect(text, ms, DEADLINE) == []


def test_terms_of_the_trade_on_their_own_in_three_languages() -> None:
    text = "Já reservei o item. I sent the link. Te envié el enlace. Ainda não reservei o outro."
    found = detect(text, [], PROMISE)
    assert [c.value for c in found] == ["reservei", "I sent the link", "envié el enlace"]
    assert all(c.kind == "term" and c.cls is None for c in found)


def test_negation_only_right_before_the_term() -> None:
    text = "Não te enviei o link. No lo reservé. Não, reservei sim."
    found = detect(text, [], dict(PROMISE, detect={"terms": ["enviei", "reservé", "reservei"]}))
    assert [c.value for c in found] == ["reservei"]  # "Não," is an answer, not a negation


def test_agents_limit_a_category() -> None:
    only_billing = dict(PROMISE, agents=["billing"])
    text = "Já reservei."
    assert detect(text, [], only_billing, agent="sales") == []
    assert len(detect(text, [], only_billing, agent="billing")) == 1


ARTICLES = dict(PROMISE, id="citation", detect={"patterns": ["article_citation"]})
PRECEDENTS = dict(PROMISE, id="precedent", detect={"patterns": ["precedent_citation"]})


@pytest.mark.parametrize(
    ("text", "lang", "cite"),
    [
        ("Conforme o art. 5º da CF, todos são iguais.", "pt", "art. 5º da CF"),
        ("O artigo 49 do CDC dá sete dias.", "pt", "artigo 49 do CDC"),
        (
            "Veja o art. 5º, inciso X, da Constituição Federal.",
            "pt",
            "art. 5º, inciso X, da Constituição Federal",
        ),
        ("Article 12 of the GDPR applies here.", "en", "Article 12 of the GDPR"),
        (
            "Under Section 230 of the Communications Decency Act, no.",
            "en",
            "Section 230 of the Communications Decency Act",
        ),
        ("Según el artículo 3 de la Ley 39/2015, procede.", "es", "artículo 3 de la Ley 39/2015"),
        (
            "Lo dice el art. 14.2 del Estatuto de los Trabajadores.",
            "es",
            "art. 14.2 del Estatuto de los Trabajadores",
        ),
    ],
)
def test_article_citations(text: str, lang: str, cite: str) -> None:
    assert [c.value for c in detect(text, [], ARTICLES, lang=lang)] == [cite]


@pytest.mark.parametrize(
    ("text", "lang", "cite"),
    [
        ("Como decidiu o STJ no REsp 1.234.567/SP, cabe.", "pt", "REsp 1.234.567/SP"),
        ("Ver AgRg no AREsp 123.456/RJ.", "pt", "AgRg no AREsp 123.456/RJ"),
        ("A Súmula 331 do TST trata disso.", "pt", "Súmula 331 do TST"),
        (
            "See Brown v. Board of Education, 347 U.S. 483 (1954).",
            "en",
            "Brown v. Board of Education, 347 U.S. 483 (1954)",
        ),
        ("As held in Roe v. Wade the Court.", "en", "Roe v. Wade"),
        ("La STS 123/2020 lo aclara.", "es", "STS 123/2020"),
        ("Según la sentencia 45/2019 del tribunal.", "es", "sentencia 45/2019"),
    ],
)
def test_precedent_citations(text: str, lang: str, cite: str) -> None:
    assert [c.value for c in detect(text, [], PRECEDENTS, lang=lang)] == [cite]


def test_no_citation_in_plain_retail_text() -> None:
    text = "Este artigo de luxo sai por 3 parcelas. Section sale today. Ver a seção de ofertas."
    assert detect(text, [], ARTICLES, PRECEDENTS) == []


def test_document_sections_make_every_sentence_a_claim() -> None:
    sections = dict(PROMISE, id="fact", detect={"document_sections": True})
    text = "O contrato foi assinado em 2020. O réu não pagou.\nPede-se a condenação."
    found = detect(text, [], sections)
    assert [text[c.start : c.end] for c in found] == [
        "O contrato foi assinado em 2020.",
        "O réu não pagou.",
        "Pede-se a condenação.",
    ]


def test_mention_values_are_normalised() -> None:
    assert mention_value(Mention(0, 1, "x", "money", 199.9, "BRL")) == "199.90"
    assert mention_value(Mention(0, 1, "x", "percent", 12.5, "%")) == "12.5"
    assert mention_value(Mention(0, 1, "x", "duration", (3, 5), "day", is_range=True)) == "3..5"
    assert mention_value(Mention(0, 1, "x", "date", "--12-03", None)) == "--12-03"
    assert mention_value(Mention(0, 1, "x", "count", 10.0, None)) == "10"
