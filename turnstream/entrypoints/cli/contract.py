"""``turnstream contract``: the claim contract's commands (numbers, check, test).

None needs a broker, a store or a configuration file."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import typer

from turnstream.entrypoints.cli.common import err, out

__all__ = ["contract_app"]

contract_app = typer.Typer(
    help="The claim contract: read the numbers of outputs, check turns, test a contract.",
    no_args_is_help=True,
)


class Lang(StrEnum):
    """The languages the reader reads."""

    pt = "pt"
    en = "en"
    es = "es"


class BadLine(ValueError):
    """A line of the input that is not a JSON object with a text (and a known lang)."""


def annotate(line: bytes, default_lang: str) -> str:
    """One input line with its ``mentions`` added, as a JSON line (no newline)."""
    from turnstream.sdk.claims.numbers import LANGUAGES, read_numbers

    try:
        item: Any = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadLine(f"not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise BadLine(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(item, dict):
        raise BadLine("not a JSON object")
    text = item.get("text")
    if not isinstance(text, str):
        raise BadLine("no text string")
    lang = item.get("lang") or default_lang
    if lang not in LANGUAGES:
        raise BadLine(f"lang must be pt, en or es (got {lang!r})")
    item["mentions"] = [m.as_json() for m in read_numbers(text, lang)]
    return json.dumps(item, ensure_ascii=False)


def _stream(source: BinaryIO, lang: str) -> None:
    out = sys.stdout
    for number, line in enumerate(source, start=1):
        if number == 1:
            line = line.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
        if not line.strip():
            continue
        try:
            out.write(annotate(line, lang) + "\n")
        except BadLine as exc:
            out.flush()
            err.print(f"[red]error:[/red] line {number}: {exc}")
            raise typer.Exit(2) from None
        out.flush()  # a line out for each line in: a pipe sees answers as they come


@contract_app.command("numbers")
def numbers(
    file: Annotated[
        str,
        typer.Argument(help="JSON lines with a `text` field (and an optional `lang`); - is stdin."),
    ] = "-",
    lang: Annotated[
        Lang, typer.Option("--lang", help="The language of lines without their own `lang`.")
    ] = ...,  # type: ignore[assignment]
) -> None:
    """Read every number of each line's text; write each line back with its `mentions`."""
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")
    if file == "-":
        _stream(sys.stdin.buffer, lang.value)
        return
    path = Path(file)
    if not path.is_file():
        err.print(f"[red]error:[/red] no such file: {file}")
        raise typer.Exit(2)
    with path.open("rb") as source:
        _stream(source, lang.value)


ContractOpt = Annotated[
    Path, typer.Option("--contract", help="The contract document (JSON, or TOML by suffix).")
]


def _fail_to_run(exc: Exception) -> typer.Exit:
    from turnstream.sdk.claims.contract import ContractError

    if isinstance(exc, ContractError):
        for path, msg in exc.errors:
            err.print(f"[red]error:[/red] {exc.source}: {path or '<document>'}: {msg}")
    else:
        err.print(f"[red]error:[/red] {exc}")
    return typer.Exit(2)


@contract_app.command("check")
def check(
    contract: ContractOpt,
    turn: Annotated[Path, typer.Option("--turn", help="A turn to check (JSON, docs/contract.md).")],
    context: Annotated[
        str | None, typer.Option("--context", help="The output's context (default: the turn's).")
    ] = None,
    immutable: Annotated[
        bool, typer.Option("--immutable", help="The output is immutable (default: the turn's).")
    ] = False,
) -> None:
    """Print the turn's claims (as they go in the turn record) and the guarded text."""
    from turnstream.sdk.claims import Claims, ContractError, load_contract
    from turnstream.sdk.claims.examples import load_turn

    try:
        doc = load_contract(contract)
        item = load_turn(turn)
    except ContractError as exc:
        raise _fail_to_run(exc) from None
    guarded = Claims(doc, agent=item.agent).guard_text(
        item.output,
        context=context or item.context,
        immutable=immutable or item.immutable,
        evidence=item.evidence(),
        language=item.language,
        now=item.now,
    )
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(encoding="utf-8")
    result = {
        "contract_version": doc.version,
        "claims": guarded.wire_claims(),
        "text": guarded.text,
        "guard_acted": guarded.guard_acted,
        "guard_budget_exceeded": guarded.guard_budget_exceeded,
        "held_for_review": guarded.held_for_review,
    }
    sys.stdout.write(json.dumps(result, ensure_ascii=False, indent=2) + "\n")


@contract_app.command("test")
def test(
    contract: ContractOpt,
    examples: Annotated[
        Path, typer.Option("--examples", help="Example turns with the claims they expect (JSON).")
    ],
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus", help="The negative corpus (shaped as negative_corpus).", dir_okay=False
        ),
    ] = None,
) -> None:
    """Test a contract: no corpus phrase may claim; every example gives what it expects.

    Exit 0 when everything holds, 1 when something does not (each failure listed), 2 when
    the test could not run (a bad file: the field is named).
    """
    from turnstream.sdk.claims import ContractError, load_contract
    from turnstream.sdk.claims.examples import (
        claims_factory,
        load_corpus,
        load_examples,
        run_corpus,
        run_examples,
    )

    try:
        doc = load_contract(contract)
        cases = load_examples(examples)
        phrases = doc.negative_corpus.phrases if doc.negative_corpus else []
        if corpus is not None:
            given = load_corpus(corpus)
            if doc.negative_corpus and given.version != doc.negative_corpus.version:
                err.print(
                    f"[yellow]warning:[/yellow] {corpus} is corpus {given.version}; "
                    f"the contract names {doc.negative_corpus.version}"
                )
            phrases = given.phrases
        if doc.categories and not phrases:
            raise ContractError(
                [("negative_corpus.phrases", "no phrases to test: give them, or --corpus FILE")],
                str(contract),
            )
    except ContractError as exc:
        raise _fail_to_run(exc) from None
    make = claims_factory(doc)
    failures = [*run_corpus(doc, phrases, make), *run_examples(cases, make)]
    for failure in failures:
        out.print(f"FAIL {failure}", markup=False, highlight=False)
    checked = (
        f"{len(phrases)} corpus phrases x {len(doc.languages)} languages, {len(cases)} examples"
    )
    if failures:
        out.print(f"{len(failures)} failures ({checked}): contract {doc.version} does not hold")
        raise typer.Exit(1)
    out.print(f"contract {doc.version} holds ({checked})")
