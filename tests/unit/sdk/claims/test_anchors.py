"""Text anchors: normalisation, the best-passage edit distance, 0.89 against 0.90, numbers."""

from __future__ import annotations

import random
from typing import Any

import pytest

from turnstream.sdk.claims.anchors import score_anchor
from turnstream.sdk.claims.normalize import normalize

from .builders import PROMISE, claims, evidence

# Exactly 100 characters once normalised.
QUOTE = (
    "o consumidor pode desistir do contrato no prazo de sete dias a contar de sua assinatura "
    "ou do recebi"
)
assert len(normalize(QUOTE)) == 100


def infix_distance(quote: str, doc: str) -> int:
    """Sellers' algorithm: the least edit distance between ``quote`` and any passage of ``doc``."""
    prev = [0] * (len(doc) + 1)  # a passage may start anywhere: row 0 costs nothing
    for i, q in enumerate(quote, 1):
        cur = [i] + [0] * len(doc)
        for j, d in enumerate(doc, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (q != d))
        prev = cur
    return min(prev)


def damaged(k: int) -> str:
    """QUOTE with k letters changed to a letter that no neighbour has."""
    chars = list(QUOTE)
    for pos in range(5, 5 + 9 * k, 9):
        chars[pos] = "x" if chars[pos] != "x" else "y"
    return "".join(chars)


def test_normalisation_of_both_texts() -> None:
    assert normalize("Art. 5º — São PAULO, “já”!") == "art 5º sao paulo ja"
    assert score_anchor("SÃO   Paulo!!", "Fica em são paulo, capital").score == 1.0


@pytest.mark.parametrize(("k", "score", "holds"), [(10, 0.90, True), (11, 0.89, False)])
def test_at_090_an_anchor_holds_at_089_it_does_not(k: int, score: float, holds: bool) -> None:
    document = "Lei 8.078, art. 49: " + damaged(k) + "mento do produto. Outras regras."
    got = score_anchor(QUOTE, document)
    assert got.distance == k == infix_distance(normalize(QUOTE), normalize(document))
    assert got.score == pytest.approx(score)
    assert (got.score >= 0.90) is holds


def test_the_distance_is_to_the_best_passage_not_a_ratio_of_the_whole() -> None:
    rng = random.Random(7)
    alphabet = "abcde "
    for _ in range(40):
        doc = "".join(rng.choice(alphabet) for _ in range(rng.randint(20, 80)))
        quote = "".join(rng.choice(alphabet) for _ in range(rng.randint(3, 15)))
        got = score_anchor(quote, doc)
        expected = infix_distance(normalize(quote), normalize(doc))
        assert got.distance == expected
        assert got.score == pytest.approx(max(0.0, 1 - expected / len(normalize(quote))))


def test_a_changed_number_inside_the_passage_is_caught() -> None:
    doc = "O prazo para contestar é de 15 dias úteis a contar da notificação."
    assert score_anchor("prazo para contestar é de 15 dias úteis", doc).numbers_match
    changed = score_anchor("prazo para contestar é de 10 dias úteis", doc)
    assert changed.score >= 0.90 and not changed.numbers_match


ANCHORED = dict(
    PROMISE,
    id="citation",
    detect={"patterns": ["article_citation"]},
    evidence={"anchor": {}},
    actions={"default": "discard_anchor_and_count"},
)
LAW = (
    "Art. 49. O consumidor pode desistir do contrato no prazo de 7 dias a contar de sua assinatura."
)


def anchored(
    text: str,
    anchors: list[dict[str, Any]],
    docs: list[dict[str, Any]],
    cat: dict[str, Any] = ANCHORED,
):
    return claims(categories=(cat,)).guard_text(
        text, context="chat", evidence=evidence(anchors=anchors, documents=docs)
    )


def test_anchor_verdicts_and_discard() -> None:
    text = "Pelo art. 49 do CDC, o consumidor pode desistir do contrato no prazo de 7 dias."
    span = {"start": 5, "end": len(text) - 1}
    quote = "O consumidor pode desistir do contrato no prazo de 7 dias"
    g = anchored(text, [dict(span, quote=quote, document="cdc")], [{"id": "cdc", "text": LAW}])
    assert [(c.verdict, c.action) for c in g.claims] == [("anchored", "none")]
    assert g.claims[0].evidence == {"kind": "anchor", "document": "cdc", "score": 1.0}
    g = anchored(text, [dict(span, quote=quote, document="cc")], [{"id": "cdc", "text": LAW}])
    assert [(c.verdict, c.action) for c in g.claims] == [("source_missing", "discard_anchor")]
    assert g.discarded_anchors == [0]
    far = "O fornecedor deve trocar o produto em trinta dias corridos"
    g = anchored(text, [dict(span, quote=far, document="cdc")], [{"id": "cdc", "text": LAW}])
    assert [(c.verdict, c.action) for c in g.claims] == [("below_threshold", "discard_anchor")]
    assert g.claims[0].evidence["score"] < 0.9
    g = anchored(text, [], [{"id": "cdc", "text": LAW}])
    assert [(c.verdict, c.action) for c in g.claims] == [("not_checked", "count")]


def test_a_number_changed_inside_an_anchored_quote_does_not_stand() -> None:
    text = "Pelo art. 49 do CDC, o consumidor pode desistir do contrato no prazo de 9 dias."
    quote = "O consumidor pode desistir do contrato no prazo de 9 dias a contar de sua assinatura"
    g = anchored(
        text,
        [{"start": 5, "end": 20, "quote": quote, "document": "cdc"}],
        [{"id": "cdc", "text": LAW}],
    )
    assert g.claims[0].evidence["score"] >= 0.9
    assert g.claims[0].verdict == "mismatch"


def test_the_category_threshold_replaces_090() -> None:
    strict = dict(ANCHORED, evidence={"anchor": {"threshold": 0.99}})
    text = "Pelo art. 49 do CDC, o consumidor pode desistir."
    quote = "O consumidor pode desistr do contrato no prazo de 7 dias"  # one letter missing
    g = anchored(
        text,
        [{"start": 5, "end": 12, "quote": quote, "document": "cdc"}],
        [{"id": "cdc", "text": LAW}],
        strict,
    )
    assert g.claims[0].verdict == "below_threshold"


def test_long_quotes_across_machine_words_match_sellers() -> None:
    # Quotes of 70 to 200 characters: the bit vectors run past 64 bits.
    rng = random.Random(37)
    alphabet = "abcdefgh 0123"
    for _ in range(12):
        doc = "".join(rng.choice(alphabet) for _ in range(rng.randint(150, 400)))
        start = rng.randint(0, 100)
        quote = list(doc[start : start + rng.randint(70, 200)])
        for _ in range(rng.randint(0, 12)):  # substitutions, insertions, deletions
            at = rng.randrange(len(quote))
            op = rng.choice("sid")
            if op == "s":
                quote[at] = rng.choice(alphabet)
            elif op == "i":
                quote.insert(at, rng.choice(alphabet))
            elif len(quote) > 1:
                del quote[at]
        q = "".join(quote)
        got = score_anchor(q, doc)
        assert got.distance == infix_distance(normalize(q), normalize(doc))


def test_the_passage_found_with_edits_is_the_one_whose_numbers_count() -> None:
    doc = "Outras regras. O prazo para contestar é de 15 dias úteis a contar da notificação."
    near = score_anchor("o prazo pra contestar e de 15 dias uteis", doc)  # one edit
    assert near.distance == 1 and near.numbers_match
    changed = score_anchor("o prazo pra contestar e de 16 dias uteis", doc)
    assert changed.distance == 2 and not changed.numbers_match
