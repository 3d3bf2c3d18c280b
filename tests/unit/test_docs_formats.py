"""docs/wire.md and docs/contract.md are the producer's own pages: their examples are what
the code accepts, and no page of docs/ points outside the repository."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from turnstream.models import parse_item
from turnstream.models.turns import Claim
from turnstream.sdk.claims import parse_contract
from turnstream.sdk.claims.evidence import TurnToCheck

DOCS = Path("docs")
_BLOCK = re.compile(r"```json\n(.*?)```", re.S)


def _blocks(page: str) -> list[dict]:
    return [json.loads(b) for b in _BLOCK.findall((DOCS / page).read_text(encoding="utf-8"))]


def test_every_item_example_of_the_wire_page_is_valid() -> None:
    items = [b for b in _blocks("wire.md") if "type" in b]
    assert {i["type"] for i in items} == {"interaction", "outcome", "turn", "command"}
    for item in items:
        parse_item(json.dumps(item).encode())  # raises naming the field when wrong


def test_the_wire_page_names_every_interaction_kind_and_outcome() -> None:
    text = (DOCS / "wire.md").read_text(encoding="utf-8")
    for kind in ("presented", "seen", "engaged", "feedback", "preference", "attribute",
                 "watch", "unwatch", "purchase", "delivery", "return", "kept",
                 "correct", "delete", "opt_out", "erase"):  # fmt: skip
        assert f"`{kind}`" in text, kind


def test_the_claim_example_of_the_wire_page_is_a_claim() -> None:
    [claim] = [b for b in _blocks("wire.md") if "category" in b]
    Claim.model_validate(claim)


def test_the_contract_page_s_document_and_turn_are_accepted() -> None:
    blocks = _blocks("contract.md")
    doc = next(b for b in blocks if "categories" in b)
    doc["internal_text"]["fingerprints"] = []
    contract = parse_contract(doc)
    assert contract.categories[0].actions.rewrite_mismatch
    turn = TurnToCheck.model_validate(next(b for b in blocks if "output" in b))
    assert turn.calls[0].values[0].identifies


@pytest.mark.parametrize("page", sorted(p.name for p in DOCS.glob("*.md")))
def test_no_page_points_outside_the_repository(page: str) -> None:
    text = (DOCS / page).read_text(encoding="utf-8")
    for outside in ("WIRE.md", "CONTRACT.md", "DESIGN.md", "STYLE.md", "/work/shared"):
        assert outside not in text, f"{page} mentions {outside}"
