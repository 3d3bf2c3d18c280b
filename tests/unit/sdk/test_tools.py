"""``@tool``: rendering, measurement, masking and the counterfactual around each call of a
sync or async tool, into the turn record when there is a turn, and without one."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from turnstream.core.constraints.tool_calls import MASK
from turnstream.errors import TurnstreamError
from turnstream.models import Turn, parse_item
from turnstream.models.object_types import parse_types
from turnstream.sdk import Conversation, current_frame, tool

NOW = datetime(2026, 11, 29, 12, 0, 5, tzinfo=UTC)
PHONE = {"type": "phone_e164", "value": "+5511900005678"}

CATALOGUE = [
    {"sku": "p1", "color": "black", "size": "40", "price": 199.9, "cost": 80},
    {"sku": "p2", "color": "white", "size": "40", "price": 249.9, "cost": 95},
    {"sku": "p3", "color": "white", "size": "42", "price": 149.9, "cost": 60},
    {"sku": "p4", "size": "40", "price": 99.9, "cost": 40},  # no colour: unverifiable
]
BINDING: dict[str, Any] = {
    "tool": "search_products",
    "args": [
        {"attr": "item_variant.size", "param": "size"},
        {"attr": "item_variant.color", "param": "colors",
         "negation": {"param": "exclude_colors"}},
        {"attr": "item_variant.price_sale", "param": "max_price", "ops": ["lte"]},
    ],
    "results": {"path": "$.items", "type": "item_variant", "id": "sku",
                "fields": {"price_sale": "price"}},
    "capabilities": {"overfetch": True, "relax_flag": "$.relaxed", "dry_run_param": "dry_run",
                     "mask_output": True},
}  # fmt: skip


def _field(name: str, role: str, **more: Any) -> dict[str, Any]:
    return {"labels": {"pt": name, "en": name, "es": name}, "role": role, **more}


TYPES = parse_types(
    {"types": {"item_variant": {"fields": {
        "size": _field("size", "attribute", family="size"), "color": _field("color", "taste"),
        "price_sale": _field("price", "state", **{"class": "money", "claim_age": "PT1H"}),
        "cost": _field("cost", "state", sensitive=True, **{"class": "money"}),
    }}}}
)  # fmt: skip


def _block(*hard: dict[str, Any], attributes: tuple[dict[str, Any], ...] = ()) -> dict:
    return {"hard": list(hard), "soft": [], "attributes": list(attributes), "conflicts": [],
            "version": "cv_0123456789abcdef"}  # fmt: skip


NOT_BLACK = {"id": "h_color", "attr": "item_variant.color", "op": "not_in", "values": ["black"],
             "source": "stated", "scope": "session"}  # fmt: skip
SIZE_40 = {"id": "a_size", "attr": "item_variant.size", "value": "40", "source": "stated",
           "inferred": False, "applies": "always"}  # fmt: skip
UNDER_200 = {"id": "h_price", "attr": "item_variant.price_sale", "op": "lte", "values": [200],
             "source": "stated", "scope": "persistent"}  # fmt: skip
NOT_CHEAP = {"id": "h_resid", "attr": "item_variant.price_sale", "op": "gte", "values": [100],
             "source": "stated", "scope": "session"}  # fmt: skip


def _search(
    query: str = "",
    size: str | None = None,
    exclude_colors: list[str] | None = None,
    max_price: float | None = None,
    dry_run: bool = False,
    calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A search that honours its filters (over the whole catalogue)."""
    if calls is not None:
        calls.append({"size": size, "exclude_colors": exclude_colors, "dry_run": dry_run})
    items = [
        dict(p)
        for p in CATALOGUE
        if (size is None or p["size"] == size)
        and (not exclude_colors or p.get("color") not in exclude_colors)
        and (max_price is None or p["price"] <= max_price)
    ]
    return {"items": items, "relaxed": False}


def _conversation(records: list[dict[str, Any]], **kw: Any) -> Conversation:
    options: dict[str, Any] = {
        "space": "acme", "source": "web", "agent": "sales", "handle": PHONE,
        "conversation_id": "web-1", "recorder": records.append, "now": lambda: NOW,
        "types": TYPES,
    }  # fmt: skip
    return Conversation(**(options | kw))


