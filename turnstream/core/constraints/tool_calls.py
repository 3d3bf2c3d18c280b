"""One call of a bound tool against the constraints block: what the call carries (advisory
or apply mode), what its results say (measurement, residual filtering, masking), and the
same call without an element of the block (the counterfactual).

Pure: the SDK (``turnstream.sdk.tools``) runs the tool and hands the arguments and the
result in. The rules are the reference's "Rendering for one tool".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from turnstream.core.constraints.bindings import ArgBinding, ResultsBinding, ToolBinding
from turnstream.core.constraints.bindings import render_for_tool as _render
from turnstream.core.constraints.conditions import bound_within, holds
from turnstream.core.value_ids import ValueIds, canonical

__all__ = [
    "ELEMENT_ENTRIES",
    "MASK",
    "CallPlan",
    "Counterfactual",
    "Measured",
    "Mode",
    "canonical_json",
    "compare_results",
    "counterfactual_args",
    "filter_residual",
    "mask_result",
    "measure_results",
    "plan_call",
    "read_path",
    "result_items",
]

Mode = Literal["advisory", "apply"]
#: What a masked field holds in the output.
MASK = "[masked]"
#: The block's entries each element of the measurement document stands for (an arm that
#: drops the element goes without them; ``state_block`` is not in the block).
ELEMENT_ENTRIES = ("constraints_block", "soft_signals", "inferred_sizes")
_INJECTABLE_SCOPES = frozenset({"turn", "session"})
_BOUNDS = frozenset({"lt", "lte", "gt", "gte", "between"})
_SAID = frozenset({"stated", "tool_args", "correction"})


@dataclass(frozen=True)
class CallPlan:
    """What one call carries, beside what the block suggests.

    ``args``: the arguments the tool is called with (the call's own, plus ``injected`` in
    apply mode). ``suggestions``: the rendered parameters the call left out (advisory:
    the agent's to apply). ``withheld``: a suggested parameter apply mode did not inject,
    and why. ``conflicts``: a constraint whose own argument the call set to a value it
    refuses (the call's value stands). ``sent``: the hard entries the arguments carry.
    """

    tool: str
    mode: Mode
    args: dict[str, Any]
    rendered: dict[str, Any]
    suggestions: dict[str, Any]
    injected: dict[str, Any]
    withheld: dict[str, str]
    conflicts: list[dict[str, Any]]
    sent: list[dict[str, Any]]
    residual: list[dict[str, Any]]
    #: The block the call was planned against.
    block: Mapping[str, Any] = field(default_factory=dict)

    @property
    def residual_handling(self) -> str | None:
        """``filtered``, ``unenforced`` or ``None`` (nothing residual)."""
        handling = self.rendered["residual_handling"]
        return handling if isinstance(handling, str) else None


@dataclass(frozen=True)
class Measured:
    """A call's results counted over the hard constraints sent (``sent`` of them)."""

    sent: int
    results_checked: int
    violations: int
    unverifiable: int
    relaxed: bool
    #: Results the SDK took out for breaking a residual constraint (overfetch).
    filtered_out: int = 0
    #: Ids of residual constraints nothing enforced (the tool does not overfetch).
    unenforced: list[str] = field(default_factory=list)

    def wire(self, tool: str) -> dict[str, Any]:
        """The turn record's constraint measurement (docs/wire.md)."""
        return {
            "tool": tool,
            "sent": self.sent,
            "results_checked": self.results_checked,
            "violations": self.violations,
            "unverifiable": self.unverifiable,
            "relaxed": self.relaxed,
        }


@dataclass(frozen=True)
class Counterfactual:
    """Whether an element of the block changes what the tool returns."""

    element: str
    dropped_params: list[str]
    changed: bool
    #: Result ids only the call with the element returned, and only the one without.
    only_with: list[str]
    only_without: list[str]


# --------------------------------------------------------------------------- arguments


def _entries(block: Mapping[str, Any]) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Every standing entry of the block by id, with its section."""
    found: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for section in ("hard", "attributes", "soft"):
        for entry in block.get(section, ()):
            found[entry["id"]] = (section, entry)
    return found


def _in_conflict(block: Mapping[str, Any]) -> set[str]:
    return {i for conflict in block.get("conflicts", ()) for i in conflict["entries"]}


def _why_not_injectable(section: str, entry: Mapping[str, Any], conflicted: set[str]) -> str | None:
    """``None`` when the entry may be injected, else the reason it may not."""
    if section == "attributes":
        if entry.get("inferred") or entry.get("source") not in _SAID:
            return f"{entry['id']} is an attribute the person did not state"
    elif section == "hard":
        if entry.get("scope") not in _INJECTABLE_SCOPES:
            return f"{entry['id']} is a {entry.get('scope')} constraint"
        if entry.get("source") not in _SAID:
            return f"{entry['id']} was not stated"
    else:
        return f"{entry['id']} is not a hard constraint"
    if entry["id"] in conflicted:
        return f"{entry['id']} is in a conflict"
    return None


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _arg_of(binding: ToolBinding, attr: str, param: str) -> ArgBinding | None:
    for arg in binding.args:
        if arg.attr == attr and param in (arg.param, arg.negation and arg.negation.param):
            return arg
    return None


def _covers(entry: Mapping[str, Any], param: str, arg: ArgBinding, value: Any) -> bool | None:
    """Whether the call's ``value`` of ``param`` carries the entry (``None``: undecided)."""
    if arg.negation is not None and param == arg.negation.param:
        refused = {canonical(v) for v in _values(value)}
        return all(canonical(v) in refused for v in entry["values"])
    if entry["op"] in _BOUNDS:  # the argument is where the tool cuts, not a value
        return bound_within(entry["op"], entry["values"], value)
    verdicts = [holds(entry["op"], entry["values"], v) for v in _values(value)]
    if any(v is False for v in verdicts):
        return False
    return None if any(v is None for v in verdicts) else True


def _positive(arg: ArgBinding) -> ArgBinding:
    """The argument without its negation: its own parameter read as values asked for."""
    return arg.model_copy(update={"negation": None})


def plan_call(
    block: Mapping[str, Any], binding: ToolBinding, args: Mapping[str, Any], mode: Mode = "advisory"
) -> CallPlan:
    """The call of ``binding.tool`` with ``args``, against ``block``.

    Advisory: the call goes as it is. Apply: a suggested parameter the call left out is
    added when every entry behind it may be: a stated hard constraint of ``turn`` or
    ``session`` scope in no conflict, or a stated attribute (never an inferred size,
    never a persistent constraint). An argument the call set is never overridden; when
    it is a constraint's own argument and holds a value the constraint refuses, it
    stands and the pair is a conflict.
    """
    rendered = _render(block, binding)
    entries = _entries(block)
    conflicted = _in_conflict(block)
    final = dict(args)
    suggestions: dict[str, Any] = {}
    injected: dict[str, Any] = {}
    withheld: dict[str, str] = {}
    for param, value in rendered["params"].items():
        if param in args:
            continue
        suggestions[param] = value
        if mode != "apply":
            continue
        reasons = [_why_not_injectable(*entries[i], conflicted) for i in rendered["behind"][param]]
        refused = [r for r in reasons if r is not None]
        if refused:
            withheld[param] = "; ".join(refused)
        else:
            injected[param] = value
            final[param] = value
    sent: list[dict[str, Any]] = []
    for param, ids in rendered["behind"].items():
        for entry_id in ids:
            section, entry = entries[entry_id]
            arg = _arg_of(binding, entry["attr"], param)
            carried = section == "hard" and arg is not None and param in final
            if carried and _covers(entry, param, arg, final[param]):  # type: ignore[arg-type]
                sent.append(dict(entry))
    standing = {e["id"]: e for e in block.get("hard", ()) if not e.get("lost")}
    conflicts: list[dict[str, Any]] = []
    for entry in standing.values():
        for arg in binding.args:
            if arg.attr != entry["attr"] or arg.param not in args:
                continue  # only the constraint's own argument, as the call set it
            if _covers(entry, arg.param, _positive(arg), args[arg.param]) is False:
                conflicts.append({"entry": entry["id"], "param": arg.param,
                                  "value": args[arg.param]})  # fmt: skip
    residual = [dict(standing[i]) for i in rendered["residual"] if i in standing]
    return CallPlan(
        tool=binding.tool,
        mode=mode,
        args=final,
        rendered=rendered,
        suggestions=suggestions,
        injected=injected,
        withheld=withheld,
        conflicts=conflicts,
        sent=sent,
        residual=residual,
        block=block,
    )


# --------------------------------------------------------------------------- results


def _step(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def read_path(value: Any, path: str) -> Any:
    """The value at a path of the result: ``$`` (the result), ``$.a.b`` or ``a.b``
    (keys of mappings, or attributes of objects); ``None`` when a step is missing."""
    steps = [s for s in path.removeprefix("$").split(".") if s]
    for step in steps:
        if value is None:
            return None
        value = _step(value, step)
    return value


def result_items(result: Any, results: ResultsBinding) -> list[Any]:
    """The objects the result carries at ``results.path`` (one object: a list of one)."""
    found = read_path(result, results.path)
    if found is None:
        return []
    if isinstance(found, list | tuple):
        return list(found)
    return [found]


def _field_key(results: ResultsBinding, attr: str) -> str | None:
    """The key of an item that holds ``attr`` (``type.field``); ``None`` when the results
    hold objects of another type. A field ``fields`` does not name is under its name."""
    type_name, _, field_name = attr.partition(".")
    if type_name != results.type:
        return None
    return results.fields.get(field_name, field_name)


def _judge(
    item: Any, entry: Mapping[str, Any], results: ResultsBinding, ids: ValueIds
) -> bool | None:
    """True: the item meets the entry; False: breaks it; None: lacks its field. Values
    compare by the value they name (:class:`ValueIds`: ``Black`` breaks "not preto")."""
    attr = entry["attr"]
    key = _field_key(results, attr)
    value = None if key is None else read_path(item, key)
    if value is None:
        return None
    wanted = ids.all(attr, entry["values"])
    if isinstance(value, list | tuple):  # a multi-valued field: every value must hold
        verdicts = [holds(entry["op"], wanted, ids.of(attr, v)) for v in value]
        if any(v is False for v in verdicts):
            return False
        return None if any(v is None for v in verdicts) or not verdicts else True
    return holds(entry["op"], wanted, ids.of(attr, value))


def measure_results(
    items: Sequence[Any],
    sent: Sequence[Mapping[str, Any]],
    results: ResultsBinding,
    *,
    relaxed: bool = False,
    filtered_out: int = 0,
    unenforced: Iterable[str] = (),
    ids: ValueIds | None = None,
) -> Measured:
    """Count the results over the hard constraints sent: a result that breaks one is a
    violation; one that breaks none but lacks the field of one is unverifiable. Values
    compare by ``ids`` (the space's :func:`value_ids`; without it, by the built-in words
    and without case, accents or extra space)."""
    violations = unverifiable = 0
    ids = ids or ValueIds()
    for item in items:
        verdicts = [_judge(item, entry, results, ids) for entry in sent]
        if any(v is False for v in verdicts):
            violations += 1
        elif any(v is None for v in verdicts):
            unverifiable += 1
    return Measured(
        sent=len(sent),
        results_checked=len(items),
        violations=violations,
        unverifiable=unverifiable,
        relaxed=relaxed,
        filtered_out=filtered_out,
        unenforced=list(unenforced),
    )


def _replace_at(value: Any, steps: Sequence[str], items: list[Any]) -> Any:
    """A copy of ``value`` with ``items`` at the path (mappings copied, nothing mutated)."""
    if not steps:
        return items
    if not isinstance(value, Mapping):
        raise TypeError("only a result of mappings can be filtered or masked")
    return {**value, steps[0]: _replace_at(value.get(steps[0]), steps[1:], items)}


def _steps(path: str) -> list[str]:
    return [s for s in path.removeprefix("$").split(".") if s]


def filter_residual(
    result: Any,
    residual: Sequence[Mapping[str, Any]],
    results: ResultsBinding,
    ids: ValueIds | None = None,
) -> tuple[Any, list[Any], int]:
    """The result without the items that break a residual constraint (a result that lacks
    the field stays: it is not known to break it; values compare by ``ids``, as in
    :func:`measure_results`); the items kept; how many went."""
    items = result_items(result, results)
    ids = ids or ValueIds()
    kept = [i for i in items if not any(_judge(i, e, results, ids) is False for e in residual)]
    if len(kept) == len(items):
        return result, items, 0
    return _replace_at(result, _steps(results.path), kept), kept, len(items) - len(kept)


def mask_result(result: Any, results: ResultsBinding, hidden: Iterable[str]) -> Any:
    """The result with the ``hidden`` fields (``type.field``) of its items replaced by
    :data:`MASK` (items that are not mappings pass as they are)."""
    keys = {k for k in (_field_key(results, attr) for attr in hidden) if k is not None}
    items = result_items(result, results)
    if not keys or not items:
        return result
    masked = [
        {k: (MASK if k in keys else v) for k, v in item.items()}
        if isinstance(item, Mapping)
        else item
        for item in items
    ]
    return _replace_at(result, _steps(results.path), masked)


# --------------------------------------------------------------------------- counterfactual


def _element_ids(block: Mapping[str, Any], element: str) -> set[str]:
    if element == "constraints_block":
        return {e["id"] for s in ("hard", "attributes", "soft") for e in block.get(s, ())}
    if element == "soft_signals":
        return {e["id"] for e in block.get("soft", ()) if e.get("inferred")}
    if element == "inferred_sizes":
        return {e["id"] for e in block.get("attributes", ()) if e.get("inferred")}
    raise ValueError(f"element: {element!r} is not one of {', '.join(ELEMENT_ENTRIES)}")


def counterfactual_args(
    plan: CallPlan, block: Mapping[str, Any], binding: ToolBinding, element: str
) -> tuple[dict[str, Any], list[str]]:
    """The arguments of the same call without ``element`` (each parameter that carries
    one of its entries and holds the rendered value is left out), with the binding's
    ``dry_run_param`` set; and the parameters left out."""
    dry_run = binding.capabilities.dry_run_param
    if dry_run is None:
        raise ValueError(f"tool {binding.tool!r}: its binding has no dry_run_param")
    ids = _element_ids(block, element)
    rendered = plan.rendered
    dropped = [
        param
        for param, behind in rendered["behind"].items()
        if param in plan.args
        and ids.intersection(behind)
        and canonical_json(plan.args[param]) == canonical_json(rendered["params"][param])
    ]
    args = {k: v for k, v in plan.args.items() if k not in dropped}
    args[dry_run] = True
    return args, dropped


def canonical_json(value: Any) -> Any:
    """A value's comparable form (``700`` and ``"700"`` alike, lists in order)."""
    if isinstance(value, list | tuple):
        return tuple(canonical_json(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((k, canonical_json(v)) for k, v in value.items()))
    return canonical(value)


def _ids(result: Any, results: ResultsBinding) -> list[str]:
    return [str(read_path(item, results.id)) for item in result_items(result, results)]


def compare_results(
    with_element: Any,
    without_element: Any,
    results: ResultsBinding,
    element: str,
    dropped: list[str],
) -> Counterfactual:
    """Whether the two results differ, by the ids of what they return and in which order."""
    a, b = _ids(with_element, results), _ids(without_element, results)
    return Counterfactual(
        element=element,
        dropped_params=dropped,
        changed=a != b,
        only_with=[i for i in a if i not in set(b)],
        only_without=[i for i in b if i not in set(a)],
    )
