"""A shoe's size and a shirt's are different fields (examples/types.toml): sneakers bought
in 40 (``attrs.shoe_size``) fill ``item_variant.shoe_size``, of the family of
``person.shoe_size``, never the clothing size, so a stated clothing size M clashes with
nothing and an asked shoe size is known."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from tests.unit.core.constraints.builders import attribute, block
from tests.unit.core.derivation.builders import CONFIG, at, event, fold_all
from turnstream.core.derivation.derive import derive
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.derivation.inference import Inference
from turnstream.core.derivation.window import cut_for, expire
from turnstream.models.object_types import load_types

EXAMPLE = load_types(Path(__file__).resolve().parents[4] / "examples" / "types.toml")
SNEAKERS = ("item_variant:acme:1", "item_variant:acme:2")
SHIRT = "item_variant:acme:3"
DAY = 86_400.0


def _bought(key: str, ref: str, t: float, **attrs: Any) -> Any:
    payload = {"outcome": "purchase", "ref": ref, "order_id": key, "exposure_token": None,
               "attrs": attrs, "reason": None, "for": None}  # fmt: skip
    return event("outcome", payload, key, t=t)


def _derived(*events: Any) -> list[Inference]:
    engine = SignalsEngine(CONFIG, types_for=lambda space: EXAMPLE if space == "acme" else None)
    for i, one in enumerate(events):
        engine.offer(one, at(i))
    return [inf for derivation in engine.fire_all() for inf in derivation.inferences]


def test_the_example_space_counts_each_attribute_field_apart() -> None:
    engine = SignalsEngine(CONFIG, types_for=lambda space: EXAMPLE if space == "acme" else None)
    fields = engine.config_for("acme").size_fields
    assert {"item_variant.size", "item_variant.shoe_size", "person.shoe_size"} <= fields
    assert engine.config_for("lumen").size_fields == frozenset()


def test_sneakers_bought_in_40_fill_the_shoe_size_not_the_clothing_size() -> None:
    inferred = _derived(
        _bought("o1", SNEAKERS[0], 1, shoe_size="40"),
        _bought("o2", SNEAKERS[1], 2, shoe_size="40"),
        _bought("o3", SHIRT, 3, size="M"),
    )
    sizes = sorted((i.attr, i.value) for i in inferred if i.kind == "attribute")
    assert sizes == [("item_variant.shoe_size", "40"), ("item_variant.size", "M")]

    said = [attribute("a1", "person.clothing_size", "M")]
    for language, line in (("pt", "número do calçado 40"), ("en", "shoe size 40")):
        got = block(attributes=said, inferences=inferred, types=EXAMPLE, language=language,
                    asked=("shoe_size", "clothing_size"))  # fmt: skip
        assert got["conflicts"] == [] and got["ask"] == []
        assert {(r["attr"], r["value"]) for r in got["attributes"]} == {
            ("person.clothing_size", "M"),  # the shirt's M inferred is said by the stated M
            ("item_variant.shoe_size", "40"),
        }
        assert any(t.endswith(f"{line} (BR)") for t in got["text"].split("\n")), got["text"]
    # Asked before anything is known, the shoe size is asked in its own words.
    nothing = block(types=EXAMPLE, asked=("shoe_size",), language="pt")
    assert nothing["text"] == "Pergunte antes: número do calçado"


def test_a_size_under_attrs_size_stays_the_clothing_size() -> None:
    inferred = _derived(
        _bought("o1", SNEAKERS[0], 1, size="40"), _bought("o2", SNEAKERS[1], 2, size="40")
    )
    [size] = [i for i in inferred if i.kind == "attribute"]
    assert (size.attr, size.value) == ("item_variant.size", "40")
    # ...which is why a shoe's size goes under attrs.shoe_size: said this way, it clashes.
    got = block(attributes=[attribute("a1", "person.clothing_size", "M")], inferences=inferred,
                types=EXAMPLE, asked=("size",), language="pt")  # fmt: skip
    assert got["text"].split("\n")[-1] == "Pergunte antes: tamanho (disse M; inferido 40)"


def test_shoe_sizes_aged_past_the_window_are_inferred_as_before() -> None:
    """Settled by the space's config (``for_space``: what the retention fold takes),
    sneakers bought 60 days ago still give the shoe size; by the bare ``[signals]``
    config their ``attrs.shoe_size`` is no size and the shoe size goes."""
    config = CONFIG.for_space(EXAMPLE)
    old = [
        _bought("o1", SNEAKERS[0], 1, shoe_size="40"),
        _bought("o2", SNEAKERS[1], 2, shoe_size=40),
        _bought("o3", SHIRT, 3, size="M"),
    ]
    state = fold_all([*old, _bought("o4", SHIRT, 60 * DAY, size="M")], config)
    expected = derive(copy.deepcopy(state), {}, config, EXAMPLE)
    assert ("item_variant.shoe_size", "40") in {(i.attr, i.value) for i in expected}
    cut = cut_for(state.newest_occurred_at, config)  # type: ignore[arg-type]
    bare = copy.deepcopy(state)
    assert expire(state, cut, config).signals == 3 and set(state.signals) == {"o4"}
    assert state.buckets["self"].sizes["item_variant.shoe_size"]["40"].net == 2
    assert derive(state, {}, config, EXAMPLE) == expected
    expire(bare, cut, CONFIG)
    assert "item_variant.shoe_size" not in bare.buckets["self"].sizes