def test_apply_mode_in_a_turn_records_the_call_and_the_measurement() -> None:
    records: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    search = tool("search_products", BINDING, mode="apply")(_search)
    conv = _conversation(records)
    with conv.turn() as frame:
        frame.cite_block(_block(NOT_BLACK, attributes=(SIZE_40,)))
        result = search("tênis", calls=calls)
        run = frame.tool_runs[0]
    assert calls == [{"size": "40", "exclude_colors": ["black"], "dry_run": False}]
    assert [p["sku"] for p in result["items"]] == ["p2", "p4"]
    assert result["items"][0]["cost"] == MASK  # sensitive in the types: masked
    assert run.raw_result["items"][0]["cost"] == 95  # what the tool returned, kept aside
    record = records[0]
    assert record["constraints"] == [{"tool": "search_products", "sent": 1,
                                      "results_checked": 2, "violations": 0,
                                      "unverifiable": 1, "relaxed": False}]  # fmt: skip
    assert record["constraints_version"] == "cv_0123456789abcdef"
    call = frame.calls[0]
    assert call.evidence.tool == "search_products"
    assert call.args is not None and call.args["size"] == "40"
    # The values claims may cite: each returned item's field with a claim class, from the
    # types document; the masked cost is not evidence.
    assert [
        (v.object, v.field, v.value, v.class_, v.claim_age_s) for v in call.evidence.values
    ] == [
        ("item_variant:p2", "price_sale", 249.9, "money", 3600.0),
        ("item_variant:p4", "price_sale", 99.9, "money", 3600.0),
    ]
    turn = parse_item(__import__("json").dumps(record).encode())
    assert isinstance(turn, Turn) and turn.constraints[0].unverifiable == 1


def test_advisory_mode_sends_the_call_as_it_is_and_suggests() -> None:
    records: list[dict[str, Any]] = []
    search = tool("search_products", BINDING)(_search)
    conv = _conversation(records)
    with conv.turn() as frame:
        frame.cite_block(_block(NOT_BLACK, attributes=(SIZE_40,)))
        result = search("tênis")
        run = frame.tool_runs[0]
    assert run.suggestions == {"exclude_colors": ["black"], "size": "40"}
    assert len(result["items"]) == 4  # nothing applied
    assert records[0]["constraints"][0]["sent"] == 0
    assert records[0]["constraints"][0]["results_checked"] == 4


def test_a_violation_and_relax_flag_are_counted() -> None:
    def lax(exclude_colors: list[str] | None = None) -> dict[str, Any]:
        return {"items": [dict(p) for p in CATALOGUE], "relaxed": True}  # ignores the filter

    bound = tool("search_products", BINDING, mode="apply")(lax)
    run = bound.run(_block=_block(NOT_BLACK))
    assert run.measured is not None
    assert (run.measured.sent, run.measured.results_checked) == (1, 4)
    assert (run.measured.violations, run.measured.unverifiable) == (1, 1)
    assert run.measured.relaxed is True


def test_residuals_filtered_when_overfetching_and_unenforced_when_not() -> None:
    bound = tool("search_products", BINDING)(_search)
    run = bound.run(_block=_block({**NOT_CHEAP, "attr": "item_variant.cost"}))
    assert run.plan is not None and [e["id"] for e in run.plan.residual] == ["h_resid"]
    # cost is not bound as an argument: residual; the overfetching tool's results are
    # filtered by it (p4 costs 40 < 100... every item costs under 100: all go).
    assert run.result["items"] == [] and run.measured is not None
    assert run.measured.filtered_out == 4 and run.measured.unenforced == []
    plain = {**BINDING, "capabilities": {"overfetch": False}}
    run = tool("search_products", plain)(_search).run(
        _block=_block({**NOT_CHEAP, "attr": "item_variant.cost"})
    )
    assert len(run.result["items"]) == 4 and run.measured is not None
    assert run.measured.unenforced == ["h_resid"] and run.measured.filtered_out == 0


def test_outside_a_turn_the_run_still_has_suggestions_and_counts() -> None:
    assert current_frame() is None
    bound = tool("search_products", BINDING, mode="apply")(_search)
    run = bound.run("x", _block=_block(NOT_BLACK, UNDER_200))
    # UNDER_200 is persistent: suggested, not injected.
    assert run.plan is not None and run.plan.injected == {"exclude_colors": ["black"]}
    assert "max_price" in run.plan.withheld and run.suggestions["max_price"] == 200
    assert run.measured is not None and run.measured.sent == 1
    # No frame, no block: the plain call; no types to say what is sensitive, so nothing
    # is masked unless the code names the hidden fields.
    assert bound("x")["items"][0]["cost"] == 80
    hiding = tool("search_products", BINDING, hidden=("item_variant.cost",))(_search)
    assert hiding("x")["items"][0]["cost"] == MASK


