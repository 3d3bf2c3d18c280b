"""The claim-contract document: what an agent may state and the evidence each claim needs.

Loaded from JSON or TOML; every refusal names the field path (``categories.3.evidence``).
The rules are in ``docs/claims.md``.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from turnstream.errors import TurnstreamError

__all__ = [
    "DETECTABLE_CLASSES",
    "INTERNAL_TEXT",
    "MAX_CATEGORIES",
    "Action",
    "Actions",
    "AnchorEvidence",
    "Category",
    "Contract",
    "ContractError",
    "Detect",
    "EvidenceSpec",
    "InternalText",
    "Language",
    "Natures",
    "NegativeCorpus",
    "Outputs",
    "ValueEvidence",
    "load_contract",
    "parse_contract",
]

Language = Literal["pt", "en", "es"]
#: The classes a category may detect; ``label`` names instead of measuring and never is a claim.
DETECTABLE_CLASSES = ("money", "percent", "date", "duration", "quantity", "count", "dosage")
DetectClass = Literal["money", "percent", "date", "duration", "quantity", "count", "dosage"]
Pattern = Literal["article_citation", "precedent_citation"]
Action = Literal["block", "warn", "count", "rewrite_if_unequivocal", "discard_anchor_and_count"]
#: The reserved category of repeated internal text.
INTERNAL_TEXT = "internal_text"
MAX_CATEGORIES = 64

_Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
_Term = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256)]
_Terms = Annotated[list[_Term], Field(min_length=1)]


class ContractError(TurnstreamError):
    """The contract document (or a file beside it) is wrong.

    ``errors`` holds one ``(field_path, message)`` pair per problem, e.g.
    ``("categories.2.evidence", "names 2 kinds of evidence (tool, value): exactly one")``.
    """

    def __init__(self, errors: list[tuple[str, str]], source: str = "contract") -> None:
        self.errors = errors
        self.source = source
        super().__init__(
            f"{source}: " + "; ".join(f"{path or '<document>'}: {msg}" for path, msg in errors)
        )


class _Doc(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ValueEvidence(_Doc):
    """A value with provenance in the turn (a tool's result or a state read)."""

    same_role: bool = False
    fresh_for: Literal["claim"] | None = None
    must_state_gaps: bool = False
    #: An approximate number ("about $40") is compared within this relative tolerance
    #: (0.05: 5% of the evidence's value); none: it is not compared (``not_checked``).
    approximate_tolerance: float | None = Field(default=None, gt=0.0, le=1.0)


class AnchorEvidence(_Doc):
    """A text anchor citing a document of the turn, scoring at least ``threshold``."""

    threshold: float = Field(default=0.90, gt=0.0, le=1.0)


class EvidenceSpec(_Doc):
    """Exactly one kind of evidence."""

    value: ValueEvidence | None = None
    tool: _Id | None = None
    tool_any: Annotated[list[_Id], Field(min_length=1)] | None = None
    anchor: AnchorEvidence | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> EvidenceSpec:
        named = [k for k in ("value", "tool", "tool_any", "anchor") if getattr(self, k) is not None]
        if len(named) != 1:
            got = ", ".join(named) if named else "none"
            raise ValueError(
                f"names {len(named)} kinds of evidence ({got}): "
                "exactly one of value, tool, tool_any, anchor"
            )
        return self

    @property
    def kind(self) -> Literal["value", "tool", "tool_any", "anchor"]:
        """The one kind this evidence names."""
        if self.value is not None:
            return "value"
        if self.tool is not None:
            return "tool"
        if self.tool_any is not None:
            return "tool_any"
        return "anchor"

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools whose call is the evidence (``tool`` and ``tool_any``)."""
        if self.tool is not None:
            return (self.tool,)
        return tuple(self.tool_any or ())


class Detect(_Doc):
    """How a category's claims are found."""

    classes: list[DetectClass] = Field(default_factory=list)
    terms: list[_Term] = Field(default_factory=list)
    roles: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,127}$")], _Terms] = (
        Field(default_factory=dict)
    )
    patterns: list[Pattern] = Field(default_factory=list)
    document_sections: bool = False

    @field_validator("classes", mode="before")
    @classmethod
    def _no_labels(cls, value: Any) -> Any:
        if isinstance(value, list) and "label" in value:
            raise ValueError("label names instead of measuring: no category detects labels")
        return value

    @model_validator(mode="after")
    def _something(self) -> Detect:
        found = self.classes or self.terms or self.roles or self.patterns
        if not (found or self.document_sections):
            raise ValueError(
                "detects nothing: give classes, terms, roles, patterns or document_sections"
            )
        return self


class Natures(_Doc):
    """How a number is handled by where it came from."""

    computed: Literal["check", "count"] = "check"
    quoted: Literal["verbatim", "count"] = "verbatim"
    model: Literal["block", "warn", "count"] | None = None


class Actions(_Doc):
    """What happens to a claim that does not stand, per output context."""

    default: Action = "warn"
    contexts: dict[_Id, Action] = Field(default_factory=dict)
    #: ``rewrite_if_unequivocal`` also rewrites an unequivocal ``mismatch``: the number is
    #: bound to one object whose evidence holds one value of its role, and that value is
    #: written in its place (off: only a ``stale`` copy is rewritten).
    rewrite_mismatch: bool = False

    def for_context(self, context: str | None) -> Action:
        """The action for ``context`` (its own, or the default)."""
        if context is not None and context in self.contexts:
            return self.contexts[context]
        return self.default


