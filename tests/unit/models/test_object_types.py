"""The object types document: its fields, roles, labels and classes, and clear errors."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from turnstream.errors import ConfigError
from turnstream.models.object_types import CLAIM_CLASSES, load_types, parse_types

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
LABELS = {"pt": "cor", "en": "colour", "es": "color"}


def test_the_example_document_loads_with_every_role() -> None:
    types = load_types(EXAMPLE)
    assert types.role("item_variant.color") == "taste"
    assert types.role("item_variant.price_sale") == "state"
    assert types.role("item_variant.sku") == "identifier"
    assert types.role("item_variant.size") == "attribute"
    assert types.role("item_variant.pattern_code") is None
    # A retail space's fields (issue 36): "no wool" can be said, and its words are known.
    for name in ("material", "fit", "pattern", "style", "gender"):
        assert types.role(f"item_variant.{name}") == "taste"
    assert types.value_labels("pt")[("item_variant.material", "wool")] == "lã"
    assert types.value_labels("es")[("item_variant.color", "black")] == "negro"
    assert types.family("person.clothing_size") == types.family("item_variant.size") == "size"
    assert types.field("item_variant.size").system == "BR"  # type: ignore[union-attr]
    assert types.field("item_variant.price_sale").class_ == "money"  # type: ignore[union-attr]
    assert types.field("item_variant.in_stock").claim_age == timedelta(minutes=15)  # type: ignore[union-attr]
    assert types.sensitive_names() == {"person.diet"}
    assert not types.is_taste("person.diet") and not types.is_taste("item_variant.in_stock")


@pytest.mark.parametrize(("language", "words"), [("pt", "cor"), ("en", "colour"), ("es", "color")])
def test_labels_per_language(language: str, words: str) -> None:
    types = load_types(EXAMPLE)
    assert types.label("item_variant.color", language) == words
    assert types.labels(language)["item_variant.color"] == words
    assert types.label("item_variant.color", "de") is None


def test_json_too(tmp_path: Path) -> None:
    doc = {"types": {"plan": {"fields": {"network": {"labels": LABELS, "role": "taste"}}}}}
    path = tmp_path / "types.json"
    path.write_text(json.dumps(doc))
    assert load_types(path).is_taste("plan.network")


@pytest.mark.parametrize(
    ("field", "where"),
    [
        ({"labels": LABELS, "role": "flavour"}, "types.t.fields.f.role"),
        ({"labels": {"pt": "cor", "en": "colour"}, "role": "taste"}, "types.t.fields.f.labels.es"),
        ({"labels": LABELS, "role": "taste", "class": "colour"}, "types.t.fields.f.class"),
        ({"labels": LABELS, "role": "attribute"}, "types.t.fields.f"),
        ({"labels": LABELS, "role": "state", "family": "size"}, "types.t.fields.f"),
        ({"labels": LABELS, "role": "taste", "colour": 1}, "types.t.fields.f.colour"),
    ],
)
def test_a_bad_field_is_refused_with_its_path(tmp_path: Path, field: dict, where: str) -> None:
    path = tmp_path / "types.json"
    path.write_text(json.dumps({"types": {"t": {"fields": {"f": field}}}}))
    with pytest.raises(ConfigError) as caught:
        load_types(path)
    assert where in str(caught.value) and str(path) in str(caught.value)


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"object types .*nowhere\.toml"):
        load_types(tmp_path / "nowhere.toml")


def test_unknown_says_why() -> None:
    network = {"labels": LABELS, "role": "taste"}
    types = parse_types({"types": {"plan": {"fields": {"network": network}}}})
    assert types.unknown("plan.network") is None
    assert types.unknown("plan.price") == "'plan' declares no field 'price'"
    assert types.unknown("car.color") == "type 'car' is not declared (types: plan)"


def test_the_classes_are_the_claim_checkers() -> None:
    assert set(CLAIM_CLASSES) == {
        "money", "date", "percent", "duration", "quantity", "count", "dosage", "label"
    }  # fmt: skip