def test_the_counterfactual_runs_the_dry_call_without_the_element() -> None:
    calls: list[dict[str, Any]] = []
    bound = tool("search_products", BINDING, mode="apply", counterfactual="constraints_block")(
        _search
    )
    run = bound.run(calls=calls, _block=_block(NOT_BLACK))
    assert calls[1] == {"size": None, "exclude_colors": None, "dry_run": True}
    assert run.counterfactual is not None and run.counterfactual.changed
    assert run.counterfactual.only_without == ["p1"]
    assert run.counterfactual.dropped_params == ["exclude_colors"]
    calls.clear()
    same = bound.run(calls=calls, _block=_block(attributes=(SIZE_40,)))
    assert same.counterfactual is not None
    assert same.counterfactual.dropped_params == ["size"] and same.counterfactual.changed
    calls.clear()
    unchanged = bound.run(calls=calls, _block=_block(NOT_BLACK), exclude_colors=["pink"])
    # The call set its own refusal: nothing of the block in it, so no second call.
    assert len(calls) == 1 and unchanged.counterfactual is not None
    assert not unchanged.counterfactual.changed


def test_an_async_tool_in_an_async_turn() -> None:
    records: list[dict[str, Any]] = []

    @tool("search_products", BINDING, mode="apply")
    async def search(exclude_colors: list[str] | None = None, **rest: Any) -> dict[str, Any]:
        await asyncio.sleep(0)
        return _search(exclude_colors=exclude_colors, **rest)

    async def agent() -> list[str]:
        conv = _conversation(records)
        async with conv.turn() as frame:
            frame.cite_block(_block(NOT_BLACK, attributes=(SIZE_40,)))
            result = await search()
        return [p["sku"] for p in result["items"]]

    assert asyncio.run(agent()) == ["p2", "p4"]  # size went through **rest
    assert records[0]["constraints"][0]["sent"] == 1


def test_the_served_binding_is_used_when_the_code_has_none_and_code_wins() -> None:
    records: list[dict[str, Any]] = []
    profile = {"space_id": "acme", "source": "web", "contract_version": None,
               "tool_bindings": [{**BINDING, "capabilities": {"mask_output": False}}]}  # fmt: skip
    conv = _conversation(records, profile=profile)
    served = tool("search_products", mode="apply")(_search)
    coded = tool("search_products", BINDING, mode="apply")(_search)
    unbound = tool("other_tool")(_search)
    with conv.turn() as frame:
        frame.cite_block(_block(NOT_BLACK))
        assert served()["items"][0]["cost"] == 95  # the served binding: no mask
        assert coded()["items"][0]["cost"] == MASK  # the binding in code wins
        assert len(unbound()["items"]) == 4  # no binding: the plain call
    assert [c["tool"] for c in records[0]["constraints"]] == ["search_products"] * 2
    assert len(frame.calls) == 3  # the unbound call is recorded, unmeasured


def test_a_bad_call_or_binding_is_refused_with_the_tool_s_name() -> None:
    bound = tool("search_products", BINDING, mode="apply")(lambda query: {"items": []})
    with pytest.raises(TurnstreamError, match=r"search_products.*exclude_colors"):
        bound.run(_block=_block(NOT_BLACK), query="x")
    with pytest.raises(TurnstreamError, match="search_products"):
        bound.run(nope=1)
    with pytest.raises(TurnstreamError, match="mode"):
        tool("t", mode="force")(_search)  # type: ignore[arg-type]
    with pytest.raises(TurnstreamError, match="counterfactual must be one of"):
        tool("t", counterfactual="state_block")(_search)
    with pytest.raises(TurnstreamError, match="cite_block"), _conversation([]).turn() as frame:
        frame.cite_block({"hard": []})


def test_a_block_served_to_an_arm_puts_the_experiment_in_the_record() -> None:
    records: list[dict[str, Any]] = []
    conv = _conversation(records)
    served = {**_block(), "experiment": {"id": "exp-1", "arm": "control", "drops": ["x"]}}
    with conv.turn() as frame:
        frame.cite_block(served)
    with conv.turn(experiment={"id": "own", "arm": "a"}) as frame:
        frame.cite_block(served)
    assert [r["experiment"] for r in records] == [
        {"id": "exp-1", "arm": "control"},
        {"id": "own", "arm": "a"},
    ]
    assert records[0]["constraints_version"] == "cv_0123456789abcdef"
