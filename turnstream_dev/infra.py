"""`turnstream infra ...`: start, stop and inspect the local single-node Kafka broker."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from turnstream.config import WorkerSettings, load_settings
from turnstream.errors import ConfigError
from turnstream_dev.kafka import KAFKA_VERSION, InfraError, LocalKafka, parse_local_broker

__all__ = ["infra_app"]

infra_app = typer.Typer(
    help="Start, stop and inspect the local single-node Kafka broker (no Docker needed).",
    no_args_is_help=True,
)

_out = Console(soft_wrap=True)  # never break paths across lines
_err = Console(stderr=True, soft_wrap=True)

T = TypeVar("T")

HomeOpt = Annotated[
    Path,
    typer.Option(
        "--home",
        envvar="TURNSTREAM_KAFKA_HOME",
        help="Directory of the broker's config, data, log and pid file.",
        file_okay=False,
    ),
]
BrokerOpt = Annotated[
    str,
    typer.Option(
        "--broker",
        envvar="TURNSTREAM_BROKER",
        metavar="HOST:PORT",
        help="Listen address (127.0.0.1 or localhost only); the controller uses PORT+1.",
    ),
]
DEFAULT_HOME = Path("var/kafka")
DEFAULT_BROKER = "127.0.0.1:9092"


def _guarded(fn: Callable[[], T]) -> T:
    """Run ``fn``; turn an InfraError into a red message and exit code 2."""
    try:
        return fn()
    except InfraError as exc:
        _err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None


def _kafka(
    home: Path,
    broker: str,
    users: tuple[str, ...] = (),
    tls: bool = False,
    producers: tuple[str, ...] = (),
) -> LocalKafka:
    _, port = parse_local_broker(broker)
    return LocalKafka(
        home=home.expanduser().resolve(),
        port=port,
        controller_port=port + 1,
        sasl_users=users,
        tls=tls,
        producers=producers,
    )


def _worker_names(config: Path | None) -> WorkerSettings:
    """The ``[worker]`` of the configuration (``--config``, ``TURNSTREAM_CONFIG`` or
    ``./turnstream.toml``): its topic prefix and app id name what the ACLs grant. The
    ``TURNSTREAM_KAFKA_*`` variables are not read: their password file is made by `up`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURNSTREAM_KAFKA_")}
    try:
        return load_settings(config, environ=env).worker
    except ConfigError as exc:
        raise InfraError(f"the ACLs need the worker's topic prefix and app id: {exc}") from None


def _say(msg: str) -> None:
    _out.print(f"[dim]{escape(msg)}[/dim]")


