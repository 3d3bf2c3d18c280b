"""Tool bindings: which argument of a tool carries which field, and the block rendered
for one tool through them (advisory mode: suggestions, nothing applied).

The document is the space's tool-bindings configuration, one binding per tool and source
(an empty ``sources`` applies to every source).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from turnstream.core.constraints.inputs import Op
from turnstream.core.value_ids import canonical
from turnstream.errors import ConfigError

__all__ = [
    "ArgBinding",
    "BindingsDocument",
    "Capabilities",
    "Negation",
    "ResultsBinding",
    "SdkProfile",
    "ToolBinding",
    "binding_for",
    "load_bindings",
    "parse_bindings",
    "parse_profile",
    "profile_for",
    "render_for_tool",
]

_ATTR = r"^[A-Za-z][A-Za-z0-9_]*\.[A-Za-z][A-Za-z0-9_.]*$"
_COMPARISONS = ("lt", "lte", "gt", "gte", "between")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Negation(_Model):
    """The argument that carries the refused values (``not_in``, ``ne``)."""

    param: str = Field(min_length=1)


class ArgBinding(_Model):
    """One argument: the field it carries (``type.field``), its name and what it expresses.

    ``ops`` lists the operators the argument takes; without it, ``in`` and ``eq`` and no
    comparison. ``not_in`` and ``ne`` go to ``negation.param`` whenever there is one.
    ``transform`` names what the SDK applies to the value; the rendering passes values
    as they are.
    """

    attr: str = Field(pattern=_ATTR)
    param: str = Field(min_length=1)
    transform: str | None = None
    negation: Negation | None = None
    ops: tuple[Op, ...] | None = None


class ResultsBinding(_Model):
    """Where the result carries objects of a type, and which key holds which field."""

    path: str
    type: str
    namespace: str | None = None
    id: str
    fields: dict[str, str] = Field(default_factory=dict)


class Capabilities(_Model):
    """What the tool does beyond its arguments."""

    overfetch: bool = False
    relax_flag: str | None = None
    dry_run_param: str | None = None
    mask_output: bool = False


class ToolBinding(_Model):
    """The binding of one tool for some sources (none listed: every source)."""

    tool: str = Field(min_length=1)
    sources: tuple[str, ...] = ()
    args: tuple[ArgBinding, ...] = ()
    results: ResultsBinding | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)


class BindingsDocument(_Model):
    """Every binding of a space; a tool is bound at most once per source."""

    bindings: tuple[ToolBinding, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        return {"bindings": data} if isinstance(data, list) else data

    @model_validator(mode="after")
    def _once_per_source(self) -> BindingsDocument:
        seen: set[tuple[str, str | None]] = set()
        for binding in self.bindings:
            for source in binding.sources or (None,):
                key = (binding.tool, source)
                if key in seen:
                    where = f"source {source!r}" if source else "every source"
                    raise ValueError(f"tool {binding.tool!r} is bound twice for {where}")
                seen.add(key)
        return self


def parse_bindings(data: Any) -> BindingsDocument:
    """The document from its JSON form: ``{"bindings": [...]}`` or the list itself."""
    return BindingsDocument.model_validate(data)


def load_bindings(path: str | Path) -> BindingsDocument:
    """The document in a JSON file; :class:`ConfigError` when it is missing or wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return parse_bindings(data)
    except (OSError, ValueError, ValidationError) as e:
        raise ConfigError(f"tool bindings {path}: {e}") from e


class SdkProfile(_Model):
    """What ``GET /v1/sdk/profile`` serves the SDK of one source: that source's tool
    bindings (without ``sources``) and the claim contract's version (never its phrases)."""

    space_id: str
    source: str
    tool_bindings: tuple[ToolBinding, ...] = ()
    contract_version: str | None = None
    #: The contract, its negative corpus reduced to ``{"version": ...}``.
    claim_contract: dict[str, Any] | None = None
    #: The space's object types document (its JSON form): what a bound tool's results are,
    #: so that their values become the claims' evidence.
    types: dict[str, Any] | None = None

    @property
    def bindings(self) -> BindingsDocument:
        """The served bindings as a document (each applies to this source)."""
        return BindingsDocument(bindings=self.tool_bindings)


def parse_profile(data: SdkProfile | Mapping[str, Any]) -> SdkProfile:
    """The profile from its JSON form (``ConfigError`` naming the field when wrong)."""
    if isinstance(data, SdkProfile):
        return data
    try:
        return SdkProfile.model_validate(dict(data))
    except ValidationError as e:
        raise ConfigError(f"sdk profile: {e}") from e


def _without_phrases(contract: Mapping[str, Any]) -> dict[str, Any]:
    """The contract with its negative corpus reduced to its version: the phrases are the
    trade's own wording, and a key of the integration role has no use for them."""
    served = dict(contract)
    corpus = served.get("negative_corpus")
    if isinstance(corpus, Mapping):
        served["negative_corpus"] = {"version": corpus.get("version")}
    return served


