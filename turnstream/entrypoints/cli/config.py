"""``turnstream config check``: what the worker checks at start-up, as a report."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.markup import escape

from turnstream.config import Settings, load_settings
from turnstream.entrypoints.cli.common import BrokerOpt, ConfigOpt, DsnOpt, err, out
from turnstream.entrypoints.preflight import Check, Level, check_settings
from turnstream.errors import ConfigError

__all__ = ["EXIT_WOULD_NOT_START", "config_app", "refuse_to_start_unless_ready"]

config_app = typer.Typer(help="The configuration: check it as the worker would.")

#: ``config check``'s exit code when the worker would not start (2 stays a bad option).
EXIT_WOULD_NOT_START = 1

_STYLE = {Level.warning: "yellow", Level.error: "red"}


def _styled(line: str, level: Level) -> str:
    return f"[{_STYLE[level]}]{escape(line)}[/]" if level in _STYLE else escape(line)


def _count(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def refuse_to_start_unless_ready(settings: Settings, checks: Sequence[Check] | None = None) -> None:
    """The worker's and the scheduler's start-up: warnings printed, any error printed
    and the process stopped (exit code 2, as for any configuration error)."""
    report = check_settings(settings, checks)
    for finding in report.findings:
        if finding.level is not Level.info:
            err.print(_styled(finding.line(), finding.level), highlight=False)
    if not report.would_start():
        raise typer.Exit(2)


@config_app.command("check")
def check(
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    broker: BrokerOpt = None,
    strict: Annotated[
        bool,
        typer.Option(help="Warnings fail too (the shipped placeholder secret, no spaces)."),
    ] = False,
) -> None:
    """Load and check the configuration as `turnstream worker` does at start-up, and
    print what it holds (never the secret).

    Exit codes: 0 the worker would start; 1 it would not (each setting named, with the
    reason), or --strict and a warning; 2 a bad option.
    """
    try:
        settings = load_settings(config, dsn=dsn, broker=broker)
    except ConfigError as exc:
        out.print(_styled(f"error: {exc}", Level.error), highlight=False)
        out.print("the worker would not start")
        raise typer.Exit(EXIT_WOULD_NOT_START) from None
    source = settings.source or "none (built-in defaults and the environment)"
    out.print(escape(f"configuration file: {source}"), highlight=False)
    report = check_settings(settings)
    # One summary in order on stdout, warnings and errors in their places.
    for finding in report.findings:
        out.print(_styled(finding.line(), finding.level), highlight=False)
    errors, warnings = len(report.at(Level.error)), len(report.at(Level.warning))
    if report.would_start(strict):
        tail = f" ({_count(warnings, 'warning')})" if warnings else ""
        out.print(f"the worker would start{tail}")
        return
    why = _count(errors, "error") if errors else f"{_count(warnings, 'warning')} and --strict"
    out.print(f"the worker would not start: {why}")
    raise typer.Exit(EXIT_WOULD_NOT_START)
