"""The contract test: the negative corpus never triggers, and example turns give what they expect.

- every phrase of the corpus, read in every language of the contract and for every agent,
  must yield no claim (``agent=None`` is every agent: each category applies to it);
- every example turn must give exactly the claims it expects, in output order: the same
  number of claims, and each with the expected category, verdict and action (the action the
  contract calls for, as ``check`` names it: no budget can make an example flaky).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from turnstream.sdk.claims.check import Claims, NumberReader
from turnstream.sdk.claims.contract import (
    Contract,
    ContractError,
    NegativeCorpus,
    read_document,
)
from turnstream.sdk.claims.evidence import TurnToCheck
from turnstream.sdk.claims.records import ClaimRecord, RecordAction, Verdict

__all__ = [
    "Example",
    "Expected",
    "load_corpus",
    "load_examples",
    "load_turn",
    "run_corpus",
    "run_examples",
    "run_turn",
]


class Expected(BaseModel):
    """One claim an example expects."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    category: Annotated[str, StringConstraints(min_length=1)]
    verdict: Verdict
    action: RecordAction


class Example(BaseModel):
    """A named turn and every claim it must give."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    turn: TurnToCheck
    expect: list[Expected] = Field(default_factory=list)


_EXAMPLES = TypeAdapter(list[Example])
T = TypeVar("T")


def _errors(exc: ValidationError) -> list[tuple[str, str]]:
    return [
        (".".join(str(p) for p in e["loc"]), e["msg"].removeprefix("Value error, "))
        for e in exc.errors()
    ]


def _load(path: Path | str, validate: Callable[[object], T]) -> T:
    data = read_document(path)
    try:
        return validate(data)
    except ValidationError as exc:
        raise ContractError(_errors(exc), str(path)) from None


def load_examples(path: Path | str) -> list[Example]:
    """The examples file (a JSON list); ``ContractError`` names the field path of a problem."""
    return _load(path, _EXAMPLES.validate_python)


def load_turn(path: Path | str) -> TurnToCheck:
    """A turn to check (``--turn FILE.json``)."""
    return _load(path, TurnToCheck.model_validate)


def load_corpus(path: Path | str) -> NegativeCorpus:
    """A corpus file, shaped as the contract's ``negative_corpus``."""
    return _load(path, NegativeCorpus.model_validate)


ClaimsFor = Callable[[str | None], Claims]


def claims_factory(contract: Contract, reader: NumberReader | None = None) -> ClaimsFor:
    """``Claims`` per agent, built once each."""
    cache: dict[str | None, Claims] = {}

    def make(agent: str | None) -> Claims:
        if agent not in cache:
            cache[agent] = Claims(contract, agent=agent, reader=reader)
        return cache[agent]

    return make


def run_turn(claims: Claims, turn: TurnToCheck) -> list[ClaimRecord]:
    """The claims of a turn, as ``check`` gives them (verdicts and the actions they call for)."""
    return claims.check(
        turn.output,
        context=turn.context,
        immutable=turn.immutable,
        evidence=turn.evidence(),
        language=turn.language,
        now=turn.now,
    )


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing that does not hold."""

    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def run_corpus(contract: Contract, phrases: list[str], make: ClaimsFor) -> list[Failure]:
    """Each phrase that yields a claim, per language."""
    failures: list[Failure] = []
    claims = make(None)  # every agent: with no agent named, every category applies
    for i, phrase in enumerate(phrases):
        for lang in contract.languages:
            for r in claims.check(phrase, language=lang):
                quoted = phrase[r.span[0] : r.span[1]] if r.category != "internal_text" else "…"
                failures.append(
                    Failure(
                        f"corpus phrase {i + 1} ({lang})",
                        f"{r.category} claims {quoted!r} in {phrase!r}",
                    )
                )
    return failures


def _show(records: list[tuple[str, str, str]]) -> str:
    return ", ".join("/".join(r) for r in records) or "no claim"


def run_examples(examples: list[Example], make: ClaimsFor) -> list[Failure]:
    """Each example whose claims differ from what it expects."""
    failures: list[Failure] = []
    for i, ex in enumerate(examples):
        got = [(r.category, r.verdict, r.action) for r in run_turn(make(ex.turn.agent), ex.turn)]
        want = [(e.category, e.verdict, e.action) for e in ex.expect]
        if got != want:
            failures.append(
                Failure(f"example {i + 1} ({ex.name})", f"expected {_show(want)}; got {_show(got)}")
            )
    return failures
