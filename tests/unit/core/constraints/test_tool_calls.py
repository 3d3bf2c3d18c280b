"""One call of a bound tool: apply mode, conflicts, measurement, residuals, masking and the
counterfactual's arguments (pure rules of ``core/constraints/tool_calls``)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.core.constraints.builders import (
    COLOR,
    NETWORK,
    PRICE,
    SIZE,
    attribute,
    block,
    inference,
    pref,
)
from tests.unit.core.constraints.test_bindings import SEARCH_PLANS as REFERENCE_BINDING
from turnstream.core.constraints import (
    ToolBinding,
    compare_results,
    counterfactual_args,
    filter_residual,
    mask_result,
    measure_results,
    plan_call,
    render_for_tool,
    result_items,
)
from turnstream.core.constraints.conditions import bound_within, holds
from turnstream.core.constraints.tool_calls import MASK, read_path

COPAY = "health_plan.copay"

# The reference's example binding, reading the network too and saying when it relaxed.
SEARCH_PLANS: dict[str, Any] = {
    **REFERENCE_BINDING,
    "results": {
        **REFERENCE_BINDING["results"],
        "fields": {**REFERENCE_BINDING["results"]["fields"], "network": "network"},
    },
    "capabilities": {"overfetch": True, "relax_flag": "$.relaxed", "dry_run_param": "dry_run"},
}
SEARCH_PRODUCTS: dict[str, Any] = {
    "tool": "search_products",
    "args": [
        {"attr": SIZE, "param": "size"},
        {"attr": COLOR, "param": "colors", "negation": {"param": "exclude_colors"}},
    ],
    "results": {"path": "items", "type": "item_variant", "id": "sku"},
}


def _plans(**capabilities: Any) -> ToolBinding:
    return ToolBinding.model_validate(
        {**SEARCH_PLANS, "capabilities": {**SEARCH_PLANS["capabilities"], **capabilities}}
    )


def _products() -> ToolBinding:
    return ToolBinding.model_validate(SEARCH_PRODUCTS)


def _plan(plan_id: str, price: Any = None, network: Any = None, copay: Any = None) -> dict:
    found: dict[str, Any] = {"plan_id": plan_id}
    for key, value in (("price", price), ("network", network), ("copay", copay)):
        if value is not None:
            found[key] = value
    return found


# --------------------------------------------------------------------------- conditions


@pytest.mark.parametrize(
    ("op", "values", "value", "expected"),
    [
        ("in", ("red", "blue"), "red", True),
        ("in", ("red",), "acme", False),
        ("eq", (700,), "700", True),
        ("ne", (False,), False, False),
        ("not_in", ("acme",), "red", True),
        ("lt", (700,), 700, False),
        ("lte", (700,), 700, True),
        ("gt", (100,), 99.5, False),
        ("gte", (100,), 100, True),
        ("between", (100, 700), 350, True),
        ("between", (700, 100), 800, False),
        ("not_between", (100, 700), 800, True),
        ("lte", (700,), "M", None),
    ],
)
def test_holds_per_operator(op: str, values: tuple[Any, ...], value: Any, expected: Any) -> None:
    assert holds(op, values, value) is expected


@pytest.mark.parametrize(
    ("op", "values", "bound", "expected"),
    [
        ("lt", (700,), 700, True),  # the tool cuts at 700: nothing at 700 or over asked
        ("lte", (700,), 500, True),
        ("lte", (700,), 900, False),
        ("gt", (100,), 100, True),
        ("gte", (100,), 50, False),
        ("between", (100, 700), [200, 700], True),
        ("between", (100, 700), [50, 700], False),
        ("between", (100, 700), 300, False),
        ("lte", (700,), "cheap", None),
    ],
)
def test_a_bound_argument_carries_a_comparison_when_it_asks_no_more(
    op: str, values: tuple[Any, ...], bound: Any, expected: Any
) -> None:
    assert bound_within(op, values, bound) is expected


# --------------------------------------------------------------------------- rendering


def test_a_stated_attribute_renders_to_a_free_param_only() -> None:
    got = block(
        [pref("p_size", SIZE, "eq", ("42",), "must", scope="session")],
        [attribute("a_size", SIZE, "40", system="BR")],
    )
    rendered = render_for_tool(got, _products())
    # The attribute lost to the newer hard size (a conflict), and the param was taken.
    assert rendered["params"] == {"size": "42"}
    assert rendered["behind"] == {"size": ["p_size"]}
    alone = render_for_tool(block([], [attribute("a_size", SIZE, "40")]), _products())
    assert alone["params"] == {"size": "40"} and alone["behind"] == {"size": ["a_size"]}


# --------------------------------------------------------------------------- apply mode


def test_advisory_mode_leaves_the_call_as_it_is_and_suggests() -> None:
    got = block([pref("p_net", NETWORK, "in", ("acme",), "must_not", scope="session")])
    plan = plan_call(got, _plans(), {"query": "family"})
    assert plan.args == {"query": "family"}
    assert plan.suggestions == {"exclude_networks": ["acme"]}
    assert plan.injected == {} and plan.sent == []


def test_apply_mode_injects_a_session_constraint_and_a_stated_attribute() -> None:
    got = block(
        [pref("p_color", COLOR, "in", ("black",), "must_not", scope="session")],
        [attribute("a_size", SIZE, "40")],
    )
    plan = plan_call(got, _products(), {"query": "tênis"}, "apply")
    assert plan.args == {"query": "tênis", "exclude_colors": ["black"], "size": "40"}
    assert plan.injected == {"exclude_colors": ["black"], "size": "40"}
    assert [e["id"] for e in plan.sent] == ["p_color"]  # an attribute is not a hard constraint


def test_apply_mode_injects_a_turn_constraint() -> None:
    got = {
        "hard": [
            {"id": "t1", "attr": NETWORK, "op": "not_in", "values": ["acme"], "source": "stated",
             "scope": "turn"},
        ],
        "attributes": [],
        "conflicts": [],
    }  # fmt: skip
    plan = plan_call(got, _plans(), {}, "apply")
    assert plan.injected == {"exclude_networks": ["acme"]}
    assert [e["id"] for e in plan.sent] == ["t1"]


@pytest.mark.parametrize(
    ("preferences", "attributes", "inferences", "asked", "param", "reason"),
    [
        ([pref("p", NETWORK, "in", ("acme",), "must_not")], [], [], (),
         "exclude_networks", "persistent"),
        ([], [], [inference("i1", "attribute", SIZE, "38")], ("size",), "size", "did not state"),
        ([], [attribute("a1", SIZE, "38", source="acquired")], [], ("size",), "size",
         "did not state"),
    ],
)  # fmt: skip
def test_apply_mode_refuses_what_may_not_be_injected(
    preferences: list[Any],
    attributes: list[Any],
    inferences: list[Any],
    asked: tuple[str, ...],
    param: str,
    reason: str,
) -> None:
    binding = _plans() if param == "exclude_networks" else _products()
    got = block(preferences, attributes, inferences, asked=asked)
    plan = plan_call(got, binding, {}, "apply")
    assert param in plan.suggestions
    assert param not in plan.args and plan.injected == {}
    assert reason in plan.withheld[param]


def test_apply_mode_refuses_a_constraint_in_a_conflict() -> None:
    # Two session requirements on the network that cannot both hold: the newer stands,
    # and both are in the conflict, so neither is injected.
    got = block(
        [
            pref("p_old", NETWORK, "in", ("red",), "must", scope="session", hours_ago=3),
            pref("p_new", NETWORK, "in", ("blue",), "must", scope="session", hours_ago=1),
        ]
    )
    assert got["conflicts"] and got["conflicts"][0]["kept"] == "p_new"
    plan = plan_call(got, _plans(), {}, "apply")
    assert plan.suggestions == {"networks": ["blue"]}
    assert "networks" not in plan.args
    assert "conflict" in plan.withheld["networks"]


def test_apply_mode_never_overrides_an_argument() -> None:
    got = block([pref("p_max", PRICE, "lte", (700,), "must", scope="session")])
    plan = plan_call(got, _plans(), {"max_price": 500}, "apply")
    assert plan.args == {"max_price": 500}  # stricter than asked: kept, and it carries p_max
    assert plan.injected == {} and plan.conflicts == []
    assert [e["id"] for e in plan.sent] == ["p_max"]


@pytest.mark.parametrize("mode", ["advisory", "apply"])
def test_a_refused_value_in_the_constraint_s_own_argument_is_a_conflict(mode: str) -> None:
    got = block(
        [
            pref("p_net", NETWORK, "in", ("acme",), "must_not", scope="session"),
            pref("p_max", PRICE, "lte", (700,), "must", scope="session"),
        ]
    )
    plan = plan_call(got, _plans(), {"networks": ["acme", "red"], "max_price": 900}, mode)  # type: ignore[arg-type]
    assert plan.args["networks"] == ["acme", "red"] and plan.args["max_price"] == 900
    assert {(c["entry"], c["param"]) for c in plan.conflicts} == {
        ("p_max", "max_price"),
        ("p_net", "networks"),  # the refusal's own field: the call asks for acme
    }
    # p_net goes to exclude_networks, which the call left out: injected in apply mode.
    sent = sorted(e["id"] for e in plan.sent)
    assert sent == (["p_net"] if mode == "apply" else [])


def test_a_call_value_the_refusal_names_on_the_positive_param_is_a_conflict() -> None:
    binding = ToolBinding.model_validate(
        {"tool": "t", "args": [{"attr": NETWORK, "param": "network"}]}
    )
    got = {
        "hard": [{"id": "h1", "attr": NETWORK, "op": "in", "values": ["red"], "source": "stated",
                  "scope": "session"}],
        "attributes": [], "conflicts": [],
    }  # fmt: skip
    plan = plan_call(got, binding, {"network": "acme"}, "apply")
    assert plan.conflicts == [{"entry": "h1", "param": "network", "value": "acme"}]
    assert plan.args == {"network": "acme"} and plan.sent == []


# --------------------------------------------------------------------------- measurement


def test_every_count_over_the_constraints_sent() -> None:
    got = block(
        [
            pref("p_max", PRICE, "lte", (700,), "must", scope="session"),
            pref("p_net", NETWORK, "in", ("acme",), "must_not", scope="session"),
        ]
    )
    binding = _plans()
    plan = plan_call(got, binding, {}, "apply")
    assert len(plan.sent) == 2
    result = {
        "plans": [
            _plan("ok", price=650, network="red"),
            _plan("too_dear", price=900, network="red"),  # violation
            _plan("refused_net", price=500, network="acme"),  # violation
            _plan("no_price", network="red"),  # unverifiable: lacks a field of one
            _plan("both_missing"),  # unverifiable
            _plan("dear_no_net", price=800),  # breaks one, lacks the other: a violation
        ],
        "relaxed": True,
    }
    assert binding.results is not None
    items = result_items(result, binding.results)
    measured = measure_results(
        items, plan.sent, binding.results, relaxed=bool(read_path(result, "$.relaxed"))
    )
    assert measured.wire("search_plans") == {
        "tool": "search_plans",
        "sent": 2,
        "results_checked": 6,
        "violations": 3,
        "unverifiable": 2,
        "relaxed": True,
    }


def test_nothing_sent_nothing_violated() -> None:
    binding = _plans()
    assert binding.results is not None
    measured = measure_results([_plan("a", price=1)], [], binding.results)
    assert (measured.sent, measured.results_checked, measured.violations) == (0, 1, 0)
    assert measured.unverifiable == 0 and measured.relaxed is False


def test_a_field_of_another_type_cannot_be_verified() -> None:
    binding = _plans()
    assert binding.results is not None
    entry = {"id": "c", "attr": COLOR, "op": "ne", "values": ["black"]}
    measured = measure_results([_plan("a", price=1)], [entry], binding.results)
    assert measured.unverifiable == 1 and measured.violations == 0


def test_a_multi_valued_field_violates_when_one_value_breaks() -> None:
    binding = _plans()
    assert binding.results is not None
    entry = {"id": "n", "attr": NETWORK, "op": "not_in", "values": ["acme"]}
    items = [_plan("a", network=["red", "acme"]), _plan("b", network=["red"])]
    assert measure_results(items, [entry], binding.results).violations == 1


# --------------------------------------------------------------------------- residuals


def _color_block() -> dict[str, Any]:
    # The plans tool binds no colour: a colour constraint is residual.
    return {
        "hard": [{"id": "r1", "attr": "health_plan.network", "op": "ne", "values": ["acme"],
                  "source": "stated", "scope": "session"}],
        "attributes": [], "conflicts": [],
    }  # fmt: skip


def test_residuals_are_filtered_from_an_overfetching_tool_s_results() -> None:
    binding = ToolBinding.model_validate({**SEARCH_PLANS, "args": [], "capabilities":
                                          {"overfetch": True}})  # fmt: skip
    plan = plan_call(_color_block(), binding, {})
    assert [e["id"] for e in plan.residual] == ["r1"] and plan.residual_handling == "filtered"
    assert binding.results is not None
    result = {"plans": [_plan("a", network="acme"), _plan("b", network="red"), _plan("c")],
              "page": 1}  # fmt: skip
    kept_result, kept, gone = filter_residual(result, plan.residual, binding.results)
    assert gone == 1
    assert [p["plan_id"] for p in kept] == ["b", "c"]  # c lacks the field: not known to break
    assert kept_result == {"plans": kept, "page": 1}
    assert len(result["plans"]) == 3  # the tool's own result is not changed


def test_residuals_and_measures_compare_values_by_the_value_they_name() -> None:
    """A result whose network is ``ACME`` or `` Acme `` breaks "network other than
    acme"; a colour shown ``Black`` breaks "colour other than preto", with or without
    the space's types (the built-in words name black too)."""
    binding = ToolBinding.model_validate({**SEARCH_PLANS, "args": [], "capabilities":
                                          {"overfetch": True}})  # fmt: skip
    plan = plan_call(_color_block(), binding, {})
    assert binding.results is not None
    result = {"plans": [_plan("a", network="ACME"), _plan("b", network=" Acme "),
                        _plan("c", network="red")]}  # fmt: skip
    _, kept, gone = filter_residual(result, plan.residual, binding.results)
    assert gone == 2 and [p["plan_id"] for p in kept] == ["c"]
    products = _products()
    assert products.results is not None
    sent = [{"id": "h", "attr": COLOR, "op": "not_in", "values": ["preto"]}]
    items = [{"sku": "1", "color": "Black"}, {"sku": "2", "color": ["white", "negro"]},
             {"sku": "3", "color": "white"}]  # fmt: skip
    assert measure_results(items, sent, products.results).violations == 2


