"""Tool bindings: the document, the binding of a source, and the block rendered for a tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.unit.core.constraints.builders import COLOR, NETWORK, PRICE, block, pref
from turnstream.core.constraints import (
    ToolBinding,
    binding_for,
    load_bindings,
    parse_bindings,
    parse_profile,
    profile_for,
    render_for_tool,
)
from turnstream.errors import ConfigError

COPAY = "health_plan.copay"

# The reference's example binding.
SEARCH_PLANS: dict[str, Any] = {
    "tool": "search_plans",
    "args": [
        {"attr": COPAY, "param": "copay", "ops": ["eq"]},
        {"attr": PRICE, "param": "max_price", "ops": ["lte"]},
        {"attr": NETWORK, "param": "networks", "negation": {"param": "exclude_networks"}},
    ],
    "results": {
        "path": "$.plans",
        "type": "health_plan",
        "namespace": "sales",
        "id": "plan_id",
        "fields": {"copay": "copay", "monthly_price": "price"},
    },
    "capabilities": {"overfetch": True, "dry_run_param": "dry_run", "mask_output": True},
}


def _binding(overfetch: bool = True) -> ToolBinding:
    data = {**SEARCH_PLANS, "capabilities": {"overfetch": overfetch}}
    return ToolBinding.model_validate(data)


def test_in_goes_to_the_param_and_not_in_to_the_negation_param() -> None:
    got = block(
        [
            pref("p_in", NETWORK, "in", ("red", "blue"), "must", hours_ago=2),
            pref("p_out", NETWORK, "in", ("acme",), "must_not", hours_ago=1),
            pref("p_copay", COPAY, "eq", (False,), "must", hours_ago=3),
        ]
    )
    assert render_for_tool(got, _binding()) == {
        "tool": "search_plans",
        "params": {"exclude_networks": ["acme"], "networks": ["red", "blue"], "copay": False},
        "behind": {"exclude_networks": ["p_out"], "networks": ["p_in"], "copay": ["p_copay"]},
        "residual": [],
        "residual_handling": None,
        "unbound_attrs": [],
    }


def test_a_comparison_goes_only_where_ops_lists_it() -> None:
    got = block(
        [
            pref("p_max", PRICE, "lte", (700,), "must", hours_ago=1),
            pref("p_min", PRICE, "gte", (100,), "must", hours_ago=2),
            pref("p_net", NETWORK, "lte", (3,), "must", hours_ago=3),
        ]
    )
    rendered = render_for_tool(got, _binding())
    assert rendered["params"] == {"max_price": 700}
    assert rendered["residual"] == ["p_min", "p_net"]
    assert rendered["unbound_attrs"] == []


def test_ops_restrict_the_positive_param_too() -> None:
    got = block([pref("p1", COPAY, "in", (True, False), "must")])
    assert render_for_tool(got, _binding())["residual"] == ["p1"]


@pytest.mark.parametrize(("overfetch", "handling"), [(True, "filtered"), (False, "unenforced")])
def test_the_residual_is_filtered_only_when_the_tool_overfetches(
    overfetch: bool, handling: str
) -> None:
    got = block([pref("p_color", COLOR, "in", ("black",), "must_not")])
    rendered = render_for_tool(got, _binding(overfetch))
    assert rendered["residual"] == ["p_color"]
    assert rendered["residual_handling"] == handling
    assert rendered["unbound_attrs"] == [COLOR]


def test_refusals_on_one_param_merge_and_a_lost_entry_is_not_sent() -> None:
    got = block(
        [
            pref("p_a", NETWORK, "not_in", ("acme", "zeta"), "must_not", hours_ago=1),
            pref("p_b", NETWORK, "ne", ("zeta",), "must_not", hours_ago=2),
            pref("p_c", NETWORK, "ne", ("omni",), "must_not", hours_ago=3),
            pref("p_old", PRICE, "lte", (500,), "must", hours_ago=9),
            pref("p_new", PRICE, "gte", (600,), "must", hours_ago=1),
        ]
    )
    rendered = render_for_tool(got, _binding())
    assert rendered["params"] == {"exclude_networks": ["acme", "zeta", "omni"]}
    assert rendered["residual"] == ["p_new"]  # p_old lost the conflict: not sent at all


def test_a_second_requirement_on_a_taken_param_is_residual() -> None:
    got = block(
        [
            pref("p1", NETWORK, "in", ("red",), "must", hours_ago=1),
            pref("p2", NETWORK, "in", ("red", "blue"), "must", hours_ago=2),
        ]
    )
    rendered = render_for_tool(got, _binding())
    assert rendered["params"] == {"networks": ["red"]}
    assert rendered["residual"] == ["p2"]


def test_binding_for_respects_sources() -> None:
    web = {**SEARCH_PLANS, "sources": ["web"], "capabilities": {"overfetch": False}}
    doc = parse_bindings({"bindings": [SEARCH_PLANS, web]})
    assert binding_for(doc, "search_plans", "web").capabilities.overfetch is False  # type: ignore[union-attr]
    assert binding_for(doc, "search_plans", "whatsapp").capabilities.overfetch is True  # type: ignore[union-attr]
    assert binding_for(doc, "search_products", "web") is None
    only_web = parse_bindings([web])
    assert binding_for(only_web, "search_plans", "whatsapp") is None
    assert binding_for(only_web.bindings, "search_plans", "web") is not None


def test_a_tool_is_bound_once_per_source() -> None:
    with pytest.raises(ValidationError):
        parse_bindings([SEARCH_PLANS, SEARCH_PLANS])
    with pytest.raises(ValidationError):
        parse_bindings([{**SEARCH_PLANS, "sources": ["web"]}, {**SEARCH_PLANS, "sources": ["web"]}])


@pytest.mark.parametrize(
    "bad",
    [
        {"tool": "t", "args": [{"attr": "color", "param": "c"}]},
        {"tool": "t", "args": [{"attr": COLOR, "param": "c", "ops": ["like"]}]},
        {"tool": "t", "capabilities": {"overfetch": True, "typo": 1}},
    ],
)
def test_a_wrong_binding_is_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ToolBinding.model_validate(bad)


def test_load_bindings_reads_json_and_says_what_is_wrong(tmp_path: Path) -> None:
    good = tmp_path / "bindings.json"
    good.write_text(json.dumps({"bindings": [SEARCH_PLANS]}), encoding="utf-8")
    doc = load_bindings(good)
    assert [b.tool for b in doc.bindings] == ["search_plans"]
    assert doc.bindings[0].args[2].negation.param == "exclude_networks"  # type: ignore[union-attr]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        load_bindings(bad)
    with pytest.raises(ConfigError):
        load_bindings(tmp_path / "missing.json")


def test_the_profile_serves_the_source_s_bindings_without_sources_nor_phrases() -> None:
    web = {**SEARCH_PLANS, "sources": ["web"], "capabilities": {"overfetch": False}}
    other = {"tool": "quote", "sources": ["whatsapp"]}
    doc = parse_bindings([SEARCH_PLANS, web, other])
    contract = {"version": "retail-1", "negative_corpus": {"version": "neg-2", "phrases": ["x"]}}
    got = profile_for("acme", "web", doc, contract)
    assert got["space_id"] == "acme" and got["source"] == "web"
    assert [b["tool"] for b in got["tool_bindings"]] == ["search_plans"]
    assert got["tool_bindings"][0]["capabilities"]["overfetch"] is False  # the web one wins
    assert all("sources" not in b for b in got["tool_bindings"])
    assert got["contract_version"] == "retail-1"
    assert got["claim_contract"]["negative_corpus"] == {"version": "neg-2"}
    assert contract["negative_corpus"]["phrases"] == ["x"]  # the loaded one is not changed
    profile = parse_profile(got)
    assert binding_for(profile.bindings, "search_plans", "anything") is not None
    assert profile_for("acme", "web", None, None) == {
        "space_id": "acme", "source": "web", "tool_bindings": [], "contract_version": None,
        "claim_contract": None, "types": None,
    }  # fmt: skip
    served = profile_for("acme", "web", None, None, {"types": {}})
    assert parse_profile(served).types == {"types": {}}
    with pytest.raises(ConfigError, match="sdk profile"):
        parse_profile({"space_id": "acme"})