def profile_for(
    space_id: str,
    source: str,
    doc: BindingsDocument | None,
    contract: Mapping[str, Any] | None,
    types: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON answer of ``GET /v1/sdk/profile``: every binding that applies to
    ``source`` (one naming it wins over one for every source), without ``sources``; the
    claim contract without its negative corpus's phrases, and its version; the object
    types document."""
    chosen: list[dict[str, Any]] = []
    if doc is not None:
        for tool in dict.fromkeys(b.tool for b in doc.bindings):
            binding = binding_for(doc, tool, source)
            if binding is not None:
                chosen.append(binding.model_dump(mode="json", exclude={"sources"}))
    return {
        "space_id": space_id,
        "source": source,
        "tool_bindings": chosen,
        "contract_version": None if contract is None else contract.get("version"),
        "claim_contract": None if contract is None else _without_phrases(contract),
        "types": None if types is None else dict(types),
    }


def binding_for(
    doc: BindingsDocument | Iterable[ToolBinding], tool: str, source: str
) -> ToolBinding | None:
    """The binding of ``tool`` for ``source``: one that names the source, else one for
    every source, else ``None``."""
    bindings = doc.bindings if isinstance(doc, BindingsDocument) else tuple(doc)
    general = None
    for binding in bindings:
        if binding.tool != tool:
            continue
        if source in binding.sources:
            return binding
        if not binding.sources and general is None:
            general = binding
    return general


def _target(arg: ArgBinding, op: str, values: list[Any]) -> tuple[str, Any, bool] | None:
    """The parameter, the value and whether the value merges with another; or ``None``."""
    if op in ("not_in", "ne"):
        if arg.negation is None:
            return None
        return arg.negation.param, (values if op == "not_in" else values[0]), True
    listed = arg.ops is not None and op in arg.ops
    if op in ("in", "eq"):
        if arg.ops is not None and not listed:
            return None
        return arg.param, (values if op == "in" else values[0]), False
    if op in _COMPARISONS and listed:
        return arg.param, (values if op == "between" else values[0]), False
    return None


def _merged(old: Any, new: Any) -> list[Any]:
    """Two refusals on one parameter: every refused value once, in order."""
    merged: list[Any] = []
    keys: set[str] = set()
    for value in [
        *(old if isinstance(old, list) else [old]),
        *(new if isinstance(new, list) else [new]),
    ]:
        if canonical(value) not in keys:
            keys.add(canonical(value))
            merged.append(value)
    return merged


def render_for_tool(block: Mapping[str, Any], binding: ToolBinding) -> dict[str, Any]:
    """The block's standing hard entries, and its attributes, as suggested arguments of
    ``binding.tool``.

    ``in``/``eq`` go to the argument's parameter, ``not_in``/``ne`` to its negation
    parameter, comparisons only where ``ops`` lists them. What no argument expresses is
    ``residual``: ``filtered`` by the SDK when the tool overfetches, else
    ``unenforced`` (``None`` when nothing is residual). ``unbound_attrs``: fields of the
    block's hard entries no argument carries. An attribute (``eq`` its value) takes a
    parameter no hard entry took. ``behind``: each parameter and the ids of the entries
    it carries (what apply mode asks before injecting it).
    """
    params: dict[str, Any] = {}
    behind: dict[str, list[str]] = {}
    residual: list[str] = []
    unbound: set[str] = set()
    for entry in block.get("hard", ()):
        # An act of a sensitive field that names no objects' field ("sem amendoim") is the
        # agent's to act on from the text: no argument carries it, no result is judged by it.
        if entry.get("lost") or entry["attr"] is None:
            continue
        args = [arg for arg in binding.args if arg.attr == entry["attr"]]
        if not args:
            unbound.add(entry["attr"])
        placed = False
        for arg in args:
            target = _target(arg, entry["op"], list(entry["values"]))
            if target is None:
                continue
            param, value, merges = target
            if param not in params:
                params[param] = value
            elif merges:
                params[param] = _merged(params[param], value)
            else:
                continue  # the parameter already carries another requirement
            behind.setdefault(param, []).append(entry["id"])
            placed = True
            break
        if not placed:
            residual.append(entry["id"])
    for fact in block.get("attributes", ()):
        if fact.get("lost"):
            continue
        for arg in binding.args:
            target = _target(arg, "eq", [fact["value"]]) if arg.attr == fact["attr"] else None
            if target is not None and target[0] not in params:
                params[target[0]] = target[1]
                behind[target[0]] = [fact["id"]]
                break
    handling: Literal["filtered", "unenforced"] | None = None
    if residual:
        handling = "filtered" if binding.capabilities.overfetch else "unenforced"
    return {
        "tool": binding.tool,
        "params": params,
        "behind": behind,
        "residual": residual,
        "residual_handling": handling,
        "unbound_attrs": sorted(unbound),
    }
