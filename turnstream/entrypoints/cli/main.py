"""``turnstream``: every command, from the broker to the analyst's query."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from turnstream.adapters.jsonl import read_lines, validate_lines
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.worker_client import WorkerClient, WorkerError, owner_url, read_query
from turnstream.config import Settings
from turnstream.entrypoints.cli.api_keys import keys_app
from turnstream.entrypoints.cli.common import (
    BrokerOpt,
    ConfigOpt,
    DsnOpt,
    Format,
    FormatOpt,
    err,
    guarded,
    out,
    print_rows,
    print_summary,
    progress_bar,
    settings_from,
)
from turnstream.entrypoints.cli.config import config_app, refuse_to_start_unless_ready
from turnstream.entrypoints.cli.contract import contract_app
from turnstream.entrypoints.cli.exposure import exposure_app
from turnstream.entrypoints.cli.jobs import (
    analysts_sql,
    experiments_app,
    priors_app,
    retention_app,
    scheduler,
)
from turnstream.entrypoints.cli.report import docs_app, report_app
from turnstream.entrypoints.cli.sql_user import sql_user
from turnstream.entrypoints.cli.tools import tools_app

app = typer.Typer(
    help="turnstream: the server side of an agent memory on Kafka, Faust and ClickHouse.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# The development tools (turnstream_dev: the local broker, the sample day, the demo)
# are in a checkout's install (`make`), not in the wheel: their commands only there.
if importlib.util.find_spec("turnstream_dev") is not None:
    from turnstream_dev.infra import infra_app

    app.add_typer(infra_app, name="infra")
app.add_typer(contract_app, name="contract")
app.add_typer(config_app, name="config")
app.add_typer(exposure_app, name="exposure")
app.add_typer(tools_app, name="tools")
app.add_typer(report_app, name="report")
app.add_typer(docs_app, name="docs")
app.add_typer(keys_app, name="keys")
app.add_typer(priors_app, name="priors")
app.add_typer(retention_app, name="retention")
app.add_typer(experiments_app, name="experiments")
app.command()(scheduler)
app.command("sql-user")(sql_user)
app.command("analysts-sql")(analysts_sql)

__all__ = ["app", "main"]


def require_dev_tools() -> None:
    """Exit 2 with a message when the development tools (turnstream_dev) are not
    installed: they come with a checkout (`make`), not with the wheel."""
    if importlib.util.find_spec("turnstream_dev") is None:
        err.print(
            "[red]error:[/red] this command needs the development tools (turnstream_dev):"
            " run it from a checkout (`make`)"
        )
        raise typer.Exit(2)


@app.command()
def worker(
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    broker: BrokerOpt = None,
    loglevel: Annotated[str, typer.Option(help="debug, info, warning or error.")] = "info",
) -> None:
    """Run the stream worker: consume, validate, fan out and write to the store."""
    from turnstream.entrypoints.bootstrap import run_worker

    settings = settings_from(config, dsn, broker)
    refuse_to_start_unless_ready(settings)  # the checks `turnstream config check` prints
    if owner_url(settings):
        err.print(f"[red]error:[/red] another worker owns the store {settings.store.dsn}")
        raise typer.Exit(2)
    logging.basicConfig(
        level=loglevel.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    sys.argv = [sys.argv[0]]  # Faust's worker reads argv; ours are parsed already
    guarded(lambda: run_worker(settings, loglevel))


@app.command()
def publish(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="JSONL, one item a line.")
    ],
    config: ConfigOpt = None,
    broker: BrokerOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate only; no broker.")] = False,
    send_invalid: Annotated[
        bool,
        typer.Option(help="Also send invalid lines as they are, to exercise dead letters."),
    ] = False,
) -> None:
    """Validate a JSONL file and publish it, each item keyed by its profile."""
    settings = settings_from(config, broker=broker)
    total = sum(1 for _ in read_lines(file))
    if dry_run:
        items, bad = validate_lines(read_lines(file))
        for line in bad:
            err.print(f"[red]{line}[/red]")
        out.print(f"{len(items)} valid, {len(bad)} invalid of {total} lines in {file}")
        raise typer.Exit(1 if bad else 0)

    async def _run() -> None:
        with progress_bar("publishing", total) as bar:
            task = bar.add_task("publish", total=total)
            async with Producer(settings) as producer:
                report = await producer.publish_lines(
                    read_lines(file), send_invalid=send_invalid, on_line=lambda: bar.advance(task)
                )
        for line in report.bad:
            err.print(f"[yellow]{line}[/yellow]")
        sent = ", ".join(f"{n} {t}" for t, n in sorted(report.sent.items())) or "nothing"
        out.print(f"sent {sent} to {settings.broker.bootstrap}")
        if report.bad:
            what = "sent as they are" if send_invalid else "not sent"
            out.print(f"{len(report.bad)} invalid lines {what}")
            if not send_invalid:
                raise typer.Exit(1)

    guarded(lambda: asyncio.run(_run()))


@app.command()
def sql(
    query: Annotated[
        str, typer.Argument(help='A read-only query, e.g. "SELECT count() FROM turns".')
    ],
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Run a read-only query (through the running worker when it owns the embedded store)."""
    settings = settings_from(config, dsn)
    result = guarded(lambda: read_query(settings, query))
    print_rows(result.columns, result.rows, fmt)