def test_residuals_are_unenforced_when_the_tool_does_not_overfetch() -> None:
    binding = ToolBinding.model_validate({**SEARCH_PLANS, "args": [], "capabilities": {}})
    plan = plan_call(_color_block(), binding, {})
    assert plan.residual_handling == "unenforced"
    assert [e["id"] for e in plan.residual] == ["r1"]


# --------------------------------------------------------------------------- masking


def test_mask_output_masks_the_hidden_fields_only() -> None:
    binding = _plans()
    assert binding.results is not None
    result = {"plans": [_plan("a", price=650, network="red"), "not a mapping"], "n": 2}
    masked = mask_result(result, binding.results, [PRICE, "person.size"])
    assert masked["plans"][0] == {"plan_id": "a", "price": MASK, "network": "red"}
    assert masked["plans"][1] == "not a mapping" and masked["n"] == 2
    assert result["plans"][0]["price"] == 650
    assert mask_result(result, binding.results, []) is result


# --------------------------------------------------------------------------- counterfactual


def test_the_counterfactual_drops_the_element_s_params_and_sets_dry_run() -> None:
    got = block(
        [pref("p_net", NETWORK, "in", ("acme",), "must_not", scope="session")],
        [],
        [inference("i_size", "attribute", SIZE, "38")],
        asked=("size",),
    )
    binding = _plans()
    plan = plan_call(got, binding, {"query": "x"}, "apply")
    args, dropped = counterfactual_args(plan, got, binding, "constraints_block")
    assert dropped == ["exclude_networks"]
    assert args == {"query": "x", "dry_run": True}
    args, dropped = counterfactual_args(plan, got, binding, "inferred_sizes")
    assert dropped == [] and args == {**plan.args, "dry_run": True}
    with pytest.raises(ValueError, match="element"):
        counterfactual_args(plan, got, binding, "state_block")
    no_dry = ToolBinding.model_validate({**SEARCH_PLANS, "capabilities": {}})
    with pytest.raises(ValueError, match="dry_run_param"):
        counterfactual_args(plan, got, no_dry, "constraints_block")


