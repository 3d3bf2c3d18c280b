"""Error answers name fields as the sender wrote them: never a step pydantic adds for a
union's members (``function-plain[_scalar()]``, ``list[...]``, ``int``), and one error
per field location, whose message says what the field accepts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from turnstream.models.items import error_pairs
from turnstream.models.object_types import Act
from turnstream.models.requests import CURRENT_MAX, ConstraintsRequest


def _pairs(model: type, body: dict) -> list[tuple[str, str]]:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(body)
    return error_pairs(caught.value)


def test_a_union_value_is_one_error_at_its_field() -> None:
    body = {"space_id": "acme", "current": {"item_variant:acme:9004": {"price_sale": {"a": 1}}}}
    assert _pairs(ConstraintsRequest, body) == [
        (
            "current.item_variant:acme:9004.price_sale",
            "Input should be a string, a number or a boolean, or a valid list",
        )
    ]


def test_a_list_member_of_the_union_is_named_by_its_position() -> None:
    body = {"space_id": "acme", "current": {"item_variant:acme:1": {"sizes": ["M", {"a": 1}]}}}
    (path, _message), *rest = _pairs(ConstraintsRequest, body)
    assert not rest and "[" not in path.replace("[1]", "") and path.endswith("sizes[1]")


def test_a_plain_union_of_another_model_is_one_error() -> None:
    body = {"labels": {"pt": "a", "en": "a", "es": "a"}, "said": ["x"], "attr": "a.b"}
    body["values"] = [True, {"a": 1}]
    assert _pairs(Act, body) == [
        (
            "values[1]",
            "Input should be a valid boolean, or a valid integer, or a valid number, "
            "or a valid string",
        )
    ]


def test_too_many_objects_in_current_names_the_limit() -> None:
    current = {f"item_variant:acme:{i}": {} for i in range(CURRENT_MAX + 1)}
    ((path, message),) = _pairs(ConstraintsRequest, {"space_id": "acme", "current": current})
    assert path == "current" and str(CURRENT_MAX) in message


def test_field_names_that_look_like_types_are_kept() -> None:
    """A key of ``current`` the sender chose is a field, even when it reads as a type."""
    body = {"space_id": "acme", "current": {"item_variant:acme:1": {"str": {}, "int": {}}}}
    paths = [p for p, _ in _pairs(ConstraintsRequest, body)]
    assert paths == ["current.item_variant:acme:1.str", "current.item_variant:acme:1.int"]
