"""A bound search tool over a small in-memory catalogue, end to end against a running worker.

Start the demo and leave it up, then run this from the checkout:

    .venv/bin/turnstream demo --config examples/turnstream.toml --keep-running
    .venv/bin/python examples/tool_counterfactual.py

It reads the demo's pointer (``var/demo/demo.json``: config, store and operator key), and:

1. publishes what one person said (session scope): no black, size M;
2. asks the worker for the person's constraints block (``POST /v1/constraints``) and for
   the SDK profile of its source (``GET /v1/sdk/profile``: the served tool bindings);
3. in one turn, calls ``search_products`` (bound by the served binding, apply mode, with
   the counterfactual of the whole block): the SDK injects the session constraints,
   measures the results over the constraints sent, and runs the same call without the
   block with ``dry_run``;
4. prints the suggestions, the measurement and whether the block changed what the tool
   returned; the turn record goes through the broker into ClickHouse
   (``context_use_constraints``).

``tests/integration/test_sdk_tools.py`` runs :func:`bound_search_turn` against a test
deployment, so this example cannot rot.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.worker_client import WorkerClient
from turnstream.config import Settings, load_settings
from turnstream.sdk import Conversation, ToolRun, tool

SPACE = "acme"
SOURCE = "whatsapp"

#: The catalogue: a few sneakers, one without a colour on record.
CATALOGUE: list[dict[str, Any]] = [
    {"sku": "tn-001", "color": "black", "size": "M", "price": 199.9, "category": "sneakers"},
    {"sku": "tn-002", "color": "white", "size": "M", "price": 249.9, "category": "sneakers"},
    {"sku": "tn-003", "color": "navy", "size": "G", "price": 229.9, "category": "running"},
    {"sku": "tn-004", "color": "black", "size": "G", "price": 189.9, "category": "running"},
    {"sku": "tn-005", "size": "M", "price": 159.9, "category": "sneakers"},
    {"sku": "tn-006", "color": "beige", "size": "P", "price": 179.9, "category": "sneakers"},
]


@tool("search_products", mode="apply", counterfactual="constraints_block")
def search_products(
    query: str = "",
    size: str | None = None,
    colors: list[str] | None = None,
    exclude_colors: list[str] | None = None,
    categories: list[str] | None = None,
    max_price: float | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """The store's search. It honours every filter, but relaxes the colour exclusion when
    fewer than two products are left (and says so in ``relaxed``): sent is not applied."""
    found = [
        p
        for p in CATALOGUE
        if (size is None or p["size"] == size)
        and (not colors or p.get("color") in colors)
        and (not categories or p["category"] in categories)
        and (max_price is None or p["price"] <= max_price)
    ]
    strict = [p for p in found if not exclude_colors or p.get("color") not in exclude_colors]
    relaxed = len(strict) < 2 and strict != found
    return {"items": [dict(p) for p in (found if relaxed else strict)], "relaxed": relaxed}


def _said(profile_id: str, n: int, **interaction: Any) -> dict[str, Any]:
    return {
        "type": "interaction",
        "space_id": SPACE,
        "idempotency_key": f"{profile_id}-said-{n}",
        "profile_id": profile_id,
        "source": SOURCE,
        "conversation_id": f"{profile_id}-conv",
        "occurred_at": datetime.now(UTC).isoformat(),
        "interaction": {
            "kind": "preference",
            "source": "stated",
            "scope": "session",
            **interaction,
        },
    }


def _block_with(client: WorkerClient, profile_id: str, want: int, timeout: float) -> dict:
    """The person's block once it holds ``want`` hard entries (the worker writes what it
    ingests in batches: wait on that, not for a fixed time)."""
    deadline = time.monotonic() + timeout
    while True:
        block = client.constraints({"space_id": SPACE, "profile_id": profile_id})
        if len(block["hard"]) >= want or time.monotonic() > deadline:
            return block
        time.sleep(0.25)


async def bound_search_turn(
    settings: Settings, url: str, key: str, profile_id: str, timeout: float = 60.0
) -> dict[str, Any]:
    """Publish what the person said, take the block and the profile from the worker, and
    run one turn with the bound tool; what the SDK saw and measured, and the record."""
    client = WorkerClient(url, key)
    async with Producer(settings) as producer:
        await producer.publish(
            _said(profile_id, 1, attr="item_variant.color", op="in", values=["black"],
                  strength="must_not")
        )  # fmt: skip
        await producer.publish(
            _said(profile_id, 2, attr="item_variant.size", op="eq", values=["M"], strength="must")
        )
        await producer.flush()
        block = await asyncio.to_thread(_block_with, client, profile_id, 2, timeout)
        profile = await asyncio.to_thread(client.sdk_profile, SPACE, SOURCE)
        conversation = Conversation(
            space=SPACE, source=SOURCE, agent="tool-example", profile_id=profile_id,
            conversation_id=f"{profile_id}-conv", producer=producer, profile=profile,
            language="pt",
        )  # fmt: skip
        async with conversation.turn() as frame:
            frame.cite_block(block)
            runs = [
                await search_products.arun("tênis"),
                # Under 200 only one product is not black: the tool relaxes the colour.
                await search_products.arun("tênis", max_price=200),
            ]
            names = ", ".join(p["sku"] for p in runs[0].result["items"]) or "nada"
            conversation.agent(f"Encontrei: {names}.")
    return {
        "block_version": block["version"],
        "calls": [_summary(run) for run in runs],
        "record": frame.record,
    }


def _summary(run: ToolRun) -> dict[str, Any]:
    assert run.plan is not None and run.measured is not None
    return {
        "args": {k: v for k, v in run.plan.args.items() if v is not None},
        "suggestions": run.plan.suggestions,
        "injected": run.plan.injected,
        "withheld": run.plan.withheld,
        "conflicts": run.plan.conflicts,
        "measured": run.measured.wire(run.tool),
        "counterfactual": None if run.counterfactual is None else vars(run.counterfactual),
        "returned": [p["sku"] for p in run.result["items"]],
    }


def main() -> int:
    pointer = Path("var/demo/demo.json")
    try:
        demo = json.loads(pointer.read_text())
    except (OSError, ValueError):
        print(
            f"no running demo ({pointer}): start one with "
            "`turnstream demo --config examples/turnstream.toml --keep-running`"
        )
        return 1
    settings = load_settings(demo["config"], dsn=demo["dsn"])
    url = f"http://{settings.worker.web_host}:{settings.worker.web_port}"
    person = f"p_tool_example_{uuid.uuid4().hex[:8]}"
    report = asyncio.run(bound_search_turn(settings, url, demo["key"], person))
    report.pop("record")
    print(json.dumps(report, indent=2, ensure_ascii=False))
    print(
        "\nin the store, once the worker has written it:\n"
        "  turnstream sql \"SELECT * FROM context_use_constraints WHERE tool = 'search_products'\""
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
