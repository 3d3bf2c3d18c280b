"""The configuration check against the object types: tool bindings name declared fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.models.test_object_types import EXAMPLE
from turnstream.config import Settings
from turnstream.core.object_types import check_spaces, types_for_space
from turnstream.errors import ConfigError


def _settings(tmp_path: Path, binding: dict, types: str | None = str(EXAMPLE)) -> Settings:
    path = tmp_path / "bindings.json"
    path.write_text(json.dumps([binding]))
    space = {"features": ["signals"], "tool_bindings": str(path)}
    if types is not None:
        space["types"] = types
    return Settings.model_validate({"spaces": {"acme": space}})


def test_bindings_on_declared_fields_pass(tmp_path: Path) -> None:
    binding = {"tool": "search", "args": [{"attr": "item_variant.color", "param": "colors"}],
               "results": {"path": "$.items", "type": "item_variant", "id": "id",
                           "fields": {"price_sale": "price"}}}  # fmt: skip
    settings = _settings(tmp_path, binding)
    check_spaces(settings)
    assert types_for_space(settings.space("acme")) is not None


def test_an_unknown_field_in_a_binding_is_refused_with_its_path(tmp_path: Path) -> None:
    binding = {"tool": "search", "args": [{"attr": "item_variant.color", "param": "c"},
                                          {"attr": "item_variant.colour", "param": "d"}],
               "results": {"path": "$.items", "type": "item_variant", "id": "id",
                           "fields": {"cost": "price"}}}  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        check_spaces(_settings(tmp_path, binding))
    message = str(caught.value)
    assert "spaces.acme.tool_bindings" in message
    assert "bindings.0.args.1.attr: item_variant.colour" in message
    assert "bindings.0.results.fields.cost: item_variant.cost" in message
    # Without a types document there is nothing to check the bindings against.
    check_spaces(_settings(tmp_path, binding, types=None))


def test_a_bad_types_document_names_the_space(tmp_path: Path) -> None:
    bad = tmp_path / "types.toml"
    bad.write_text("[types.t.fields.f]\nrole = 'taste'\n")
    binding = {"tool": "search", "args": []}
    with pytest.raises(ConfigError, match=r"spaces\.acme\.types: object types .*labels"):
        check_spaces(_settings(tmp_path, binding, types=str(bad)))


def test_a_relative_types_path_follows_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The document is looked up once per path and directory (the ingest rule asks for
    # every message), not once per process: a relative path still means the directory
    # the call is made from.
    text = EXAMPLE.read_text()
    first, second = tmp_path / "a", tmp_path / "b"
    for folder in (first, second):
        folder.mkdir()
    (first / "types.toml").write_text(text)
    taste = 'role = "taste"\nclass = "label"'
    marked = text.replace(taste, taste + "\nsensitive = true", 1)
    assert marked != text
    (second / "types.toml").write_text(marked)
    space = Settings.model_validate({"spaces": {"acme": {"types": "types.toml"}}}).space("acme")
    monkeypatch.chdir(first)
    in_first = types_for_space(space)
    assert types_for_space(space) is in_first
    monkeypatch.chdir(second)
    in_second = types_for_space(space)
    assert in_second is not in_first
    assert in_second.sensitive_names() != in_first.sensitive_names()
