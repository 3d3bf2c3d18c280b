"""``turnstream contract``: the claim contract's commands (numbers; check and test to come)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, BinaryIO

import typer

from turnstream.cli.common import err

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
