"""Bound tools: ``@tool(name, binding=...)`` renders the turn's constraints block into each
call, measures the results against the hard constraints sent, and (optionally) runs the
counterfactual, recording into the turn in progress when there is one.

The rules are pure, in :mod:`turnstream.core.constraints.tool_calls`; this module only
binds the Python call's arguments, runs the tool (sync or async) and records. The binding
is the one written in code, else the one the conversation's profile serves for its source
(``GET /v1/sdk/profile``); a tool with neither runs as it is, unmeasured.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from turnstream.core.constraints import (
    BindingsDocument,
    CallPlan,
    Counterfactual,
    Measured,
    Mode,
    ToolBinding,
    binding_for,
    compare_results,
    counterfactual_args,
    filter_residual,
    mask_result,
    measure_results,
    plan_call,
    result_items,
)
from turnstream.core.constraints.bindings import ResultsBinding
from turnstream.core.constraints.tool_calls import ELEMENT_ENTRIES, MASK, read_path
from turnstream.core.value_ids import value_ids
from turnstream.errors import TurnstreamError
from turnstream.models.object_types import ObjectTypes
from turnstream.sdk.frame import TurnFrame, current_frame

__all__ = ["BoundTool", "RecordedCall", "ToolRun", "recorded_counterfactual", "tool"]

R = TypeVar("R")
#: What a binding may be given as: the model, or its JSON form (a dict).
BindingLike = ToolBinding | Mapping[str, Any]


@dataclass(frozen=True)
class ToolRun:
    """One call of a bound tool: the tool's result as the agent gets it (residual-filtered
    and masked), the plan (suggestions, injections, conflicts), the measurement and the
    counterfactual (``None`` when not asked for or not possible)."""

    tool: str
    result: Any
    raw_result: Any
    binding: ToolBinding | None
    plan: CallPlan | None
    measured: Measured | None
    counterfactual: Counterfactual | None

    @property
    def suggestions(self) -> dict[str, Any]:
        """The rendered parameters the call left out (advisory mode: the agent's to add)."""
        return {} if self.plan is None else dict(self.plan.suggestions)

    def recorded(self, source: str | None = None) -> dict[str, Any]:
        """The call as one line of a recorded-calls file (``turnstream tools
        counterfactual``, docs/sdk.md): the tool, the arguments as sent, the block it
        was rendered from and what the tool returned."""
        line: dict[str, Any] = {
            "tool": self.tool,
            "args": {} if self.plan is None else self.plan.args,
            "block": {} if self.plan is None else self.plan.block,
            "result": self.raw_result,
        }
        if source is not None:
            line["source"] = source
        return line


def _binding(value: BindingLike | None) -> ToolBinding | None:
    if value is None or isinstance(value, ToolBinding):
        return value
    return ToolBinding.model_validate(dict(value))


def _served(frame: TurnFrame | None, name: str) -> ToolBinding | None:
    """The binding the conversation's profile serves for this tool and its source."""
    if frame is None:
        return None
    bindings: BindingsDocument | None = getattr(frame.conversation, "tool_bindings", None)
    source = getattr(frame.conversation, "source", "")
    return None if bindings is None else binding_for(bindings, name, source)


class BoundTool(Generic[R]):
    """A tool wrapped by :func:`tool`: call it as the function itself (it returns the
    tool's result, filtered and masked as the binding says), or ``run``/``arun`` it for
    the whole :class:`ToolRun`."""

    def __init__(
        self,
        fn: Callable[..., R] | Callable[..., Awaitable[R]],
        name: str,
        binding: BindingLike | None = None,
        *,
        mode: Mode = "advisory",
        counterfactual: str | None = None,
        mask_output: bool | None = None,
        hidden: tuple[str, ...] | None = None,
    ) -> None:
        if mode not in ("advisory", "apply"):
            raise TurnstreamError(f"tool {name!r}: mode must be advisory or apply, not {mode!r}")
        if counterfactual is not None and counterfactual not in ELEMENT_ENTRIES:
            raise TurnstreamError(
                f"tool {name!r}: counterfactual must be one of {', '.join(ELEMENT_ENTRIES)}, "
                f"not {counterfactual!r}"
            )
        self.fn = fn
        self.name = name
        self.binding = _binding(binding)
        self.mode: Mode = mode
        self.counterfactual = counterfactual
        self.mask_output = mask_output
        self.hidden = hidden
        self.is_async = inspect.iscoroutinefunction(fn)
        self._signature = inspect.signature(fn)
        functools.update_wrapper(self, fn)

    # ------------------------------------------------------------------ the call

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.is_async:
            return self._acall(*args, **kwargs)
        return self.run(*args, **kwargs).result

    async def _acall(self, *args: Any, **kwargs: Any) -> Any:
        return (await self.arun(*args, **kwargs)).result

    def run(self, *args: Any, _block: Mapping[str, Any] | None = None, **kwargs: Any) -> ToolRun:
        """Call a sync tool with the turn's block (or ``_block``); the whole run."""
        if self.is_async:
            raise TurnstreamError(f"tool {self.name!r} is async: await arun(...)")
        prepared = self._prepare(args, kwargs, _block)
        result = self._call_sync(prepared.call)
        other = None if prepared.dry_call is None else self._call_sync(prepared.dry_call)
        return self._finish(prepared, result, other)

    async def arun(
        self, *args: Any, _block: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> ToolRun:
        """Call the tool (sync or async) with the turn's block (or ``_block``)."""
        prepared = self._prepare(args, kwargs, _block)
        result = await self._call_async(prepared.call)
        other = None if prepared.dry_call is None else await self._call_async(prepared.dry_call)
        return self._finish(prepared, result, other)

    # ------------------------------------------------------------------ the parts

    def call_with(self, args: Mapping[str, Any]) -> Any:
        """Call the function itself with these arguments by name (nothing rendered,
        measured or recorded); an async tool is run to completion."""
        call = self._rebind(args)
        if self.is_async:
            return asyncio.run(self._call_async(call))
        return self._call_sync(call)

    def _call_sync(self, call: inspect.BoundArguments) -> Any:
        return self.fn(*call.args, **call.kwargs)

    async def _call_async(self, call: inspect.BoundArguments) -> Any:
        out = self.fn(*call.args, **call.kwargs)
        return await out if inspect.isawaitable(out) else out

    def _prepare(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], block: Mapping[str, Any] | None
    ) -> _Prepared:
        frame = current_frame()
        binding = self.binding or _served(frame, self.name)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TurnstreamError(f"tool {self.name!r}: {exc}") from None
        if block is None and frame is not None:
            block = frame.block
        if binding is None:
            return _Prepared(frame, None, bound, None, None, None, [])
        if frame is not None:
            _evidence_possible(self.name, binding, frame)
        block = block or {}
        plan = plan_call(block, binding, _flat(bound), self.mode)
        call = self._rebind(plan.args)
        dry_call, dropped = None, []
        if self.counterfactual is not None and binding.capabilities.dry_run_param is not None:
            dry_args, dropped = counterfactual_args(plan, block, binding, self.counterfactual)
            if dropped:  # nothing of the element in the call: the same call, the same result
                dry_call = self._rebind(dry_args)
        return _Prepared(frame, binding, call, plan, block, dry_call, dropped)

    def _rebind(self, flat: Mapping[str, Any]) -> inspect.BoundArguments:
        """The call with these arguments by name (``**kwargs`` takes the names the
        signature lacks; a tool without it cannot take an injected one)."""
        params = self._signature.parameters
        var_kw = next((p.name for p in params.values() if p.kind is p.VAR_KEYWORD), None)
        named: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for key, value in flat.items():
            if key in params and params[key].kind not in _VARS:
                named[key] = value
            elif var_kw is not None:
                extra[key] = value
            else:
                raise TurnstreamError(
                    f"tool {self.name!r}: the binding names parameter {key!r}, which the "
                    f"function does not take (nor **kwargs)"
                )
        return self._signature.bind(**named, **extra)

    def _finish(self, prepared: _Prepared, raw: Any, other: Any) -> ToolRun:
        binding, plan = prepared.binding, prepared.plan
        result, measured, counterfactual = raw, None, None
        if binding is not None and plan is not None and binding.results is not None:
            results = binding.results
            unenforced: list[str] = []
            filtered_out = 0
            frame = prepared.frame
            ids = value_ids(None if frame is None else frame.conversation.types)
            if plan.residual and binding.capabilities.overfetch:
                result, items, filtered_out = filter_residual(raw, plan.residual, results, ids)
            else:
                items = result_items(raw, results)
                unenforced = [e["id"] for e in plan.residual]
            flag = binding.capabilities.relax_flag
            relaxed = bool(read_path(raw, flag)) if flag else False
            measured = measure_results(
                items,
                plan.sent,
                results,
                relaxed=relaxed,
                filtered_out=filtered_out,
                unenforced=unenforced,
                ids=ids,
            )
            if self.counterfactual is not None and binding.capabilities.dry_run_param:
                without = other if prepared.dry_call is not None else raw
                counterfactual = compare_results(
                    raw, without, results, self.counterfactual, prepared.dropped
                )
            result = self._masked(result, binding, prepared.frame)
        run = ToolRun(self.name, result, raw, binding, plan, measured, counterfactual)
        if prepared.frame is not None:
            self._record(prepared.frame, run, prepared.call)
        return run

    def _masked(self, result: Any, binding: ToolBinding, frame: TurnFrame | None) -> Any:
        mask = binding.capabilities.mask_output if self.mask_output is None else self.mask_output
        if not mask or binding.results is None:
            return result
        hidden = self.hidden
        if hidden is None:
            types = None if frame is None else frame.conversation.types
            hidden = () if types is None else _sensitive_fields(types, binding.results.type)
        return mask_result(result, binding.results, hidden)

    def _record(self, frame: TurnFrame, run: ToolRun, call: inspect.BoundArguments) -> None:
        results = None if run.binding is None else run.binding.results
        types = frame.conversation.types
        if results is not None and types is not None and results.type in types.types:
            values = _evidence(run.result, results, types)
            frame.record_call(
                self.name, values, args=_flat(call), result=run.raw_result, type=results.type
            )
        else:
            frame.record_call(self.name, args=_flat(call), result=run.raw_result)
        frame.tool_runs.append(run)
        if run.measured is not None:
            frame.measure(self.name, **_counts(run.measured))


_VARS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


@dataclass(frozen=True)
class _Prepared:
    frame: TurnFrame | None
    binding: ToolBinding | None
    call: inspect.BoundArguments
    plan: CallPlan | None
    block: Mapping[str, Any] | None
    dry_call: inspect.BoundArguments | None
    dropped: list[str]


def _flat(bound: inspect.BoundArguments) -> dict[str, Any]:
    """The call's arguments by name (``**kwargs`` spread; ``*args`` are not named)."""
    flat: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            flat.update(value)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            flat[name] = value
    return flat


def _evidence(result: Any, results: ResultsBinding, types: ObjectTypes) -> list[dict[str, Any]]:
    """The values claims may cite: each field of the results' type the types document gives
    a claim class or the ``identifier`` role (the names a sentence binds a number to), as
    the agent got it (a masked field is not evidence), per object (``type:namespace:id``)."""
    declared = types.types[results.type].fields
    evidence: list[dict[str, Any]] = []
    for item in result_items(result, results):
        item_id = read_path(item, results.id)
        if item_id is None:
            continue
        ref = ":".join(p for p in (results.type, results.namespace, str(item_id)) if p)
        for name, spec in declared.items():
            value = read_path(item, results.fields.get(name, name))
            if (
                value is None
                or value == MASK
                or (spec.class_ is None and spec.role != "identifier")
            ):
                continue
            if isinstance(value, int | float | str) and not isinstance(value, bool):
                evidence.append({"object": ref, "field": name, "value": value})
    return evidence


def _evidence_possible(name: str, binding: ToolBinding, frame: TurnFrame) -> None:
    """Refuse, before the call, a bound tool whose results cannot become the claims'
    evidence in a conversation that checks claims: the results' type must be declared by
    the conversation's object types (never a silent ``unsupported``)."""
    conversation = frame.conversation
    if getattr(conversation, "contract", None) is None or binding.results is None:
        return
    if not getattr(conversation, "tool_evidence", True):
        return  # the turn's evidence is recorded by hand
    types = conversation.types
    wanted = binding.results.type
    if types is None:
        raise TurnstreamError(
            f"tool {name!r}: its results are {wanted!r} objects and the conversation checks "
            "claims, but it has no object types: pass types=load_types(PATH) to "
            "Conversation, or give the space a types document ([spaces.SPACE] types) so "
            "that the profile serves it (or Conversation(tool_evidence=False) when the "
            "turn's evidence is recorded by hand)"
        )
    if wanted not in types.types:
        raise TurnstreamError(
            f"tool {name!r}: results.type {wanted!r} is not a type of the conversation's "
            f"object types ({', '.join(sorted(types.types)) or 'none'}): declare it, or fix "
            "the binding's results.type"
        )


def _counts(measured: Measured) -> dict[str, Any]:
    wire = measured.wire("")
    del wire["tool"]
    return wire


def _sensitive_fields(types: Any, type_name: str) -> tuple[str, ...]:
    declared = types.types.get(type_name)
    if declared is None:
        return ()
    return tuple(
        f"{type_name}.{name}"
        for name in declared.fields
        if types.is_sensitive(f"{type_name}.{name}")
    )


def tool(
    name: str,
    binding: BindingLike | None = None,
    *,
    mode: Mode = "advisory",
    counterfactual: str | None = None,
    mask_output: bool | None = None,
    hidden: tuple[str, ...] | None = None,
) -> Callable[[Callable[..., Any]], BoundTool[Any]]:
    """Bind a tool (a sync or an async function).

    ``binding``: the tool's binding (``ToolBinding`` or its JSON form); without one, the
    binding the conversation's profile serves for the conversation's source. ``mode``:
    ``advisory`` (the call goes as it is; the run's ``suggestions`` say what the block
    would add) or ``apply`` (adds what may be injected). ``counterfactual``: an element
    (``constraints_block``, ``soft_signals``, ``inferred_sizes``) to drop in a second,
    dry-run call. ``mask_output``: mask the ``hidden`` fields (default: the fields the
    conversation's object types mark sensitive); ``None`` follows the binding.
    """

    def wrap(fn: Callable[..., Any]) -> BoundTool[Any]:
        return BoundTool(
            fn,
            name,
            binding,
            mode=mode,
            counterfactual=counterfactual,
            mask_output=mask_output,
            hidden=hidden,
        )

    return wrap


class RecordedCall(BaseModel):
    """One line of a recorded-calls file (``ToolRun.recorded()`` writes it)."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(min_length=1)
    source: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    block: dict[str, Any] = Field(default_factory=dict)
    result: Any = None


def recorded_counterfactual(
    call: RecordedCall, binding: ToolBinding, element: str, tool_fn: BoundTool[Any]
) -> Counterfactual:
    """Whether ``element`` changes what the tool returns for a recorded call: the same
    call without it (with ``dry_run_param``) is run now and compared with the recorded
    result; a call that carried nothing of the element is not run again (unchanged)."""
    if binding.results is None:
        raise TurnstreamError(f"tool {binding.tool!r}: its binding has no results to compare")
    plan = plan_call(call.block, binding, call.args)
    try:
        args, dropped = counterfactual_args(plan, call.block, binding, element)
    except ValueError as exc:
        raise TurnstreamError(str(exc)) from None
    without = tool_fn.call_with(args) if dropped else call.result
    return compare_results(call.result, without, binding.results, element, dropped)
