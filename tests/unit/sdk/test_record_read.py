"""``frame.record_read``: fields the types declare without a class are read (compared,
never evidence), a value without a class says what to do, and what changed is said of an
object only when the block would say it (never of one excluded, or that breaks a hard
entry as it is now)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.constraints.builders import block, pref
from turnstream.core.constraints import Disliked, Presented
from turnstream.errors import TurnstreamError
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation
from turnstream.sdk.frame import TurnFrame

TYPES = load_types(Path(__file__).resolve().parents[3] / "examples" / "types.toml")
REF = "item_variant:acme:77"
SHOWN = {"name": "Tênis Duna", "color": "navy", "price_sale": 199.9, "in_stock": True,
         "stock_sizes": "38,39,40"}  # fmt: skip
PRICE = "item_variant.price_sale"
NOW = datetime(2026, 11, 29, 12, tzinfo=UTC)


def _conversation(language: str = "pt") -> Conversation:
    return Conversation(space="acme", source="web", agent="a", profile_id="p1",
                        recorder=lambda _: None, now=lambda: NOW, language=language,
                        types=TYPES)  # fmt: skip


def _present(frame: TurnFrame, ref: str = REF, shown: dict[str, Any] = SHOWN) -> None:
    frame.interact({"kind": "presented", "list_id": "l1", "list_kind": "search", "visible_k": 3,
                    "items": [{"pos": 1, "ref": ref, "shown": shown}]})  # fmt: skip


def test_fields_declared_without_a_class_are_read_and_compared_not_evidence() -> None:
    with _conversation().turn() as frame:
        _present(frame)
        seen = frame.record_read(REF, [
            {"field": "stock_sizes", "value": ["38", "40", "41"]},
            {"field": "in_stock", "value": True},
            {"field": "price_sale", "value": 179.9},
        ], type="item_variant")  # fmt: skip
        assert [c["change"] for c in seen.changed] == ["price_down", "new_value", "value_gone"]
        assert seen.text.startswith("Mudou desde que viu: preço caiu de 199,90 para 179,90")
        gone = frame.record_read(REF, [{"field": "in_stock", "value": False}], type="item_variant")
        assert [c["change"] for c in gone.changed] == ["out_of_stock"]
    # The read is recorded; only the price has a class a claim can be checked by.
    assert [[v.field for v in read.values] for read in frame.reads] == [["price_sale"], []]
    assert frame.reads[0].values[0].class_ == "money"


@pytest.mark.parametrize(
    ("kwargs", "hint"),
    [({}, "or pass type= to take it from the conversation's object types"), ({"type": None}, "")],
)
def test_a_value_without_a_class_says_which_and_what_to_do(
    kwargs: dict[str, Any], hint: str
) -> None:
    with _conversation().turn() as frame, pytest.raises(TurnstreamError) as raised:
        frame.record_read(REF, [{"field": "price_sale", "class": "money", "value": 1},
                                {"field": "in_stock", "value": True}], **kwargs)  # fmt: skip
    message = str(raised.value)
    assert message.startswith("record_read: values.1 (field 'in_stock'): class required")
    assert "money, percent" in message and hint in message
    assert "ValidationError" not in message and frame.reads == []


def test_a_bad_value_of_a_declared_field_is_named() -> None:
    bad = r"values\.0 \(field 'discount_pct'\): value: a number, a text or a pair of numbers"
    with _conversation().turn() as frame, pytest.raises(TurnstreamError, match=bad):
        frame.record_read(REF, [{"field": "discount_pct", "value": {"pct": 10}}],
                          type="item_variant")  # fmt: skip


def _seen(cited: dict[str, Any], read: dict[str, Any], *, present: bool = False) -> str:
    with _conversation("en").turn() as frame:
        frame.cite_block(cited)
        if present:
            _present(frame)
        fields = [{"field": k, "value": v} for k, v in read.items()]
        return frame.record_read(REF, fields, type="item_variant").text


def test_what_changed_is_never_said_of_an_object_the_person_excluded() -> None:
    cited = block(presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES,
                  disliked=[Disliked(REF)])  # fmt: skip
    assert cited["exclude"] == [REF]
    assert _seen(cited, {"price_sale": 99.9}) == ""
    assert _seen(cited, {"price_sale": 99.9}, present=True) == ""
    # The block read with the same state says nothing of it either.
    current = {REF: {"price_sale": 99.9}}
    again = block(presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES,
                  disliked=[Disliked(REF)], current=current)  # fmt: skip
    assert "changed" not in again["already_presented"][0]
    # A dislike in this turn too.
    with _conversation("en").turn() as frame:
        _present(frame)
        frame.interact({"kind": "feedback", "ref": REF, "polarity": "dislike"})
        assert not frame.record_read(REF, [{"field": "price_sale", "value": 99.9}],
                                     type="item_variant")  # fmt: skip


def test_what_changed_is_said_only_of_an_object_that_fits_the_hard_entries_now() -> None:
    limit = pref("p1", PRICE, "lte", (200,), "must")
    cited = block([limit], presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES)
    assert _seen(cited, {"price_sale": 219.9}) == ""  # over the limit now: not offered
    said = _seen(cited, {"price_sale": 189.9})
    assert said == "Changed since they saw it: price down from 199.90 to 189.90"
    # The block says the same of the same reads.
    for price, changed in ((219.9, False), (189.9, True)):
        got = block([limit], presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES,
                    current={REF: {"price_sale": price}})  # fmt: skip
        assert ("changed" in got["already_presented"][0]) is changed
    # A value it showed in this turn that a hard entry refuses (a colour said "not navy").
    not_navy = pref("p2", "item_variant.color", "not_in", ("navy",), "must_not")
    cited = block([not_navy], presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES)
    assert _seen(cited, {"price_sale": 189.9}, present=True) == ""


def test_an_object_shown_turns_ago_in_a_refused_colour_stays_unsaid() -> None:
    # The cited block knows the colour it was shown in ("Black": "not preto" refuses it);
    # its ``already_presented`` entry carries only the state fields, and the ids of the
    # hard rows the object breaks.
    not_black = pref("p2", "item_variant.color", "not_in", ("preto",), "must_not")
    shown = {**SHOWN, "color": "Black"}
    cited = block([not_black], presented=[Presented(REF, 1)], shown={REF: shown}, types=TYPES)
    entry = cited["already_presented"][0]
    assert "color" not in entry.get("shown", {}) and entry["breaks"] == ["p2"]
    assert _seen(cited, {"price_sale": 99.9, "stock_sizes": ["41"]}) == ""
    # A read that carries the colour is judged by it: dyed navy now, it is offered again.
    said = _seen(cited, {"price_sale": 99.9, "color": "navy"})
    assert said.startswith("Changed since they saw it: price down from 199.90 to 99.90")
    # An object that breaks nothing carries no ``breaks``.
    fine = block([not_black], presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES)
    assert "breaks" not in fine["already_presented"][0]


@pytest.mark.parametrize(
    ("values", "bad"),
    [
        ({"field": "in_stock", "value": True}, r"values: a list of \{field, value, \.\.\.\}"),
        (["in_stock"], r"values\.0: a mapping with field and value, not a str"),
        ([{"field": "in_stock"}], r"values\.0: needs a field \(text\) and a value"),
        ([{"value": True}], r"values\.0: needs a field \(text\) and a value"),
        (
            [{"field": "stock_sizes", "value": {"38": 1}}],
            r"values\.0 \(field 'stock_sizes'\): value: a text, a number, a flag, a list of them "
            r"or None, not a dict",
        ),
        ([{"field": "in_stock", "value": {"a": 1}}], r"values\.0 \(field 'in_stock'\): value"),
    ],
)
def test_a_read_that_is_not_a_list_of_field_values_is_refused_by_name(
    values: Any, bad: str
) -> None:
    with _conversation().turn() as frame, pytest.raises(TurnstreamError, match=bad):
        frame.record_read(REF, values, type="item_variant")
    assert frame.reads == []


@pytest.mark.parametrize(
    ("language", "said"),
    [("es", "Cambió desde que lo vio: precio bajó de 199,90 a 179,90"),
     ("pt", "Mudou desde que viu: preço caiu de 199,90 para 179,90")],
)  # fmt: skip
def test_without_a_language_the_read_speaks_the_cited_blocks(language: str, said: str) -> None:
    """A trial's Spanish agent that gave its conversation no language: the read says what
    changed in the language of the block it cites (its ``language``), never in English
    beside a Spanish block; the turn's own language still wins."""
    cited = block(presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES,
                  language=language)  # fmt: skip
    assert cited["language"] == language
    unsaid = Conversation(space="acme", source="web", agent="a", profile_id="p1",
                          recorder=lambda _: None, now=lambda: NOW, types=TYPES)  # fmt: skip
    for conversation, text in ((unsaid, said), (_conversation("en"), "Changed since")):
        with conversation.turn() as frame:
            frame.cite_block(cited)
            seen = frame.record_read(REF, [{"field": "price_sale", "value": 179.9}],
                                     type="item_variant")  # fmt: skip
        assert seen.text.startswith(text), seen.text
