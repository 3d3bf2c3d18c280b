"""``turnstream tools``: the counterfactual of recorded tool calls (docs/sdk.md)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape

from turnstream.entrypoints.cli.common import ConfigOpt, err, out, settings_from

__all__ = ["tools_app"]

tools_app = typer.Typer(
    help="Bound tools: the counterfactual of recorded calls.", no_args_is_help=True
)


def _fail(message: str) -> typer.Exit:
    err.print(f"[red]error:[/red] {escape(message)}")
    return typer.Exit(2)


def _function(spec: str) -> Any:
    """``package.module:function`` imported (a ``@tool`` or a plain function)."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise _fail(f"--tool {spec!r}: write it as package.module:function")
    try:
        found = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise _fail(f"--tool {spec!r}: {exc}") from None
    if not callable(found):
        raise _fail(f"--tool {spec!r} is not callable")
    return found


@tools_app.command("counterfactual")
def counterfactual(
    calls: Annotated[Path, typer.Argument(help="Recorded calls, one JSON object a line.")],
    tool_spec: Annotated[
        str, typer.Option("--tool", help="The tool to run again: package.module:function.")
    ],
    space: Annotated[
        str, typer.Option("--space", help="The space whose bindings apply (or --bindings).")
    ] = "",
    source: Annotated[
        str, typer.Option("--source", help="The source, for lines that name none.")
    ] = "",
    element: Annotated[
        str,
        typer.Option(help="The element to drop: constraints_block, soft_signals, inferred_sizes."),
    ] = "constraints_block",
    bindings: Annotated[
        Path | None, typer.Option(help="A tool-bindings file (default: the space's).")
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """For each recorded call, run the same call without ELEMENT (the binding's
    ``dry_run_param`` set) and say whether the element changes what the tool returns.
    One JSON line per call, then a summary line; exit 2 on a bad line or option."""
    from turnstream.core.constraints import binding_for, load_bindings
    from turnstream.errors import TurnstreamError
    from turnstream.sdk.tools import BoundTool, RecordedCall, recorded_counterfactual

    path = bindings
    if path is None:
        conf = settings_from(config).space(space) if space else None
        if conf is None or not conf.tool_bindings:
            raise _fail(f"space {space!r} has no tool_bindings: pass --space or --bindings FILE")
        path = Path(conf.tool_bindings)
    try:
        doc = load_bindings(path)
    except TurnstreamError as exc:
        raise _fail(str(exc)) from None
    fn = _function(tool_spec)
    seen = changed = carried = 0
    try:
        lines = calls.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise _fail(f"{calls}: {exc.strerror}") from None
    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            call = RecordedCall.model_validate_json(text)
        except ValidationError as exc:
            where = ", ".join(".".join(map(str, e["loc"])) or "<line>" for e in exc.errors())
            raise _fail(f"{calls}:{number}: {where}: not a recorded call") from None
        binding = binding_for(doc, call.tool, call.source or source)
        if binding is None:
            raise _fail(f"{calls}:{number}: tool {call.tool!r} is not bound for this source")
        bound = fn if isinstance(fn, BoundTool) else BoundTool(fn, call.tool, binding)
        try:
            found = recorded_counterfactual(call, binding, element, bound)
        except TurnstreamError as exc:
            raise _fail(f"{calls}:{number}: {exc}") from None
        seen += 1
        carried += bool(found.dropped_params)
        changed += found.changed
        out.print(json.dumps({"line": number, "tool": call.tool, **vars(found)}), highlight=False)
    summary = {"calls": seen, "element": element, "carried": carried, "changed": changed}
    out.print(json.dumps({"summary": summary}), highlight=False)
