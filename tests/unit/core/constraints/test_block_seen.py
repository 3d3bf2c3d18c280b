"""What changed since seen, as a developer met it with the running demo: look-alikes whose
changed field is all that tells them apart, an interest ``current`` puts over a hard
limit, sizes gained and lost, the order of changed objects, the field a name is told by,
prices in local formats and junk, flags in the language's words."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.unit.core.constraints.builders import block, inference, pref
from turnstream.core.constraints import Disliked, Presented, UnreadableState
from turnstream.core.constraints.block import object_names
from turnstream.core.constraints.changes import changes_since_shown
from turnstream.core.constraints.money import MONEY_BOUND, read_money
from turnstream.errors import TurnstreamError
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation

ROOT = Path(__file__).resolve().parents[4]
ACME = load_types(ROOT / "examples" / "types.toml")
LUMEN = load_types(ROOT / "examples" / "types_electronics.toml")
PRICE = "item_variant.price_sale"
A, B, C = "item_variant:lumen:1", "item_variant:lumen:2", "item_variant:lumen:3"


def _interests(*refs: str) -> list[Any]:
    return [inference(f"i{i}", "interest", "item_variant.ref", r) for i, r in enumerate(refs)]


def test_look_alikes_told_apart_by_the_field_that_changed_as_it_was_shown() -> None:
    """Two phones shown as (Motorola, 128 GB), differing only in price, both repriced:
    both still named, by the price they showed, in every line."""
    shown = {
        A: {"brand": "motorola", "storage_gb": 128, "price_sale": 3699},
        B: {"brand": "motorola", "storage_gb": 128, "price_sale": 3899},
        C: {"brand": "samsung", "storage_gb": 128, "price_sale": 2999},
    }
    got = block(
        inferences=_interests(A, B, C), presented=[Presented(r, 1) for r in shown],
        shown=shown, current={A: {"price_sale": 3599.5}, B: {"price_sale": 3799}},
        types=LUMEN, language="en",
    )  # fmt: skip
    assert got["text"].split("\n") == [
        "Showed interest in (inferred): product (Motorola, 128 GB, price 3,699), "
        "product (Motorola, 128 GB, price 3,899), product (Samsung, 128 GB)",
        "Changed since they saw it: product (Motorola, 128 GB, price 3,699): price down from "
        "3,699.00 to 3,599.50; product (Motorola, 128 GB, price 3,899): price down from "
        "3,899 to 3,799",
    ]


def test_no_name_fits_another_object_of_the_block() -> None:
    """Three red variants, two of size M told apart by list price, whose price changed
    for one: both M ones say it (as shown), never one "variante (vermelho, tamanho M)"
    beside "variante (vermelho, tamanho M, preço de tabela 479,90)"."""
    refs = [f"item_variant:acme:{i}" for i in range(3)]
    shown = {
        refs[0]: {"color": "red", "size": "M", "price_list": 479.9},
        refs[1]: {"color": "red", "size": "M", "price_list": 399.9},
        refs[2]: {"color": "red", "size": "G", "price_list": 399.9},
    }
    names = object_names(refs, shown, ACME, "pt", changed={refs[1]: ["price_list"]})
    assert names == {
        refs[0]: "variante (vermelho, tamanho M, preço de tabela 479,90)",
        refs[1]: "variante (vermelho, tamanho M, preço de tabela 399,90)",
        refs[2]: "variante (vermelho, tamanho G, preço de tabela 399,90)",
    }
    # A name that says no more than another object showed is no name of it: the one that
    # showed a size is named by it, the other (nothing tells it apart) only counted.
    shown = {refs[0]: {"color": "red"}, refs[1]: {"color": "red", "size": "M"}}
    assert object_names(refs[:2], shown, ACME, "pt") == {refs[1]: "variante (vermelho, tamanho M)"}


def _prefix_pairs(names: list[str]) -> list[tuple[str, str]]:
    """Pairs of names where one, less its closing bracket, begins the other."""
    return [
        (a, b)
        for a in names
        for b in names
        if a != b and a.endswith(")") and b.startswith(a[:-1] + ", ")
    ]


@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_generated_people_with_current_get_no_shared_or_prefix_names(language: str) -> None:
    """Over many people whose objects look alike and whose prices and sizes change, the
    objects the block names never share words, no name begins another, and an object is
    left unnamed only when another showed all it showed (nothing tells it apart)."""
    rng = random.Random(7)
    prefixed = unnamed = 0

    def within(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return all(b.get(k) == v for k, v in a.items())

    for _ in range(200):
        shown: dict[str, dict[str, Any]] = {}
        for i in range(rng.randint(2, 7)):
            values: dict[str, Any] = {"color": rng.choice(["red", "navy"])}
            if rng.random() < 0.6:
                values["size"] = rng.choice(["M", "G"])
            values["price_sale"] = rng.choice([199.9, 249.9])
            if rng.random() < 0.5:
                values["price_list"] = rng.choice([299.9, 349.9])
            shown[f"item_variant:acme:{i}"] = values
        refs = list(shown)
        current = {
            r: {"price_sale": rng.choice([179.9, 199.9, 259.9])} for r in refs if rng.random() < 0.6
        }
        got = block(
            inferences=_interests(*refs), presented=[Presented(r, 1) for r in refs],
            shown=shown, current=current, types=ACME, language=language,
        )  # fmt: skip
        changed = {e["ref"]: [c["field"] for c in e["changed"]]
                   for e in got["already_presented"] if e.get("changed")}  # fmt: skip
        names = object_names(refs, shown, ACME, language, changed=changed)
        said = list(names.values())
        assert len(set(said)) == len(said), said
        prefixed += bool(_prefix_pairs(said))
        unnamed += sum(
            not any(within(shown[r], shown[o]) for o in refs if o != r)
            for r in refs
            if r not in names
        )
    assert prefixed == 0
    assert unnamed == 0


def test_an_object_over_a_hard_limit_now_is_neither_an_interest_nor_changed() -> None:
    """Required: price up to 2,500. A liked phone repriced to 2,999 is no interest and no
    change; one shown at 3,699 (no interest then) that costs 2,400 now is both."""
    shown = {A: {"brand": "motorola", "price_sale": 2399},
             B: {"brand": "samsung", "price_sale": 3699}}  # fmt: skip
    limit = [pref("h", PRICE, "lte", (2500,), "must")]
    before = block(limit, inferences=_interests(A, B), presented=[Presented(r, 1) for r in shown],
                   shown=shown, types=LUMEN, language="en")  # fmt: skip
    assert "Showed interest in (inferred): product (Motorola)" in before["text"].split("\n")
    got = block(
        limit, inferences=_interests(A, B), presented=[Presented(r, 1) for r in shown],
        shown=shown, current={A: {"price_sale": 2999}, B: {"price_sale": "2,400"}},
        types=LUMEN, language="en",
    )  # fmt: skip
    assert got["text"].split("\n") == [
        "Required: price up to 2,500",
        "Showed interest in (inferred): product (Samsung)",
        "Changed since they saw it: product (Samsung): price down from 3,699 to 2,400",
    ]
    assert [e.get("changed") is not None for e in got["already_presented"]] == [False, True]
    # A disliked object is never said, whatever its price now.
    gone = block(limit, presented=[Presented(B, 1)], disliked=[Disliked(B)], shown=shown,
                 current={B: {"price_sale": 2400}}, types=LUMEN, language="en")  # fmt: skip
    assert "changed" not in gone["already_presented"][0]


SIZES = {
    "pt": "“Camisa”: tamanhos em estoque: agora também GG, não mais P",
    "en": "“Camisa”: sizes in stock: now also GG, no longer P",
    "es": "“Camisa”: tallas en stock: ahora también GG, ya no P",
}


@pytest.mark.parametrize("language", ["pt", "en", "es"])
def test_sizes_gained_and_lost_are_both_said(language: str) -> None:
    ref = "item_variant:acme:9"
    shown = {ref: {"name": "Camisa", "stock_sizes": "P, M, G"}}
    got = block(presented=[Presented(ref, 1)], shown=shown, types=ACME, language=language,
                current={ref: {"stock_sizes": ["M", "G", "GG"]}})  # fmt: skip
    assert got["text"].split(": ", 1)[1] == SIZES[language]
    assert [(c["change"], c["values"]) for c in got["already_presented"][0]["changed"]] == [
        ("new_value", ["GG"]),
        ("value_gone", ["P"]),
    ]


def test_sizes_compare_without_case_spaces_or_language() -> None:
    ref = "item_variant:acme:9"
    shown = {"stock_sizes": "P, M, G, tamanho único"}
    assert changes_since_shown(ref, shown, {"stock_sizes": " p,m , g,One Size"}, ACME) == []
    [gone] = changes_since_shown(ref, shown, {"stock_sizes": ["m", "g", "one-size"]}, ACME)
    assert (gone.kind, gone.values) == ("value_gone", ("P",))


def test_changes_the_person_cares_about_come_first() -> None:
    """Interests first (a stock gone before a price, a larger price change before a
    smaller), then other objects, no-interest objects last: three named at most."""
    refs = [f"item_variant:acme:{i}" for i in range(6)]
    shown = {r: {"name": f"N{i}", "price_sale": 100, "in_stock": True} for i, r in enumerate(refs)}
    current = {
        refs[0]: {"price_sale": 90},  # no interest shown
        refs[1]: {"price_sale": 150},  # another object
        refs[2]: {"price_sale": 95},  # interest, small change
        refs[3]: {"price_sale": 70},  # interest, larger change
        refs[4]: {"in_stock": False},  # interest, gone
        refs[5]: {"price_sale": 80},  # stated preference for it
    }
    infs = [
        *_interests(refs[2], refs[3], refs[4]),
        inference("n", "implicit_negative", "item_variant.ref", refs[0], polarity="avoid"),
    ]
    said = [pref("p", "item_variant.ref", "in", (refs[5],), "prefer")]
    got = block(said, inferences=infs, presented=[Presented(r, 1) for r in refs], shown=shown,
                current=current, types=ACME, language="en")  # fmt: skip
    [line] = [x for x in got["text"].split("\n") if x.startswith("Changed")]
    assert line == (
        "Changed since they saw it: “N4”: out of stock; “N3”: price down from 100 to 70; "
        "“N5”: price down from 100 to 80; and 3 more"
    )
    alone = block(inferences=infs[-1:], presented=[Presented(r, 1) for r in refs[:2]],
                  shown=shown, current=current, types=ACME, language="en")  # fmt: skip
    assert alone["text"].endswith("“N1”: price up from 100 to 150; “N0”: price down from 100 to 90")


def test_a_name_says_the_sale_price_before_the_list_price() -> None:
    """Fields of one rank in the order the types document declares them (price_sale
    before price_list), a field whose change the block says after every other."""
    refs = ["item_variant:acme:1", "item_variant:acme:2"]
    shown = {
        refs[0]: {"color": "red", "size": "M", "price_sale": 399.9, "price_list": 479.9},
        refs[1]: {"color": "red", "size": "M", "price_sale": 349.9, "price_list": 449.9},
    }
    assert object_names(refs, shown, ACME, "pt") == {
        refs[0]: "variante (vermelho, preço 399,90)",
        refs[1]: "variante (vermelho, preço 349,90)",
    }
    assert object_names(refs, shown, ACME, "pt", changed={refs[0]: ["price_sale"]}) == {
        refs[0]: "variante (vermelho, preço de tabela 479,90)",
        refs[1]: "variante (vermelho, preço de tabela 449,90)",
    }


@pytest.mark.parametrize(
    ("language", "sent", "said"),
    [
        ("pt", "1.299,90", "preço subiu de 199,90 para 1.299,90"),
        ("pt", "R$ 3.599", "preço subiu de 199,90 para 3.599,00"),
        ("en", "3,599.00", "price up from 199.90 to 3,599.00"),
        ("en", "USD 49.90", "price down from 199.90 to 49.90"),
        ("es", "49,90 €", "precio bajó de 199,90 a 49,90"),
    ],
)
def test_a_price_in_the_spaces_format_is_read(language: str, sent: str, said: str) -> None:
    ref = "item_variant:acme:1"
    got = block(presented=[Presented(ref, 1)], shown={ref: {"name": "Nova", "price_sale": 199.9}},
                current={ref: {"price_sale": sent}}, types=ACME, language=language)  # fmt: skip
    assert got["text"].endswith(f"“Nova”: {said}")
    assert isinstance(got["already_presented"][0]["changed"][0]["now"], float)


@pytest.mark.parametrize(
    "sent", ["NaN", "Infinity", float("nan"), float("inf"), -5, 1e300, MONEY_BOUND, "-5",
             "cinco", "12 34", [199.9], True, "R$ 5 €", "ABC 12"],
)  # fmt: skip
def test_a_price_that_is_no_price_is_refused_naming_its_path(sent: Any) -> None:
    ref = "item_variant:acme:1"
    with pytest.raises(UnreadableState) as caught:
        block(presented=[Presented(ref, 1)], shown={ref: {"price_sale": 49.9}}, types=ACME,
              current={ref: {"price_sale": sent, "in_stock": True}}, language="pt")  # fmt: skip
    assert caught.value.field == f"current.{ref}.price_sale"
    # Unknown (None) is no price either way, and other fields are not prices.
    block(current={ref: {"price_sale": None, "in_stock": "talvez"}}, types=ACME)


def test_read_money_bounds() -> None:
    assert read_money(0, "en") == 0.0 and read_money("999.999.999.999,99", "pt") < MONEY_BOUND


@pytest.mark.parametrize(
    ("language", "field", "yes", "maybe"),
    [("pt", "em estoque", "sim", "de sim para “talvez”"),
     ("en", "in stock", "yes", "from yes to “maybe”"),
     ("es", "en stock", "sí", "de sí a “quizá”")],
)  # fmt: skip
def test_a_flag_is_said_in_the_languages_words(
    language: str, field: str, yes: str, maybe: str
) -> None:
    """Everywhere the block says a value: a change, a requirement; a word that is no
    flag quoted as the producer's."""
    ref = "item_variant:acme:1"
    word = maybe.rsplit("“", 1)[1].rstrip("”")
    got = block(presented=[Presented(ref, 1)], shown={ref: {"name": "Nova", "in_stock": True}},
                current={ref: {"in_stock": word}}, types=ACME, language=language)  # fmt: skip
    assert got["text"].endswith(f"“Nova”: {field} {maybe}")
    required = block([pref("s", "item_variant.in_stock", "eq", (True,), "must")], types=ACME,
                     language=language)  # fmt: skip
    assert required["text"].endswith(f" {field} {yes}")


