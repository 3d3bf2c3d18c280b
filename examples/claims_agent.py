"""A scripted shop agent of five turns in English and five in Portuguese, checked by the
claim contract the way the served profile says (no model, no network).

    .venv/bin/python examples/claims_agent.py

The profile is what ``GET /v1/sdk/profile`` would serve for the source ``web``: the
example contract (examples/claims/retail.json), the object types (examples/types.toml) and
the tool bindings (examples/tool_bindings.json). ``search_products`` is bound by it, so its
results (names, prices, stock) are the claims' evidence; ``reserve_item`` is not bound and
is only recorded. Each reply goes through ``conversation.claims.guard_text`` (context
``chat``), then into the turn record. Against a running worker, build the profile with
``WorkerClient(url, key).sdk_profile("acme", "web")`` and pass
``producer=SyncProducer(lambda: Producer(settings))`` instead of ``recorder=``.

``tests/unit/sdk/test_claims_agent.py`` runs :func:`run` and checks every verdict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turnstream.core.constraints import load_bindings
from turnstream.core.constraints.bindings import profile_for
from turnstream.models.object_types import load_types
from turnstream.sdk import Conversation, tool

HERE = Path(__file__).resolve().parent
NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
CATALOGUE = [
    {"sku": "ar-1", "name": "Aero Runner", "price": 129.99, "stock": 7, "color": "blue"},
    {"sku": "cf-2", "name": "City Flex", "price": 99.90, "stock": 3, "color": "white"},
]


@tool("search_products")
def search_products(query: str = "", **filters: Any) -> dict[str, Any]:
    """The shop's search (the served binding renders the constraints into ``filters``)."""
    return {"items": [dict(item) for item in CATALOGUE], "relaxed": False}


@tool("reserve_item")
def reserve_item(sku: str) -> dict[str, Any]:
    """Holds one unit for the person (not bound: recorded as it is)."""
    return {"reserved": sku}


def served_profile() -> dict[str, Any]:
    """What ``GET /v1/sdk/profile?space_id=acme&source=web`` answers for these files."""
    contract = json.loads((HERE / "claims/retail.json").read_text(encoding="utf-8"))
    types = load_types(HERE / "types.toml").model_dump(mode="json", by_alias=True)
    bindings = load_bindings(HERE / "tool_bindings.json")
    return json.loads(json.dumps(profile_for("acme", "web", bindings, contract, types)))


#: (language, what the tools are asked, the draft reply) per turn.
Step = tuple[str, Callable[[], None], str]


def _search() -> None:
    search_products("running shoes")


def _search_and_reserve() -> None:
    search_products("city flex")
    reserve_item("cf-2")


SCRIPT: list[Step] = [
    ("en", _search, "The Aero Runner is $129.99 and the City Flex is $99.90."),
    ("en", _search, "Good choice: the City Flex is now $129.99."),
    ("en", _search, "The City Flex costs about $100, and shipping is free above $50.00."),
    ("en", _search, "Only 3 left in stock of the City Flex."),
    ("en", _search_and_reserve, "I reserved the City Flex for you."),
    ("pt", _search, "O Aero Runner sai por R$ 129,99 e o City Flex por R$ 99,90."),
    ("pt", _search, "O City Flex sai por R$ 129,99."),
    ("pt", _search, "O City Flex custa cerca de R$ 100, com frete grátis acima de R$ 50,00."),
    ("pt", _search, "Restam 5 em estoque do City Flex."),
    ("pt", _search_and_reserve, "Reservei o City Flex para você."),
]


def run(script: list[Step] = SCRIPT) -> list[dict[str, Any]]:
    """Every turn of the script; returns each turn record with the text that went out
    (``said``: never in the record itself)."""
    records: list[dict[str, Any]] = []
    conversation = Conversation(
        space="acme",
        source="web",
        agent="sales-assistant",
        handle={"type": "phone_e164", "value": "+5511900005678"},
        conversation_id="web-demo",
        profile=served_profile(),
        recorder=records.append,
        context="chat",
        now=lambda: NOW,
        clock=lambda: 0.0,  # the guard's budget on a still clock: the same verdicts always
    )
    said: list[str] = []
    for language, tools, draft in script:
        with conversation.turn(language=language):
            tools()
            guarded = conversation.claims.guard_text(draft)
            conversation.agent(guarded.text)
            said.append(guarded.text)
    return [record | {"said": text} for record, text in zip(records, said, strict=True)]


def main() -> None:
    for record in run():
        print(f"[{record['language']}] {record['said']}")
        for claim in record["claims"]:
            print(
                f"    {claim['category']:15s} {claim['value'] or '':10s} "
                f"{claim['verdict']:12s} {claim['action']}"
            )


if __name__ == "__main__":
    main()