@app.command()
def summary(config: ConfigOpt = None, dsn: DsnOpt = None, fmt: FormatOpt = Format.table) -> None:
    """Rows per raw table and dead letters by reason."""
    settings = settings_from(config, dsn)
    print_summary(lambda q: read_query(settings, q), fmt)


@app.command()
def migrate(config: ConfigOpt = None, dsn: DsnOpt = None) -> None:
    """Apply the schema migrations (the worker also does it at start-up)."""
    from turnstream.adapters.clickhouse.store import Store
    from turnstream.entrypoints.bootstrap import prepare_store

    settings = settings_from(config, dsn)
    if owner_url(settings):
        out.print("a running worker owns the store and has applied the migrations")
        return

    def _run() -> list[int]:
        store = Store(settings.store.dsn, settings.store.database)
        try:
            return prepare_store(store, settings)
        finally:
            store.close()

    applied = guarded(_run)
    out.print(f"applied migrations {applied}" if applied else "schema is up to date")


#: ``turnstream wait``'s exit code when the worker fails instead of lagging.
EXIT_FAILING = 3


def _worker_status(settings: Settings) -> dict[str, Any] | None:
    """The worker's ``/v1/status``, or None when no worker answers."""
    try:
        return WorkerClient.configured(settings).status()
    except (WorkerError, ValueError):
        return None


def _failing_line(loop: str, record: dict[str, Any]) -> str:
    """One line on a failing loop: since when, the offsets it is stuck on, the error."""
    stuck = ", ".join(f"{s['topic']}:{s['partition']}@{s['offset']}" for s in record["stuck_at"])
    where = f", stuck at {stuck}" if stuck else ""
    return (
        f"the {loop} loop has been failing for {record['failing_seconds']:.0f} s "
        f"(since {record['failing_since']}, {record['failures']} failures{where}): "
        f"{record['last_failure']}: "
        f"{record['last_error'] or '(the error text is shown to an operator key only)'}"
    )


