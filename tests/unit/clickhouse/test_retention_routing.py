"""Which states the retention fold settles in Python (``expire``) rather than in the
store: the SQL counts every size field of the space (``attrs.size``, ``attrs.shoe_size``
of examples/types.toml) by its string as it is, so a state whose outcomes give a size
``size_key`` spells otherwise, under any of those fields, goes to Python."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.unit.core.derivation.builders import CONFIG, fold_all, item, outcome, presented
from tests.unit.core.derivation.test_shoe_sizes import EXAMPLE, SHIRT, SNEAKERS, _bought
from turnstream.adapters.clickhouse.retention import _odd_states

SHOES = CONFIG.for_space(EXAMPLE)
E1 = "0190f5a2-7b3c-7def-8123-456789abcd01"


def _stored(events: list[Any]) -> str:
    """The state as ``signal_state`` holds it."""
    state = fold_all(events, SHOES)
    return json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)


def _in_python(text: str, config: Any = SHOES) -> bool:
    return re.search(_odd_states(config), text) is not None


def test_a_state_with_shoe_sizes_spelled_as_counted_is_settled_in_the_store() -> None:
    assert not _in_python(_stored([_bought("o1", SNEAKERS[0], 1, shoe_size="40")]))
    # After another attribute, as a number, beside a size.
    assert not _in_python(_stored([_bought("o1", SNEAKERS[0], 1, gift_wrap="no", shoe_size=40)]))
    assert not _in_python(_stored([_bought("o1", SNEAKERS[0], 1, shoe_size="40", size="M")]))


def test_a_shoe_size_spelled_otherwise_than_counted_is_settled_in_python() -> None:
    for size in ("40,0", "40.50", " 41", "+42", "m", "41\u00a0"):
        assert _in_python(_stored([_bought("o1", SNEAKERS[0], 1, shoe_size=size)])), size
    assert _in_python(
        _stored([_bought("o1", SNEAKERS[0], 1, gift_wrap="no", size="M", shoe_size="40,5")])
    )
    # A space without that size field counts no shoe size: in the store, however spelled.
    assert not _in_python(_stored([_bought("o1", SNEAKERS[0], 1, shoe_size="40,0")]), CONFIG)


def test_a_state_with_clothing_sizes_only_is_settled_in_the_store() -> None:
    assert not _in_python(_stored([_bought("o1", SHIRT, 1, size="M"),
                                   outcome("o2", SHIRT, "purchase", size="40", t=2)]))  # fmt: skip
    # A shoe size shown on a page is a value, not an outcome's size.
    assert not _in_python(_stored([presented("pg", E1, [item(1, SNEAKERS[0], shoe_size="40")])]))
    # A space without that size field counts no shoe size: in the store.
    assert not _in_python(_stored([_bought("o1", SNEAKERS[0], 1, shoe_size="40")]), CONFIG)


def test_a_signed_size_is_settled_in_python_and_values_in_any_spelling_in_the_store() -> None:
    # ``+40`` is counted as ``40`` (``read_decimal``), which the SQL does not spell.
    assert _in_python(_stored([outcome("o1", SHIRT, "purchase", size="+40", t=1)]))
    assert _in_python(_stored([outcome("o1", SHIRT, "purchase", size="-1", t=1)]))
    # Shown values are counted as shown by both folds; derivation merges their spellings.
    shown = [item(1, SHIRT, color="Black"), item(2, SNEAKERS[0], color=" black"),
             item(3, SNEAKERS[1], color="preto")]  # fmt: skip
    assert not _in_python(_stored([presented("pg", E1, shown)]))
