"""What changed since the person saw an object (issue 36, point 5): ``shown`` against a
state read later, field by field; the block's ``already_presented`` and ``text`` say it
in pt, en and es; the SDK's ``record_read`` returns it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.constraints.builders import block
from turnstream.core.constraints import Presented
from turnstream.core.constraints.changes import changes_since_shown, state_shown
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation

TYPES = load_types(Path(__file__).resolve().parents[4] / "examples" / "types.toml")
REF = "item_variant:acme:77"
SHOWN = {
    "name": "Tênis Duna",
    "color": "navy",
    "price_sale": 199.9,
    "in_stock": True,
    "stock_sizes": "38,39,40",
}


def _kinds(now: dict[str, Any], shown: dict[str, Any] = SHOWN) -> list[tuple[str, str]]:
    return [(c.field, c.kind) for c in changes_since_shown(REF, shown, now, TYPES)]


def test_price_up_and_down() -> None:
    assert _kinds({"price_sale": 219.9}) == [("price_sale", "price_up")]
    assert _kinds({"price_sale": "179.90"}) == [("price_sale", "price_down")]
    [change] = changes_since_shown(REF, SHOWN, {"price_sale": 219.9}, TYPES)
    assert change.as_dict() == {
        "field": "price_sale", "change": "price_up", "shown": 199.9, "now": 219.9
    }  # fmt: skip


def test_out_of_stock_and_back() -> None:
    assert _kinds({"in_stock": False}) == [("in_stock", "out_of_stock")]
    assert _kinds({"in_stock": 0}) == [("in_stock", "out_of_stock")]
    assert _kinds({"in_stock": True}, {"in_stock": "false"}) == [("in_stock", "back_in_stock")]
    assert _kinds({"stock": 0}, {"stock": 4}) == [("stock", "out_of_stock")]
    assert _kinds({"stock": 2}, {"stock": 4}) == []  # still in stock: nothing to say
    assert _kinds({"stock_sizes": ""}) == [("stock_sizes", "out_of_stock")]


def test_a_new_size_and_a_size_gone() -> None:
    [new] = changes_since_shown(REF, SHOWN, {"stock_sizes": ["38", "39", "40", "41"]}, TYPES)
    assert (new.kind, new.values) == ("new_value", ("41",))
    [gone] = changes_since_shown(REF, SHOWN, {"stock_sizes": "38, 40"}, TYPES)
    assert (gone.kind, gone.values) == ("value_gone", ("39",))


def test_nothing_changed() -> None:
    same = {"price_sale": 199.90, "in_stock": True, "stock_sizes": "40,39,38", "color": "red"}
    assert _kinds(same) == []  # a taste (colour) is never compared: it is not state


def test_a_field_missing_on_either_side_is_not_a_change() -> None:
    assert _kinds({"discount_pct": 10}) == []  # never shown: nothing to compare with
    assert _kinds({"name": "Tênis Duna"}) == []  # the read lacks the state fields
    assert _kinds({"price_sale": None}) == []  # unknown now
    assert changes_since_shown(REF, SHOWN, {"price_sale": 1.0}, None) == []
    assert state_shown(REF, SHOWN, TYPES) == {
        "in_stock": True, "price_sale": 199.9, "stock_sizes": "38,39,40"
    }  # fmt: skip


LINES = {
    "pt": "Mudou desde que viu: “Tênis Duna”: preço subiu de 199,90 para 219,90; "
    "tamanhos em estoque agora também 41",
    "en": "Changed since they saw it: “Tênis Duna”: price up from 199.90 to 219.90; "
    "sizes in stock now also 41",
    "es": "Cambió desde que lo vio: “Tênis Duna”: precio subió de 199,90 a 219,90; "
    "tallas en stock ahora también 41",
}


@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_the_block_says_what_changed_in_the_spaces_language(language: str) -> None:
    current = {REF: {"price_sale": 219.9, "stock_sizes": "38,39,40,41", "in_stock": True}}
    got = block(
        presented=[Presented(REF, 2), Presented("item_variant:acme:78", 1)],
        shown={REF: SHOWN}, current=current, types=TYPES, language=language,
    )  # fmt: skip
    entry, other = got["already_presented"]
    assert entry["shown"] == state_shown(REF, SHOWN, TYPES)
    assert [c["change"] for c in entry["changed"]] == ["price_up", "new_value"]
    assert "changed" not in other and "shown" not in other
    assert got["text"].split("\n") == [LINES[language]]
    unchanged = block(presented=[Presented(REF, 2)], shown={REF: SHOWN}, types=TYPES,
                      current={REF: {"price_sale": 199.9}})  # fmt: skip
    assert "changed" not in unchanged["already_presented"][0] and unchanged["text"] == ""


def test_the_sdks_read_says_what_changed_since_the_block_showed_it() -> None:
    now = datetime(2026, 11, 29, 12, tzinfo=UTC)
    cited = block(presented=[Presented(REF, 1)], shown={REF: SHOWN}, types=TYPES)
    conv = Conversation(space="acme", source="web", agent="a", profile_id="p1",
                        recorder=lambda _: None, now=lambda: now, language="es",
                        types=TYPES)  # fmt: skip
    with conv.turn() as frame:
        frame.cite_block(cited)
        gone = {"field": "in_stock", "class": "count", "value": 0}
        seen = frame.record_read(REF, [gone], type="item_variant")
        assert seen and seen.changed == [
            {"field": "in_stock", "change": "out_of_stock", "shown": True, "now": 0}
        ]
        assert seen.text == "Cambió desde que lo vio: agotado"
        # Shown in this turn: compared with what this turn presented.
        frame.interact({
            "kind": "presented", "list_id": "l1", "list_kind": "search", "visible_k": 3,
            "items": [{"pos": 1, "ref": "item_variant:acme:5", "shown": {"price_sale": 50}}],
        })  # fmt: skip
        down = frame.record_read("item_variant:acme:5", [{"field": "price_sale", "value": 45}],
                                 type="item_variant")  # fmt: skip
        assert down.text == "Cambió desde que lo vio: precio bajó de 50 a 45"
        never = frame.record_read("item_variant:acme:6", [{"field": "price_sale", "value": 1}],
                                  type="item_variant")  # fmt: skip
        assert not never and never.text == ""
    assert len(frame.reads) == 3  # each read is evidence as before