@app.command()
def wait(
    config: ConfigOpt = None,
    broker: BrokerOpt = None,
    timeout: Annotated[float, typer.Option(help="Seconds before giving up.")] = 300.0,
    failing_after: Annotated[
        float,
        typer.Option(help="Exit 3 once the worker's ingest loop has been failing this long."),
    ] = 30.0,
) -> None:
    """Wait until the worker has processed and committed everything published.

    Exit codes: 0 all processed; 1 still behind after --timeout;
    3 the worker's ingest loop has failed for --failing-after seconds;
    2 a bad option or configuration.
    """
    from turnstream.adapters.kafka.admin import wait_until_drained
    from turnstream.adapters.kafka.auth import client_options
    from turnstream.adapters.kafka.topology import topology_of
    from turnstream.errors import WorkerFailing

    settings = settings_from(config, broker=broker)
    ingest = topology_of(settings).ingest

    def failing() -> str | None:
        status = _worker_status(settings)
        record = (status or {}).get(ingest.name)
        if not record or record.get("state") != "retrying":
            return None
        if record["failing_seconds"] < failing_after:
            return None
        return _failing_line(ingest.name, record)

    try:
        asyncio.run(
            wait_until_drained(
                settings.broker.bootstrap,
                ingest.group,
                ingest.reads,
                timeout,
                on_progress=lambda n: (
                    err.print(f"{n} messages to go   ", end="\r") if err.is_terminal else None
                ),
                failing=failing,
                options=client_options(settings),
            )
        )
    except WorkerFailing as exc:
        err.print(f"[red]the worker is failing:[/red] {exc}")
        raise typer.Exit(EXIT_FAILING) from None
    except (TimeoutError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from None
    out.print("all published items are processed")


@app.command()
def sample(
    output: Annotated[Path, typer.Argument(dir_okay=False, help="Where to write the JSONL.")],
    day: Annotated[str | None, typer.Option(help="YYYY-MM-DD (default: yesterday, UTC).")] = None,
    seed: Annotated[int, typer.Option(help="Random seed; the same seed, the same stream.")] = 7,
) -> None:
    """Write the sample stream: a realistic day of a small store, a few invalid items."""
    require_dev_tools()
    from turnstream_dev.sample import sample_day

    when = date.fromisoformat(day) if day else (datetime.now(UTC) - timedelta(days=1)).date()
    lines = guarded(lambda: sample_day(when, seed))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_bytes(b"\n".join(lines) + b"\n")
    out.print(f"wrote {len(lines)} items for {when} to {output}")


@app.command()
def replay(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="JSONL, one item a line.")
    ],
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
) -> None:
    """Run a file through the same core on event time, without a broker, into the store."""
    from turnstream.adapters.clickhouse.store import Store
    from turnstream.entrypoints.bootstrap import build_replay, prepare_store

    settings = settings_from(config, dsn)
    if owner_url(settings):
        err.print("[red]error:[/red] a running worker owns the store; stop it or use --dsn")
        raise typer.Exit(2)
    total = sum(1 for _ in read_lines(file))

    def _run():  # type: ignore[no-untyped-def]
        store = Store(settings.store.dsn, settings.store.database)
        try:
            prepare_store(store, settings)
            with progress_bar("replaying", total) as bar:
                task = bar.add_task("replay", total=total)
                return build_replay(settings, store).run(file, on_line=lambda: bar.advance(task))
        finally:
            store.close()

    report = guarded(_run)
    out.print(
        f"replayed {report.lines} lines from {file}: {report.accepted} accepted, "
        f"{report.dead_letters} dead letters, {report.duplicates} duplicates, "
        f"{report.derivations} derivations, {report.erased} erasures, "
        f"{report.erased_before} forgotten (they occurred before their person's erase)"
    )
    if fit := report.first_fit:
        fields = sum(fit["field_priors"].values())
        again = fit["rederived"].get("changed_people", 0)
        out.print(
            f"first fit of new spaces {', '.join(fit['spaces'])}: {fields} field priors, "
            f"{again} people's inferences changed (jobs.first_fit, docs/signals.md)"
        )


@app.command()
def topology(config: ConfigOpt = None) -> None:
    """The topics, their keys, and which processor reads and writes what."""
    from turnstream.adapters.kafka.topology import topology_of

    settings = settings_from(config)
    sys.stdout.write(topology_of(settings).render())


@app.command()
def status(config: ConfigOpt = None, broker: BrokerOpt = None) -> None:
    """The worker's counters, whether its loops fail (the last error, since when, the
    offsets they are stuck on) and how far behind it is."""
    from turnstream.adapters.kafka.admin import group_lag
    from turnstream.adapters.kafka.auth import client_options
    from turnstream.adapters.kafka.topology import topology_of

    settings = settings_from(config, broker=broker)
    topology = topology_of(settings)
    status = _worker_status(settings)
    if status is None:
        out.print(f"no worker answers at {WorkerClient.configured(settings).url}")
    else:
        out.print_json(data=status)
        for loop in (topology.ingest.name, topology.derivation.name):
            record = status.get(loop) or {}
            if record.get("state") == "retrying":
                err.print(f"[red]{_failing_line(loop, record)}[/red]")
    ingest = topology.ingest
    lag = guarded(
        lambda: asyncio.run(
            group_lag(
                settings.broker.bootstrap, ingest.group, ingest.reads, client_options(settings)
            )
        )
    )
    out.print(f"unprocessed messages: {sum(lag.values())}")


@app.command()
def demo(
    config: ConfigOpt = None,
    home: Annotated[Path, typer.Option(help="Broker data, store and logs (wiped first).")] = Path(
        "var/demo"
    ),
    keep_running: Annotated[bool, typer.Option(help="Leave the broker and worker up.")] = False,
    stop: Annotated[
        bool, typer.Option("--stop", help="Stop what --keep-running left under --home, and exit.")
    ] = False,
) -> None:
    """The main job: broker, worker, the sample day published, a summary, then stop."""
    require_dev_tools()
    from turnstream_dev.demo import run_demo, stop_demo

    if stop:
        stopped = stop_demo(home)
        out.print(f"stopped {' and '.join(stopped)}" if stopped else f"no demo running in {home}")
        return
    settings = settings_from(config)
    guarded(lambda: run_demo(settings, home, keep_running=keep_running))


def main() -> None:
    """Entry point of the ``turnstream`` console script."""
    app()
