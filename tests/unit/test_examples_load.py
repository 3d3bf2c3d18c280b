"""The shipped examples load as they are: `make run` and every config built on them read
these files (two branches once declared the same field twice and the worker refused to
start)."""

from pathlib import Path

from turnstream.config import load_settings
from turnstream.models.object_types import load_types

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_example_types_document_loads() -> None:
    types = load_types(EXAMPLES / "types.toml")
    assert "item_variant" in types.types


def test_the_example_config_loads_with_its_types() -> None:
    settings = load_settings(EXAMPLES / "turnstream.toml")
    assert settings.spaces