@infra_app.command()
def up(
    home: HomeOpt = DEFAULT_HOME,
    broker: BrokerOpt = DEFAULT_BROKER,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait for the broker to answer.")
    ] = 60.0,
    user: Annotated[
        list[str] | None,
        typer.Option(
            "--user",
            help="A SASL worker user to create (repeatable): the broker then refuses "
            "clients without credentials. Its password is made once, in HOME/users/NAME "
            "(to change it: edit the file, `down`, `up`).",
        ),
    ] = None,
    sasl: Annotated[
        bool,
        typer.Option(
            "--sasl", help="SASL with the worker user `turnstream` (as --user turnstream)."
        ),
    ] = False,
    producer: Annotated[
        list[str] | None,
        typer.Option(
            "--producer",
            help="A SASL user that may only write the input topics (repeatable); kept on "
            "later `up` calls. Every other user gets the worker's topics and groups.",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            "-c",
            envvar="TURNSTREAM_CONFIG",
            help="The configuration whose worker.topic_prefix and worker.app_id the SASL "
            "broker's ACLs grant (default: ./turnstream.toml when present).",
            dir_okay=False,
        ),
    ] = None,
    tls: Annotated[
        bool,
        typer.Option(
            "--tls",
            help="TLS on the client listener, with a certificate for 127.0.0.1 signed by a "
            "CA made for this broker (HOME/tls/ca.pem; needs openssl).",
        ),
    ] = False,
) -> None:
    """Start the broker (resolving jars and formatting storage on first use); no-op if running.

    With --sasl, --user or --producer, a fresh broker listens with SASL_PLAINTEXT (PLAIN and
    SCRAM-SHA-256/512, both taking the passwords of HOME/users/: SCRAM's written again on
    every `up`, PLAIN's when the broker starts), its controller takes the broker's own user
    alone, and ACLs, rewritten on every `up`, decide what each user may do
    (docs/security.md)."""
    users = tuple(dict.fromkeys([*(user or ()), *(["turnstream"] if sasl else [])]))
    producers = tuple(producer or ())

    def run() -> None:
        kafka = _kafka(home, broker, users, tls, producers)
        if users or producers or kafka.users_dir.is_dir():  # a SASL broker: its ACLs
            kafka.worker = _worker_names(config)
        st = kafka.up(timeout=timeout, progress=_say)
        _out.print(
            f"[green]Kafka {KAFKA_VERSION} listening on {st.bootstrap}[/green] "
            f"(pid {st.pid}, log {escape(str(st.log))})"
        )
        protocol = "SASL_SSL" if tls else "SASL_PLAINTEXT"
        ca = f" TURNSTREAM_KAFKA_CAFILE={escape(str(kafka.ca_path))}" if tls else ""
        if tls and not users:
            _out.print(f"TLS: TURNSTREAM_KAFKA_PROTOCOL=SSL{ca}")
        roles = [(name, "worker") for name in users] + [(n, "producer") for n in producers]
        for name, role in roles:
            _out.print(
                f"SASL user {escape(name)} ({role}): TURNSTREAM_KAFKA_PROTOCOL={protocol} "
                "TURNSTREAM_KAFKA_MECHANISM=PLAIN "
                f"TURNSTREAM_KAFKA_USERNAME={escape(name)} "
                f"TURNSTREAM_KAFKA_PASSWORD_FILE={escape(str(kafka.password_file(name)))}{ca}"
            )

    _guarded(run)


@infra_app.command()
def down(
    home: HomeOpt = DEFAULT_HOME,
    broker: BrokerOpt = DEFAULT_BROKER,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait after SIGTERM before SIGKILL.")
    ] = 30.0,
) -> None:
    """Stop the broker started from HOME (its data is kept)."""

    def run() -> None:
        kafka = _kafka(home, broker)
        pid = kafka.status().pid
        if kafka.down(timeout=timeout):
            _out.print(f"Stopped Kafka (pid {pid}) of {escape(str(kafka.home))}.")
        else:
            _out.print(f"No Kafka running in {escape(str(kafka.home))}; nothing to stop.")

    _guarded(run)


@infra_app.command()
def status(
    home: HomeOpt = DEFAULT_HOME,
    broker: BrokerOpt = DEFAULT_BROKER,
) -> None:
    """Show whether the broker runs and answers; exit code 1 when it is not running."""

    def run() -> bool:
        kafka = _kafka(home, broker)
        st = kafka.status()
        if not st.running:
            _out.print(f"[yellow]Kafka is not running[/yellow] (home {escape(str(st.home))}).")
            return False
        state = "[green]answering[/green]" if st.answering else "[yellow]not answering[/yellow]"
        _out.print(
            f"Kafka {KAFKA_VERSION} running on {st.bootstrap}, {state} "
            f"(pid {st.pid}, log {escape(str(st.log))})"
        )
        return True

    if not _guarded(run):
        raise typer.Exit(1)


@infra_app.command()
def jars() -> None:
    """Resolve the Kafka jars from Maven Central into the cache (done by `up` when missing)."""
    from turnstream_dev.kafka import ensure_jars

    libs = _guarded(lambda: ensure_jars(progress=_say))
    _out.print(f"Kafka {KAFKA_VERSION} jars ready in {escape(str(libs))}")