class Category(_Doc):
    """One kind of claim."""

    id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,127}$")]
    agents: list[_Id] = Field(default_factory=list)
    detect: Detect
    evidence: EvidenceSpec
    natures: Natures = Field(default_factory=Natures)
    actions: Actions = Field(default_factory=Actions)
    replace_with: Annotated[str, StringConstraints(max_length=1024)] | None = None

    def applies_to(self, agent: str | None) -> bool:
        """Whether the category checks ``agent``'s outputs (no agents listed: every agent)."""
        return not self.agents or agent is None or agent in self.agents


class NegativeCorpus(_Doc):
    """The versioned phrases of the trade that must never trigger a claim."""

    version: _Id
    phrases: list[Annotated[str, StringConstraints(min_length=1, max_length=4096)]] = Field(
        default_factory=list
    )


class InternalText(_Doc):
    """Fingerprints of the company's own prompt (hashes of every ``n`` words, never the text)."""

    n: int = Field(default=8, ge=3, le=64)
    fingerprints: list[Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]] = Field(
        default_factory=list
    )
    replace_with: Annotated[str, StringConstraints(max_length=256)] = "[…]"


class Outputs(_Doc):
    """The output contexts, apart: what may be changed and what must go untouched."""

    mutable: list[_Id] = Field(default_factory=list)
    immutable: list[_Id] = Field(default_factory=list)

    @model_validator(mode="after")
    def _apart(self) -> Outputs:
        both = sorted(set(self.mutable) & set(self.immutable))
        if both:
            raise ValueError(f"contexts both mutable and immutable: {', '.join(both)}")
        return self


class Contract(_Doc):
    """The claim contract."""

    version: _Id
    languages: Annotated[list[Language], Field(min_length=1)]
    categories: Annotated[list[Category], Field(max_length=MAX_CATEGORIES)] = Field(
        default_factory=list
    )
    negative_corpus: NegativeCorpus | None = None
    internal_text: InternalText | None = None
    outputs: Outputs = Field(default_factory=Outputs)

    def is_mutable(self, context: str | None, immutable: bool = False) -> bool:
        """Whether an output of ``context`` may be changed (only contexts listed as mutable)."""
        return not immutable and context is not None and context in self.outputs.mutable


def _rules(contract: Contract) -> list[tuple[str, str]]:
    """The rules across fields, each refusal with its path."""
    errors: list[tuple[str, str]] = []
    if len(set(contract.languages)) != len(contract.languages):
        errors.append(("languages", "a language is listed twice"))
    if contract.categories and contract.negative_corpus is None:
        errors.append(("negative_corpus", "required when there are categories"))
    mutable = set(contract.outputs.mutable)
    seen: set[str] = set()
    for i, cat in enumerate(contract.categories):
        at = f"categories.{i}"
        if cat.id == INTERNAL_TEXT:
            errors.append((f"{at}.id", f"{INTERNAL_TEXT} is reserved for repeated prompt text"))
        if cat.id in seen:
            errors.append((f"{at}.id", f"category {cat.id} is defined twice"))
        seen.add(cat.id)
        if cat.actions.default == "rewrite_if_unequivocal":
            errors.append(
                (f"{at}.actions.default", "rewrite_if_unequivocal may not be the default")
            )
        for ctx, action in cat.actions.contexts.items():
            if action == "rewrite_if_unequivocal" and ctx not in mutable:
                errors.append(
                    (
                        f"{at}.actions.contexts.{ctx}",
                        f"rewrite_if_unequivocal for {ctx}, which outputs.mutable does not list",
                    )
                )
        actions = [cat.actions.default, *cat.actions.contexts.values()]
        if "discard_anchor_and_count" in actions and cat.evidence.kind != "anchor":
            errors.append((f"{at}.actions", "discard_anchor_and_count needs anchor evidence"))
        if cat.replace_with is None and _may_block_mutable(cat, mutable):
            errors.append(
                (
                    f"{at}.replace_with",
                    "required: a block in a mutable context replaces the passage with it",
                )
            )
        if cat.detect.roles and len(cat.detect.roles) > 1:
            owner: dict[str, str] = {}
            for role, terms in cat.detect.roles.items():
                for term in terms:
                    key = term.casefold()
                    if key in owner and owner[key] != role:
                        errors.append(
                            (
                                f"{at}.detect.roles.{role}",
                                f"term {term!r} also gives role {owner[key]}",
                            )
                        )
                    owner[key] = role
    return errors


def _may_block_mutable(cat: Category, mutable: set[str]) -> bool:
    if cat.natures.model == "block" and mutable:
        return True
    if any(cat.actions.contexts.get(ctx) == "block" for ctx in mutable):
        return True
    return cat.actions.default == "block" and any(c not in cat.actions.contexts for c in mutable)


def _path(loc: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in loc)


def _message(msg: str) -> str:
    return msg.removeprefix("Value error, ")


def parse_contract(data: Any, source: str = "contract") -> Contract:
    """Validate a contract document (a parsed JSON or TOML object).

    Raises ``ContractError`` listing every problem with its field path.
    """
    try:
        contract = Contract.model_validate(data)
    except ValidationError as exc:
        raise ContractError(
            [(_path(e["loc"]), _message(e["msg"])) for e in exc.errors()], source
        ) from None
    errors = _rules(contract)
    if errors:
        raise ContractError(errors, source)
    return contract


def read_document(path: Path | str) -> Any:
    """A JSON or TOML file (by its suffix), parsed; a broken file raises ``ContractError``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ContractError([("", f"cannot read: {exc.strerror}")], str(path)) from None
    try:
        if path.suffix.lower() == ".toml":
            return tomllib.loads(raw.decode("utf-8"))
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        kind = path.suffix[1:] or "JSON"
        raise ContractError([("", f"not valid {kind}: {exc}")], str(path)) from None


def load_contract(path: Path | str) -> Contract:
    """Read and validate a contract from a ``.json`` or ``.toml`` file."""
    return parse_contract(read_document(path), str(path))
