"""Options and output shared by the commands; errors become messages and exit codes."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import SecretStr
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from turnstream.adapters.clickhouse.store import QueryResult
from turnstream.adapters.clickhouse.summary import DEAD_LETTERS_SQL, table_counts
from turnstream.config import Settings, load_settings
from turnstream.entrypoints.cli.terminal import visible
from turnstream.errors import TurnstreamError

__all__ = [
    "DEMO_POINTER",
    "BrokerOpt",
    "ConfigOpt",
    "DsnOpt",
    "Format",
    "FormatOpt",
    "err",
    "guarded",
    "out",
    "print_rows",
    "print_summary",
    "progress_bar",
    "settings_from",
]

# Wide enough for the reports when output goes to a file or a pipe (rich assumes 80).
out = Console(soft_wrap=True, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, soft_wrap=True)
T = TypeVar("T")

ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        envvar="TURNSTREAM_CONFIG",
        help="TOML configuration file (default: ./turnstream.toml when present).",
        dir_okay=False,
    ),
]
DsnOpt = Annotated[
    str | None,
    typer.Option(
        "--dsn",
        envvar="TURNSTREAM_DSN",
        help="Store: chdb:///path (embedded, default chdb:var/store) or http(s)://host:8123.",
    ),
]
BrokerOpt = Annotated[
    str | None,
    typer.Option("--broker", envvar="TURNSTREAM_BROKER", metavar="HOST:PORT", help="Kafka broker."),
]


class Format(StrEnum):
    table = "table"
    csv = "csv"
    json = "json"


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]


def guarded(fn: Callable[[], T]) -> T:
    """Run ``fn``; a turnstream error becomes a red message and exit code 2."""
    try:
        return fn()
    except TurnstreamError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None


#: Where ``turnstream demo`` notes the config and store it runs on, while it runs (and
#: after, with ``--keep-running``): ``{"config": ..., "dsn": ...}``.
DEMO_POINTER = Path("var/demo/demo.json")


def _demo_pointer() -> tuple[Path, str, str | None] | None:
    """The running demo's config, DSN and operator key, when the demo left its pointer
    here."""
    try:
        noted = json.loads(DEMO_POINTER.read_text())
        return Path(noted["config"]), str(noted["dsn"]), noted.get("key")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def settings_from(
    config: Path | None, dsn: str | None = None, broker: str | None = None
) -> Settings:
    """Load the settings, with command-line overrides.

    With no configuration at all (no ``--config``, ``--dsn``, ``TURNSTREAM_CONFIG``,
    ``TURNSTREAM_DSN`` nor ``./turnstream.toml``) and a demo running from this
    directory, the demo's config, store and key: ``turnstream sql`` after
    ``turnstream demo --keep-running`` needs no flags.
    """
    unconfigured = config is None and dsn is None and not Path("turnstream.toml").is_file()
    demo = _demo_pointer() if unconfigured else None
    if demo is None:
        return guarded(lambda: load_settings(config, dsn=dsn, broker=broker))
    err.print(f"(the demo's store {demo[1]}, from {DEMO_POINTER}; --config to choose)")
    settings = guarded(lambda: load_settings(demo[0], dsn=demo[1], broker=broker))
    if demo[2] and settings.api_key() is None:
        api = settings.api.model_copy(update={"key": SecretStr(demo[2])})
        settings = settings.model_copy(update={"api": api})
    return settings


def progress_bar(label: str, total: int) -> Progress:
    """A progress bar on stderr, shown for 1,000 lines or more on a terminal."""
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=total < 1000 or not err.is_terminal,
    )


def print_summary(query: Callable[[str], QueryResult], fmt: Format = Format.table) -> None:
    """Print rows per raw table and dead letters by reason, read through ``query``."""
    counts = guarded(lambda: table_counts(query))
    print_rows(["table", "rows"], list(counts.items()), fmt, title="rows per table")
    dead = guarded(lambda: query(DEAD_LETTERS_SQL))
    print_rows(dead.columns, dead.rows, fmt, title="dead letters by reason")


def _cell(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, default=str)
    return "" if value is None else str(value)


def print_rows(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: Format, title: str | None = None
) -> None:
    """Print a result as a table, CSV or JSON (an array of objects). The table shows
    control characters and bidi overrides escaped (``terminal.visible``): stored values
    are producers' data; CSV and JSON keep them exact."""
    if fmt is Format.json:
        data = [dict(zip(columns, row, strict=True)) for row in rows]
        sys.stdout.write(json.dumps(data, default=str, indent=2) + "\n")
    elif fmt is Format.csv:
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(columns)
        writer.writerows([[_cell(v) for v in row] for row in rows])
        sys.stdout.write(buffer.getvalue())
    else:
        # The title is markup (a caller escapes what it takes from data); cells are text.
        table = Table(title=title and visible(title), title_justify="left")
        for column in columns:
            table.add_column(escape(visible(column)))
        for row in rows:
            table.add_row(*(escape(visible(_cell(v))) for v in row))
        out.print(table)
