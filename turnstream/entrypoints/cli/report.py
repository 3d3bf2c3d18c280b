"""``turnstream report ...`` and ``turnstream docs ...``: what analysts read."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer

from turnstream.adapters.clickhouse.context_use import ReportQuery
from turnstream.adapters.clickhouse.store import QueryResult
from turnstream.adapters.worker_client import WorkerClient, owner_url, read_query
from turnstream.config import Feature
from turnstream.entrypoints.cli.common import (
    ConfigOpt,
    DsnOpt,
    Format,
    FormatOpt,
    err,
    guarded,
    out,
    print_rows,
    settings_from,
)

__all__ = ["docs_app", "print_context_use", "report_app"]

report_app = typer.Typer(help="Reports for analysts.", no_args_is_help=True)
docs_app = typer.Typer(help="Documentation generated from the live schema.", no_args_is_help=True)


@report_app.command("context-use")
def context_use(
    space: Annotated[str | None, typer.Option(help="Only this space.")] = None,
    since: Annotated[str | None, typer.Option(help="From this day on (YYYY-MM-DD).")] = None,
    by: Annotated[str, typer.Option(help="Breakdown: some of space_id,source,agent.")] = (
        "source,agent"
    ),
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Claims on evidence, guard actions and constraints sent/verifiable/violated."""
    settings = settings_from(config, dsn)
    try:
        query = ReportQuery(
            space=space,
            since=date.fromisoformat(since) if since else None,
            by=tuple(d.strip() for d in by.split(",") if d.strip()),
        )
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    if space is not None:
        conf = settings.space(space)
        if conf is None:
            err.print(f"[yellow]space {space!r} is not in the configuration[/yellow]")
        elif not conf.has(Feature.claims):
            err.print(
                f"[yellow]the claims feature is off for space {space!r}: its turns' claims "
                "are not rolled up (constraint measurements still are)[/yellow]"
            )
    url = owner_url(settings)
    if url is not None:  # a worker owns the store: its API, which a space's own key may read
        report = guarded(
            lambda: WorkerClient(url, settings.api_key()).context_use(
                space, since, ",".join(query.by)
            )
        )
        found = print_sections({k: report.get(k) or [] for k in SECTIONS}, fmt)
    else:
        found = print_context_use(lambda sql, params: read_query(settings, sql, params), query, fmt)
    if not found:
        where = f" for space {space!r}" if space else ""
        when = f" since {since}" if since else ""
        out.print(f"no context-use data{where}{when}")


#: The report's sections: the keys of ``GET /v1/context-use`` (and of ``--format json``),
#: with the titles of the table and CSV forms.
SECTIONS = {
    "claims": "claims",
    "claims_by_verdict": "claims by category and verdict",
    "turns": "turns and the claims guard",
    "constraints": "constraints: sent, verifiable, violated",
}


def print_sections(sections: dict[str, list[dict[str, Any]]], fmt: Format = Format.table) -> bool:
    """Print the report's sections (rows of objects, keyed as the API keys them); False
    when there is no data. JSON keeps the API's keys; tables and CSV take the titles."""
    if not any(sections.values()):
        return False
    if fmt is Format.json:
        sys.stdout.write(json.dumps(sections, default=str, indent=2) + "\n")
        return True
    for name, rows in sections.items():
        title = SECTIONS.get(name, name)
        if fmt is Format.csv:
            sys.stdout.write(f"# {title}\n")
        if not rows:
            if fmt is not Format.csv:
                out.print(f"{title}: none")
            continue
        columns = list(rows[0])
        print_rows(columns, [tuple(r[c] for c in columns) for r in rows], fmt, title=title)
    return True


def print_context_use(
    run: Callable[[str, dict[str, Any]], QueryResult],
    query: ReportQuery,
    fmt: Format = Format.table,
    verdicts: bool = True,
) -> bool:
    """Print the context-use report through ``run(sql, parameters)``; False when there is
    no data."""
    sql_of = {
        "claims": query.claims(),
        "claims_by_verdict": query.verdicts() if verdicts else None,
        "turns": query.turns(),
        "constraints": query.constraints(),
    }
    params = query.parameters()
    sections: dict[str, list[dict[str, Any]]] = {}
    for name, sql in sql_of.items():
        if sql is None:
            continue
        result = guarded(lambda sql=sql: run(sql, params))
        sections[name] = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    return print_sections(sections, fmt)


#: Every object of the database, for the tables page's internal objects.
_OBJECTS = (
    "SELECT name, engine, create_table_query, dependencies_table FROM system.tables "
    "WHERE database = currentDatabase() ORDER BY name"
)


@docs_app.command("tables")
def tables(
    output: Annotated[Path, typer.Option(help="Where to write the page.")] = Path("docs/tables.md"),
    check: Annotated[bool, typer.Option(help="Exit 1 if the page is out of date.")] = False,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
) -> None:
    """Write the page of tables and views, types read from the live schema.

    Without --dsn the schema is built by the migrations in a throw-away embedded store.
    """
    from turnstream.adapters.clickhouse.catalog import render_markdown

    if dsn is None:
        from turnstream.adapters.clickhouse.schema import apply_migrations
        from turnstream.adapters.clickhouse.store import Store

        scratch = tempfile.mkdtemp(prefix="turnstream-schema-")
        store = guarded(lambda: Store(f"chdb://{scratch}", "turnstream"))
        guarded(lambda: apply_migrations(store))

        def describe(name: str) -> list[tuple[str, str]]:
            return [(r[0], r[1]) for r in store.query(f"DESCRIBE TABLE {name}").rows]

        def objects() -> list[tuple[str, str, str, list[str]]]:
            return [tuple(r) for r in store.query(_OBJECTS).rows]  # type: ignore[misc]

    else:
        settings = settings_from(config, dsn)

        def describe(name: str) -> list[tuple[str, str]]:
            return [(r[0], r[1]) for r in read_query(settings, f"DESCRIBE TABLE {name}").rows]

        def objects() -> list[tuple[str, str, str, list[str]]]:
            return [tuple(r) for r in read_query(settings, _OBJECTS).rows]  # type: ignore[misc]

    try:
        page = guarded(lambda: render_markdown(describe, objects))
    finally:
        if dsn is None:
            store.close()
            shutil.rmtree(scratch, ignore_errors=True)
    if check:
        current = output.read_text() if output.exists() else ""
        if current != page:
            err.print(f"[red]{output} is out of date: run turnstream docs tables[/red]")
            raise typer.Exit(1)
        out.print(f"{output} is up to date")
        return
    output.write_text(page)
    out.print(f"wrote {output}")


@docs_app.command("openapi")
def openapi(
    output: Annotated[Path, typer.Option(help="Where to write it.")] = Path("docs/openapi.json"),
    check: Annotated[bool, typer.Option(help="Exit 1 if the file is out of date.")] = False,
) -> None:
    """Write the OpenAPI document of the worker's HTTP API."""
    from turnstream.entrypoints.http.openapi import openapi_json

    text = openapi_json()
    if check:
        if not output.exists() or output.read_text() != text:
            err.print(f"[red]{output} is out of date: run turnstream docs openapi[/red]")
            raise typer.Exit(1)
        out.print(f"{output} is up to date")
        return
    output.write_text(text)
    out.print(f"wrote {output}")
