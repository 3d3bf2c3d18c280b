"""``field_of``: a field's value across the interaction kinds that share a row."""

from __future__ import annotations

from pydantic import TypeAdapter

from turnstream.models import Interaction, field_of


def _interaction(data: dict) -> object:
    return TypeAdapter(Interaction).validate_python(data)


def test_a_field_the_kind_has_is_its_value_and_one_it_lacks_is_the_default() -> None:
    exposure = "0192f0a1-7c1e-7b3a-9d2e-5f4a3b2c1d0e"
    seen = _interaction({"kind": "seen", "exposure_id": exposure, "max_index_seen": 4})
    assert field_of(seen, "exposure_id") == exposure
    assert field_of(seen, "list_id", "") == ""
    assert field_of(seen, "ref") is None
    engaged = _interaction({"kind": "engaged", "ref": "sku-1", "action": "click"})
    assert field_of(engaged, "ref") == "sku-1"
    assert field_of(engaged, "attr", "") == ""
    # A field the kind has, left unset: its own value (None), not the default.
    assert field_of(engaged, "exposure_id", "x") is None
    assert field_of(engaged, "exposure_id", "x") == getattr(engaged, "exposure_id", "x")
