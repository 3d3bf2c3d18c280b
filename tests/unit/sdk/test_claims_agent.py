"""examples/claims_agent.py: five turns in English and five in Portuguese through the served
profile; every verdict is the one a person reading the catalogue would give."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from turnstream.models import parse_item


def _example() -> ModuleType:
    path = Path("examples/claims_agent.py")
    spec = importlib.util.spec_from_file_location("claims_agent", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXPECTED = [
    ("en", [("price", "129.99", "matched"), ("price", "99.90", "matched")]),
    ("en", [("price", "129.99", "mismatch")]),  # the Aero Runner's price on the City Flex
    ("en", [("price", "100.00", "not_checked"), ("price", "50.00", "not_checked")]),
    ("en", [("stock", "3", "matched")]),
    ("en", [("action_promise", "I reserved", "matched")]),  # reserve_item was called
    ("pt", [("price", "129.99", "matched"), ("price", "99.90", "matched")]),
    ("pt", [("price", "129.99", "mismatch")]),
    ("pt", [("price", "100.00", "not_checked"), ("price", "50.00", "not_checked")]),
    ("pt", [("stock", "5", "mismatch")]),  # 3 in stock
    ("pt", [("action_promise", "Reservei", "matched")]),
]


def test_the_example_agent_s_verdicts() -> None:
    records = _example().run()
    got = [
        (r["language"], [(c["category"], c["value"], c["verdict"]) for c in r["claims"]])
        for r in records
    ]
    assert got == EXPECTED
    for record in records:
        said = record.pop("said")
        assert said not in json.dumps(record)  # the output's text never travels
        parse_item(json.dumps(record).encode())
        assert record["contract_version"] == "retail-2026-11"


def test_the_wrong_price_goes_out_corrected_and_the_rest_as_written() -> None:
    records = _example().run()
    said = [r["said"] for r in records]
    assert said[1] == "Good choice: the City Flex is now $99.90."
    assert said[6] == "O City Flex sai por R$ 99,90."
    assert [r["guard_acted"] for r in records] == [i in (1, 6) for i in range(10)]
    assert said[8] == "Restam 5 em estoque do City Flex."  # a count is never rewritten
    [threshold] = [c for c in records[2]["claims"] if c["value"] == "50.00"]
    assert threshold["role"] == "threshold"
