"""Digits in other forms (fullwidth, Arabic-Indic, mathematical) are read as the digits
they show: a wrong price written in them is checked like any other, never missed."""

from __future__ import annotations

import pytest

from turnstream.sdk.claims import Claims, parse_contract
from turnstream.sdk.claims.normalize import reading

from .builders import NOW
from .test_binding import CITY, RETAIL, SHOES

WIDE = "\uff11\uff12\uff19.\uff19\uff19"  # 129.99 in fullwidth digits
ARABIC_INDIC = "\u0661\u0662\u0669.\u0669\u0669"  # in Arabic-Indic digits
MATHEMATICAL = "\U0001d7cf\U0001d7d0\U0001d7d7.\U0001d7d7\U0001d7d7"  # in mathematical bold digits


@pytest.mark.parametrize(
    "text",
    [
        f"The City Flex is now ${WIDE}.",
        f"The City Flex is now \uff04{WIDE}.",  # a fullwidth dollar sign too
        f"The City Flex is now ${ARABIC_INDIC}.",
        f"The City Flex is now ${MATHEMATICAL}.",
        "The City Flex is now $1\uff12\uff19.99.",  # mixed
    ],
)
def test_a_price_in_other_digits_is_read_checked_and_rewritten(text: str) -> None:
    # Before: no claim at all, and the wrong price went out unchecked.
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    guarded = claims.guard_text(text, context="chat", evidence=SHOES, language="en", now=NOW)
    [record] = guarded.claims
    assert (record.value, record.verdict, record.action) == ("129.99", "mismatch", "rewrite")
    assert record.evidence["object"] == CITY
    assert guarded.text.endswith("$99.90.")
    assert guarded.text.startswith("The City Flex is now ")


def test_the_right_price_in_other_digits_matches() -> None:
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    wide = "The City Flex is now $\uff19\uff19.\uff19\uff10."
    [record] = claims.check(wide, context="chat", evidence=SHOES, language="en", now=NOW)
    assert record.verdict == "matched"


def test_the_reading_keeps_every_offset() -> None:
    for text in (WIDE, ARABIC_INDIC, MATHEMATICAL, "R$ 1.299,00 é o preço", "\u3000\uff21b"):
        read = reading(text)
        assert len(read) == len(text)
    assert reading(WIDE) == "129.99"
    assert reading(ARABIC_INDIC) == "129.99"
    assert reading(MATHEMATICAL) == "129.99"
    assert reading("\u3000\uff21\uff42\uff04") == " Ab$"
    assert reading("preço") == "preço"  # letters stay as they are


def test_a_streamed_price_in_other_digits_is_rewritten_too() -> None:
    claims = Claims(parse_contract(RETAIL), "sales-assistant")
    chunks = ["The City Flex is now $\uff11\uff12", "\uff19.\uff19\uff19. Anything else?"]
    stream = claims.guard(chunks, context="chat", evidence=SHOES, language="en", now=NOW)
    assert "".join(stream) == "The City Flex is now $99.90. Anything else?"
    assert [(r.value, r.verdict) for r in stream.result.claims] == [("129.99", "mismatch")]