def test_the_sdks_read_reads_prices_and_refuses_junk_as_the_block_does() -> None:
    ref = "item_variant:acme:5"
    conv = Conversation(space="acme", source="web", agent="a", profile_id="p1",
                        recorder=lambda _: None, language="pt", types=ACME)  # fmt: skip
    with conv.turn() as frame:
        frame.interact({
            "kind": "presented", "list_id": "l1", "list_kind": "search", "visible_k": 3,
            "items": [{"pos": 1, "ref": ref, "shown": {"price_sale": 199.9,
                                                       "stock_sizes": "P, M, G"}}],
        })  # fmt: skip
        read = [{"field": "price_sale", "value": "R$ 1.299,90"},
                {"field": "stock_sizes", "class": "label", "value": "m,g,gg"}]  # fmt: skip
        seen = frame.record_read(ref, read, type="item_variant")
        assert seen.text == (
            "Mudou desde que viu: preço subiu de 199,90 para 1.299,90, "
            "tamanhos em estoque: agora também GG, não mais P"
        )
        with pytest.raises(TurnstreamError, match=rf"{ref}\.price_sale"):
            frame.record_read(ref, [{"field": "price_sale", "value": "NaN"}], type="item_variant")
    assert len(frame.reads) == 1  # the refused read is not recorded


def test_an_object_named_only_by_what_changed_is_named_by_it_as_shown() -> None:
    """Before, an object that showed only its price read "Mudou desde que viu: 1 item"
    once its price changed: the agent was told something changed, not what, nor of
    which object."""
    ref = "item_variant:acme:1"
    got = block(presented=[Presented(ref, 1)], shown={ref: {"price_sale": 1299.9}},
                current={ref: {"price_sale": 1199.9}}, types=ACME, language="pt")  # fmt: skip
    assert got["text"] == (
        "Mudou desde que viu: variante (preço 1.299,90): preço caiu de 1.299,90 para 1.199,90"
    )
