"""What changed since the person saw an object (issue 36, point 5): ``shown`` against a
state read later, field by field; the block's ``already_presented`` and ``text`` say it
in pt, en and es; the SDK's ``record_read`` returns it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.constraints.builders import COLOR, block, inference, pref
from turnstream.core.constraints import Disliked, Presented
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


def test_sizes_in_stock_compare_by_the_value_they_name() -> None:
    # "40.0" and 40 are one size (the block's and derivation's identity); "41,5" is new
    assert _kinds({"stock_sizes": ["38", 39, "40.0"]}) == []
    assert _kinds({"stock_sizes": " 38 , 39.0 , 40 "}) == []
    [new] = changes_since_shown(REF, SHOWN, {"stock_sizes": "38,39,40,41.5"}, TYPES)
    assert (new.kind, new.values) == ("new_value", ("41.5",))


def test_a_field_missing_on_either_side_is_not_a_change() -> None:
    assert _kinds({"discount_pct": 10}) == []  # never shown: nothing to compare with
    assert _kinds({"name": "Tênis Duna"}) == []  # the read lacks the state fields
    assert _kinds({"price_sale": None}) == []  # unknown now
    assert changes_since_shown(REF, SHOWN, {"price_sale": 1.0}, None) == []
    assert state_shown(REF, SHOWN, TYPES) == {
        "in_stock": True, "price_sale": 199.9, "stock_sizes": "38,39,40"
    }  # fmt: skip


LINES = {
    "pt": "Mudou desde que viu: “Tênis Duna”: preço subiu de 199,90 para 219,90, "
    "tamanhos em estoque agora também 41",
    "en": "Changed since they saw it: “Tênis Duna”: price up from 199.90 to 219.90, "
    "sizes in stock now also 41",
    "es": "Cambió desde que lo vio: “Tênis Duna”: precio subió de 199,90 a 219,90, "
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


def _changed_block(language: str = "pt", **more: Any) -> dict[str, Any]:
    """Five objects presented, each changed since: a named one, one described by its
    colour, one with no taste shown (its size names it), two alike (only counted)."""
    shown = {
        "item_variant:acme:1": SHOWN,
        "item_variant:acme:2": {"color": "navy", "in_stock": True},
        "item_variant:acme:3": {"size": "M", "price_sale": 99.9},
        "item_variant:acme:4": {"color": "red", "price_sale": 50},
        "item_variant:acme:5": {"color": "red", "price_sale": 50},
    }
    current = {
        "item_variant:acme:1": {"price_sale": 219.9},
        "item_variant:acme:2": {"in_stock": False},
        "item_variant:acme:3": {"price_sale": 89.9},
        "item_variant:acme:4": {"price_sale": 60},
        "item_variant:acme:5": {"price_sale": 70},
    }
    return block(
        presented=[Presented(ref, 1) for ref in shown], shown=shown, current=current,
        types=TYPES, language=language, **more,
    )  # fmt: skip


def test_what_changed_is_one_line_each_object_named_a_few_at_most() -> None:
    """Several changed objects: one line, the heading once, objects joined by semicolons,
    each named as elsewhere in the block (an object without a taste by its size), three
    at most and the rest counted; a stock gone first, then the larger price change."""
    assert _changed_block()["text"].split("\n") == [
        "Mudou desde que viu: variante (azul-marinho): esgotado; variante (tamanho M): preço "
        "caiu de 99,90 para 89,90; “Tênis Duna”: preço subiu de 199,90 para 219,90; e mais 2"
    ]
    assert _changed_block("en")["text"].endswith("price up from 199.90 to 219.90; and 2 more")
    alone = block(
        presented=[Presented("item_variant:acme:4", 1), Presented("item_variant:acme:5", 1)],
        shown={"item_variant:acme:4": {"price_sale": 50}, "item_variant:acme:5": {}},
        current={"item_variant:acme:4": {"price_sale": 60}, "item_variant:acme:5": {}},
        types=TYPES, language="pt",
    )  # fmt: skip
    # Named only by what changed: by it as shown (before, "1 item", the change unsaid).
    assert alone["text"] == "Mudou desde que viu: variante (preço 50): preço subiu de 50 para 60"


def test_a_changed_field_tells_look_alikes_apart_as_shown() -> None:
    """Two red variants told apart only by their prices: the one whose price changed is
    named by its price as shown (its change says the new one), so neither name fits
    both."""
    shown = {
        "item_variant:acme:1": {"color": "red", "price_sale": 199.9},
        "item_variant:acme:2": {"color": "red", "price_sale": 249.9},
    }
    got = block(
        inferences=[inference("i", "interest", "item_variant.ref", "item_variant:acme:2")],
        presented=[Presented("item_variant:acme:1", 1)], shown=shown,
        current={"item_variant:acme:1": {"price_sale": 219.9}}, types=TYPES, language="pt",
    )  # fmt: skip
    assert got["text"].split("\n") == [
        "Demonstrou interesse em (inferido): variante (vermelho, preço 249,90)",
        "Mudou desde que viu: variante (vermelho, preço 199,90): preço subiu de 199,90 para 219,90",
    ]


@pytest.mark.parametrize(
    ("language", "said"),
    [
        ("en", "price up from 3,579.00 to 3,599.50"),
        ("pt", "preço subiu de 3.579,00 para 3.599,50"),
        ("es", "precio subió de 3.579,00 a 3.599,50"),
    ],
)
def test_both_sides_of_a_price_change_in_one_style(language: str, said: str) -> None:
    """A whole price beside one with cents takes cents too; a price written as text reads
    as the number it is; two whole prices stay bare."""
    got = block(
        presented=[Presented(REF, 1)], shown={REF: {"name": "Nova", "price_sale": 3579}},
        current={REF: {"price_sale": "3599.5"}}, types=TYPES, language=language,
    )  # fmt: skip
    assert got["text"].endswith(f": “Nova”: {said}")
    whole = block(
        presented=[Presented(REF, 1)], shown={REF: {"name": "Nova", "price_sale": 50}},
        current={REF: {"price_sale": 45}}, types=TYPES, language="en",
    )  # fmt: skip
    assert whole["text"].endswith("price down from 50 to 45")


def test_no_change_is_said_of_an_object_the_agent_must_not_show() -> None:
    """An excluded object (disliked) and one that breaks a hard entry (a black one under
    "not black", as shown or as read now) say nothing of what changed; the others do."""
    black, gone, kept = "item_variant:acme:1", "item_variant:acme:2", "item_variant:acme:3"
    shown = {
        black: {"name": "Bota", "color": "black", "price_sale": 100},
        gone: {"name": "Duna", "color": "navy", "price_sale": 100},
        kept: {"name": "Leve", "color": "navy", "price_sale": 100},
    }
    current = {ref: {"price_sale": 120} for ref in shown}
    got = block(
        [pref("h", COLOR, "not_in", ("black",), "must_not")],
        presented=[Presented(ref, 1) for ref in shown], disliked=[Disliked(gone)],
        shown=shown, current=current, types=TYPES, language="en",
    )  # fmt: skip
    changed = {row["ref"]: bool(row.get("changed")) for row in got["already_presented"]}
    assert changed == {black: False, gone: False, kept: True}
    assert got["text"].split("\n") == [
        "Required: colour other than black",
        "Do not show again: “Duna”",
        "Changed since they saw it: “Leve”: price up from 100 to 120",
    ]
    turned = block(
        [pref("h", COLOR, "not_in", ("black",), "must_not")],
        presented=[Presented(kept, 1)], shown={kept: shown[kept]},
        current={kept: {"price_sale": 120, "color": "black"}}, types=TYPES, language="en",
    )  # fmt: skip
    assert "changed" not in turned["already_presented"][0]
