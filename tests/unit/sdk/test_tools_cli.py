"""``turnstream tools counterfactual``: recorded calls (``ToolRun.recorded()``) run again
without an element of the block, against the tool itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from turnstream.entrypoints.cli.main import app
from turnstream.sdk import tool

BINDINGS = Path(__file__).resolve().parents[3] / "examples" / "tool_bindings.json"
ITEMS = [
    {"sku": "a", "color": "black", "size": "M", "price": 100},
    {"sku": "b", "color": "white", "size": "M", "price": 120},
    {"sku": "c", "color": "white", "size": "G", "price": 90},
]
DRY_RUNS: list[dict[str, Any]] = []


def search(
    query: str = "",
    size: str | None = None,
    exclude_colors: list[str] | None = None,
    max_price: float | None = None,
    dry_run: bool = False,
) -> dict[str, Any]:
    """The catalogue's search: it honours the size and the refused colours."""
    if dry_run:
        DRY_RUNS.append({"size": size, "exclude_colors": exclude_colors})
    found = [
        dict(i)
        for i in ITEMS
        if (size is None or i["size"] == size)
        and (not exclude_colors or i["color"] not in exclude_colors)
    ]
    return {"items": found, "relaxed": False}


def _block(*hard: dict[str, Any]) -> dict[str, Any]:
    return {"hard": list(hard), "soft": [], "attributes": [], "conflicts": [], "version": "cv_1"}


def _entry(id: str, attr: str, op: str, values: list[Any]) -> dict[str, Any]:
    return {"id": id, "attr": attr, "op": op, "values": values, "source": "stated",
            "scope": "session"}  # fmt: skip


def _recorded(tmp_path: Path) -> Path:
    bound = tool(
        "search_products",
        json.loads(BINDINGS.read_text())["bindings"][0],
        mode="apply",
    )(search)
    not_black = _entry("h1", "item_variant.color", "not_in", ["black"])
    not_pink = _entry("h2", "item_variant.color", "not_in", ["pink"])
    size_m = _entry("h3", "item_variant.size", "eq", ["M"])
    runs = [
        bound.run("x", _block=_block(not_black)),  # the block takes "a" out
        bound.run("x", _block=_block(not_pink)),  # sent, but it changes nothing
        bound.run("x", size="M", _block=_block()),  # nothing of the block in the call
        bound.run("x", _block=_block(size_m, not_black)),
    ]
    path = tmp_path / "calls.jsonl"
    path.write_text("".join(json.dumps(r.recorded("whatsapp")) + "\n" for r in runs))
    return path


def _lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_each_recorded_call_says_whether_the_block_changes_the_result(tmp_path: Path) -> None:
    DRY_RUNS.clear()
    calls = _recorded(tmp_path)
    spec = f"{__name__}:search"
    result = CliRunner().invoke(
        app, ["tools", "counterfactual", str(calls), "--tool", spec, "--bindings", str(BINDINGS)]
    )
    assert result.exit_code == 0, result.output
    *each, summary = _lines(result.stdout)
    assert [(c["line"], c["changed"], c["dropped_params"]) for c in each] == [
        (1, True, ["exclude_colors"]),
        (2, False, ["exclude_colors"]),
        (3, False, []),
        (4, True, ["size", "exclude_colors"]),
    ]
    assert each[0]["only_without"] == ["a"]
    assert each[3]["only_without"] == ["a", "c"]
    assert summary == {"summary": {"calls": 4, "element": "constraints_block", "carried": 3,
                                   "changed": 2}}  # fmt: skip
    # Only the calls that carried the block ran again, each a dry run without it.
    assert DRY_RUNS == [{"size": None, "exclude_colors": None}] * 3


def test_a_bad_line_or_option_exits_2_naming_it(tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"tool": "search_products", "args": {}}\n{"args": {}}\n')
    runner = CliRunner()
    spec = f"{__name__}:search"
    bad = runner.invoke(
        app, ["tools", "counterfactual", str(calls), "--tool", spec, "--bindings", str(BINDINGS)]
    )
    assert bad.exit_code == 2 and "calls.jsonl:2: tool" in bad.output
    unbound = tmp_path / "unbound.jsonl"
    unbound.write_text('{"tool": "nope"}\n')
    out = runner.invoke(
        app, ["tools", "counterfactual", str(unbound), "--tool", spec, "--bindings", str(BINDINGS)]
    )
    assert out.exit_code == 2 and "'nope' is not bound" in out.output
    no_fn = runner.invoke(
        app, ["tools", "counterfactual", str(calls), "--tool", "nowhere", "--bindings",
              str(BINDINGS)],
    )  # fmt: skip
    assert no_fn.exit_code == 2 and "package.module:function" in no_fn.output
    no_space = runner.invoke(app, ["tools", "counterfactual", str(calls), "--tool", spec])
    assert no_space.exit_code == 2 and "--bindings" in no_space.output
