"""A block an agent can use (issue #17): one entry per thing said, the strongest soft
entries only, no taste on a state field, an inferred size beside the stated one."""

from __future__ import annotations

from tests.unit.core.constraints.builders import (
    COLOR,
    SIZE,
    attribute,
    block,
    by_id,
    inference,
    pref,
)

PRICE_SALE = "item_variant.price_sale"
IN_STOCK = "item_variant.in_stock"
BRAND = "item_variant.brand"


def test_the_same_preference_said_twice_is_one_entry_with_every_origin() -> None:
    prefs = [
        pref("old", COLOR, "in", ("navy", "beige"), "prefer", hours_ago=5),
        pref("new", COLOR, "in", ("beige", "navy"), "prefer", hours_ago=1),  # other order
        pref("mid", COLOR, "in", ("navy", "beige"), "prefer", hours_ago=3),
        pref("hard1", SIZE, "eq", ("M",), "must", hours_ago=4),
        pref("hard2", SIZE, "eq", ("M",), "must", hours_ago=2),
    ]
    got = block(prefs)
    assert [s["id"] for s in got["soft"]] == ["new"]  # the newest stands for all
    assert got["soft"][0]["origins"] == ["event:new", "event:mid", "event:old"]
    assert [(h["id"], h["origins"]) for h in got["hard"]] == [
        ("hard2", ["event:hard2", "event:hard1"])
    ]
    assert got["text"].split("\n") == ["Required: size M", "Prefers: colour beige or navy"]


def test_different_strengths_or_values_stay_apart() -> None:
    prefs = [
        pref("a", COLOR, "in", ("navy",), "prefer", hours_ago=2),
        pref("b", COLOR, "in", ("navy",), "must", hours_ago=1),
        pref("c", COLOR, "in", ("navy", "red"), "prefer", hours_ago=3),
    ]
    got = block(prefs)
    assert [h["id"] for h in got["hard"]] == ["b"]
    assert [s["id"] for s in got["soft"]] == ["a", "c"]


def _affinity(n: int, weight: float, attr: str = COLOR) -> object:
    return inference(f"inf_{n:02d}", "affinity", attr, f"v{n}", weight=weight)


def test_soft_entries_are_capped_and_ordered_by_weight() -> None:
    inferred = [_affinity(n, weight=n / 20) for n in range(1, 13)]  # 0.05 .. 0.6
    stated = pref("said", COLOR, "in", ("navy",), "prefer")
    got = block([stated], inferences=inferred, soft_max=8)
    weights = [s["weight"] for s in got["soft"]]
    assert len(got["soft"]) == 8
    assert got["soft"][0]["id"] == "said"  # said by the person: weight 1, first
    assert weights == sorted(weights, reverse=True)
    assert [s["id"] for s in got["soft"][1:]] == [f"inf_{n:02d}" for n in range(12, 5, -1)]
    assert len(block([stated], inferences=inferred)["soft"]) == 13  # no cap asked


def test_no_taste_on_a_state_field_even_from_an_old_row() -> None:
    # Rows written before the types existed: an affinity on a price and a stock flag.
    old = [
        _affinity(1, 0.9, PRICE_SALE),
        _affinity(2, 0.8, IN_STOCK),
        _affinity(3, 0.7, "item_variant.material"),  # no type declares it
        _affinity(4, 0.6, BRAND),
    ]
    got = block(inferences=old)
    assert [s["attr"] for s in got["soft"]] == [BRAND]
    # Without a types document, no affinity enters at all.
    assert block(inferences=old, types=None)["soft"] == []


def test_an_inferred_size_conflicts_with_a_stated_hard_size_and_loses() -> None:
    stated = pref("said_m", SIZE, "eq", ("M",), "must")
    size_l = inference("inf_l", "attribute", SIZE, "L", polarity=None, confidence=0.8)
    got = block([stated], inferences=[size_l], asked=("size",))
    assert got["conflicts"] == [
        {
            "entries": ["inf_l", "said_m"],
            "kept": "said_m",
            "reason": "stated_over_inferred",
            "ask": SIZE,
        }
    ]
    assert by_id(got["attributes"])["inf_l"]["lost"] is True
    assert "lost" not in by_id(got["hard"])["said_m"]
    # The loser is no line of its own; the one question names both sides.
    assert got["text"].split("\n") == ["Required: size M", "Ask first: size (said M; inferred L)"]
    # The same size: no conflict.
    same = inference("inf_m", "attribute", SIZE, "M", polarity=None)
    assert block([stated], inferences=[same], asked=("size",))["conflicts"] == []
    # Not asked: the inferred size is not in the block, so nothing clashes.
    assert block([stated], inferences=[size_l])["conflicts"] == []


def test_an_inferred_size_against_a_stated_size_of_the_same_family() -> None:
    said = attribute("a_m", "person.clothing_size", "M", system="BR", hours_ago=400)
    size_l = inference("inf_l", "attribute", SIZE, "L", polarity=None)
    got = block(attributes=[said], inferences=[size_l], asked=("size",))
    assert got["conflicts"] == [
        {"entries": ["a_m", "inf_l"], "kept": "a_m", "reason": "stated_over_inferred", "ask": SIZE}
    ]
    # Another measuring system measures differently: no clash.
    eu = attribute("a_eu", "person.clothing_size", "40", system="EU")
    assert block(attributes=[eu], inferences=[size_l], asked=("size",))["conflicts"] == []


def test_labels_come_from_the_types_in_the_spaces_language() -> None:
    prefs = [
        pref("p1", COLOR, "not_in", ("black",), "must_not"),
        pref("p2", SIZE, "eq", ("M",), "must", hours_ago=2),
    ]
    lines = {lang: block(prefs, language=lang)["text"].split("\n") for lang in ("pt", "en", "es")}
    assert lines["pt"] == ["Obrigatório: cor que não seja preto", "Obrigatório: tamanho M"]
    assert lines["en"] == ["Required: colour other than black", "Required: size M"]
    assert lines["es"] == ["Obligatorio: color que no sea negro", "Obligatorio: talla M"]
    # The space's own labels win over the types'.
    own = block(prefs, language="pt", labels={COLOR: "tom"})["text"]
    assert own.startswith("Obrigatório: tom que não seja preto")
