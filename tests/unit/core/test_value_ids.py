"""The value a field's value names: one decimal rule with sizes' and the block's words
(:func:`~turnstream.core.digits.read_decimal`), and one :class:`ValueIds` per types
document, built once."""

from __future__ import annotations

from pathlib import Path

import pytest

from turnstream.core.constraints.conditions import holds
from turnstream.core.derivation.values import size_key
from turnstream.core.digits import read_decimal
from turnstream.core.folding import normal
from turnstream.core.value_ids import canonical, value_ids
from turnstream.models.object_types import load_types

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
SHOE = "person.shoe_size"


@pytest.mark.parametrize(
    "written",
    ["40", "40.0", "40,0", " 40,5 ", "+40", "-2,5", "0.5", "007", "1.299", "1,299", "40.123",
     "38-40", "12345678901234567890", "1e3", "00"],
)  # fmt: skip
def test_a_number_written_as_text_is_read_as_sizes_read_it(written: str) -> None:
    number = read_decimal(written.strip())
    named = value_ids(None).of(SHOE, written)
    if number is None:
        assert named == normal(written)  # not a number: a word, as words are
    else:
        assert named == size_key(written) == size_key(number)


def test_a_sign_is_kept() -> None:
    ids = value_ids(None)
    assert ids.of(SHOE, "-2,5") == "-2.5" != ids.of(SHOE, "2,5")
    assert ids.key(SHOE, "-2.5") == ids.key(SHOE, -2.5) != ids.key(SHOE, 2.5)


def test_a_types_document_s_ids_are_built_once() -> None:
    types = load_types(EXAMPLE)
    assert value_ids(types) is value_ids(types)
    again = load_types(EXAMPLE)  # another document (equal, but loaded again): its own
    assert value_ids(again) is not value_ids(types)
    assert value_ids(again) == value_ids(types)
    assert value_ids(None) is value_ids(None)


@pytest.mark.parametrize("zero", [0, 0.0, -0.0, "0", "-0", "-0.0"])
def test_minus_zero_is_zero(zero: object) -> None:
    """-0.0 is the number 0: a hard ``not_in [0]`` refuses it, ``eq 0`` holds for it."""
    assert canonical(zero) == canonical(0)  # type: ignore[arg-type]
    assert holds("not_in", [0], zero) is False  # type: ignore[arg-type]
    assert holds("eq", [0.0], zero) is True  # type: ignore[arg-type]