def test_compare_results_by_ids_and_order() -> None:
    binding = _plans()
    assert binding.results is not None
    a = {"plans": [_plan("x"), _plan("y")]}
    b = {"plans": [_plan("x"), _plan("y"), _plan("z")]}
    diff = compare_results(a, b, binding.results, "constraints_block", ["exclude_networks"])
    assert diff.changed and diff.only_without == ["z"] and diff.only_with == []
    same = compare_results(a, {"plans": [_plan("x"), _plan("y")]}, binding.results, "c", [])
    assert not same.changed
    swapped = compare_results(a, {"plans": [_plan("y"), _plan("x")]}, binding.results, "c", [])
    assert swapped.changed and swapped.only_with == [] == swapped.only_without


@pytest.mark.parametrize(
    ("op", "values", "strength", "expected"),
    [
        ("in", ("red", "blue"), "must", {"networks": ["red", "blue"]}),
        ("eq", ("red",), "must", {"networks": "red"}),
        ("in", ("acme",), "must_not", {"exclude_networks": ["acme"]}),  # not_in
        ("eq", ("acme",), "must_not", {"exclude_networks": "acme"}),  # ne
        ("lt", (700,), "must", {"max_price": 700}),
        ("lte", (700,), "must", {"max_price": 700}),
        ("gt", (100,), "must", {"min_price": 100}),
        ("gte", (100,), "must", {"min_price": 100}),
        ("between", (100, 700), "must", {"price_range": [100, 700]}),
        ("lte", (700,), "must_not", {"min_price": 700}),  # refused "at most 700": gt 700
    ],
)
def test_each_operator_renders_to_its_param(
    op: str, values: tuple[Any, ...], strength: str, expected: dict[str, Any]
) -> None:
    binding = ToolBinding.model_validate(
        {
            "tool": "t",
            "args": [
                {"attr": NETWORK, "param": "networks", "negation": {"param": "exclude_networks"}},
                {"attr": PRICE, "param": "max_price", "ops": ["lt", "lte"]},
                {"attr": PRICE, "param": "min_price", "ops": ["gt", "gte"]},
                {"attr": PRICE, "param": "price_range", "ops": ["between"]},
            ],
        }
    )
    attr = NETWORK if isinstance(values[0], str) else PRICE
    got = block([pref("p", attr, op, values, strength, scope="session")])
    rendered = render_for_tool(got, binding)
    assert rendered["params"] == expected and rendered["residual"] == []
    plan = plan_call(got, binding, {}, "apply")
    assert plan.args == expected and [e["id"] for e in plan.sent] == ["p"]
