"""The main job: a local broker, a worker on the embedded store, the sample day
published, waited for, summed up, and everything stopped again."""

from __future__ import annotations

import asyncio
import json
import shlex
import shutil
import signal
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from rich.markup import escape

from turnstream.cli.common import Format, err, out, print_rows, print_summary
from turnstream.cli.report import print_context_use
from turnstream.config import Feature, Settings
from turnstream.dev.kafka import LocalKafka, parse_local_broker
from turnstream.dev.sample import sample_day
from turnstream.dev.worker_process import WorkerProcess
from turnstream.errors import ConfigError
from turnstream.jsonl import read_lines
from turnstream.producer import Producer
from turnstream.sinks.context_use import ReportQuery
from turnstream.streams.admin import wait_until_drained
from turnstream.streams.topology import topology_of
from turnstream.worker_client import WorkerClient, read_query

__all__ = ["run_demo"]

INFERENCES_SQL = (
    "SELECT space_id, kind, countIf(status = 'active') AS active, "
    "countIf(status = 'deleted') AS deleted, countIf(status = 'retracted') AS retracted, "
    "round(avgIf(weight, status = 'active'), 3) AS avg_weight "
    "FROM inferences FINAL GROUP BY space_id, kind ORDER BY space_id, kind"
)
#: The person of a space with the most active inferences: whose block the demo shows.
BUSIEST_SQL = (
    "SELECT profile_id, count() AS n FROM inferences FINAL "
    "WHERE space_id = {space_id:String} AND status = 'active' AND `for` = 'self' "
    "GROUP BY profile_id ORDER BY n DESC, profile_id LIMIT 1"
)
#: The verdicts the SDK's checker gave the sample's agents, per space (context use).
VERDICTS_SQL = ReportQuery(by=("space_id",)).verdicts()
#: Outcomes by what their exposure token was worth: only a valid one attributes.
TOKENS_SQL = (
    "SELECT space_id, token_status, count() AS outcomes, countIf(exposure_id != '') AS attributed "
    "FROM outcomes GROUP BY space_id, token_status ORDER BY space_id, token_status"
)
EXPOSURES_SQL = (
    "SELECT space_id, count() AS people_and_objects, sum(exposures) AS exposures, "
    "round(sum(effective_exposure), 2) AS effective_exposure "
    "FROM effective_exposure GROUP BY space_id ORDER BY space_id"
)


def _progress(remaining: int) -> None:
    if err.is_terminal:
        err.print(f"    {remaining} messages to go   ", end="\r")


def _step(text: str) -> None:
    out.print(f"[bold cyan]==>[/bold cyan] {text}")


def run_demo(settings: Settings, home: Path, keep_running: bool = False) -> None:
    """Run the whole path end to end on the embedded store under ``home`` (wiped first)."""
    if settings.source is None:
        raise ConfigError(
            "the demo needs a config file with spaces: --config examples/turnstream.toml"
        )
    home = home.resolve()
    _, port = parse_local_broker(settings.broker.bootstrap)
    kafka = LocalKafka(home=home / "kafka", port=port, controller_port=port + 1)
    if kafka.status().running:
        kafka.down()
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    dsn = f"chdb://{home / 'store'}"
    demo_settings = settings.model_copy(
        update={"store": settings.store.model_copy(update={"dsn": dsn})}
    )
    worker = WorkerProcess(
        config=settings.source,
        log_path=home / "worker.log",
        web_port=settings.worker.web_port,
        dsn=dsn,
        broker=settings.broker.bootstrap,
    )
    # `turnstream sql` (and the other store commands) run here without flags find the
    # demo's store through this note, while the demo runs and after --keep-running.
    pointer = home / "demo.json"
    pointer.write_text(json.dumps({"config": str(settings.source), "dsn": dsn}))
    started = time.monotonic()
    # Stop the children on SIGTERM too, not only on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        _step(f"starting Kafka on {settings.broker.bootstrap} (data in {kafka.home})")
        kafka.up(timeout=120, progress=lambda m: out.print(f"    {m}"))
        _step(f"starting the worker on {dsn} (log {worker.log_path})")
        worker.start()
        day = (datetime.now(UTC) - timedelta(days=1)).date()
        sample = home / "sample.jsonl"
        lines = sample_day(day, seed=7)
        sample.write_bytes(b"\n".join(lines) + b"\n")
        _step(f"publishing the sample day {day}: {len(lines)} items from {sample}")
        report = asyncio.run(_publish(settings, sample))
        sent = ", ".join(f"{n} {t}" for t, n in sorted(report.sent.items()))
        out.print(f"    sent {sent}, and {report.sent_invalid} invalid lines as they are")
        _step("waiting until the worker has processed everything")
        topology = topology_of(settings)
        asyncio.run(
            wait_until_drained(
                settings.broker.bootstrap,
                topology.ingest.group,
                topology.ingest.reads,
                timeout=300,
                on_progress=_progress,
                alive=worker.alive,
            )
        )
        _step(
            f"waiting for the signals: sessions fire after {settings.signals.quiet_seconds:g}s "
            "of quiet"
        )
        asyncio.run(
            wait_until_drained(
                settings.broker.bootstrap,
                topology.derivation.group,
                topology.derivation.reads,
                timeout=settings.signals.oldest_pending_seconds + 300,
                on_progress=_progress,
                alive=worker.alive,
            )
        )
        _step(f"what landed in the store (after {time.monotonic() - started:.1f}s)")
        print_summary(lambda q: read_query(demo_settings, q), Format.table)
        _step("context use: what agents claimed on evidence, constraints sent/verifiable/violated")
        print_context_use(
            lambda q, params: read_query(demo_settings, q, params),
            ReportQuery(by=("space_id", "agent")),
            verdicts=False,
        )
        _step("claims by category and the verdict the SDK's checker gave (per space)")
        result = read_query(demo_settings, VERDICTS_SQL, ReportQuery(by=("space_id",)).parameters())
        print_rows(result.columns, result.rows, Format.table)
        _step("outcomes by exposure token: signed by the SDK, verified by the worker")
        result = read_query(demo_settings, TOKENS_SQL)
        print_rows(result.columns, result.rows, Format.table)
        _step("signals: inferences by space and kind, and exposures")
        for sql in (INFERENCES_SQL, EXPOSURES_SQL):
            result = read_query(demo_settings, sql)
            print_rows(result.columns, result.rows, Format.table)
        _show_block(demo_settings)
        query = "SELECT kind, attr, value, confidence FROM inferences FINAL LIMIT 10"
        _step("query the store it used:")
        out.print(f"    turnstream sql --config {settings.source} --dsn {dsn} {shlex.quote(query)}")
    finally:
        if keep_running:
            _step(
                f"left running: worker (web :{settings.worker.web_port}), Kafka {kafka.bootstrap}; "
                f"`turnstream sql` run from here reaches its store without flags ({pointer})"
            )
        else:
            _step("stopping the worker and Kafka")
            worker.stop()
            kafka.down()
            pointer.unlink(missing_ok=True)


def _show_block(settings: Settings) -> None:
    """The constraints block of the person with the most inferences, as the agent gets it."""
    # The first space with signals on (the sample's clothing store, in Portuguese).
    space_id = next((s for s, c in settings.spaces.items() if c.has(Feature.signals)), None)
    found = read_query(settings, BUSIEST_SQL, {"space_id": space_id}).rows if space_id else []
    if space_id is None or not found:
        _step("no inferences yet: no block to show")
        return
    profile_id, count = found[0]
    space = settings.spaces[space_id]
    language = space.language
    body = {"space_id": space_id, "profile_id": profile_id, "asked": ["size"]}
    block = WorkerClient.configured(settings).constraints(body)
    _step(
        f"the block of {profile_id} in {space_id} ({count} inferences), as POST /v1/constraints "
        f"gives it with asked=\\[size]: its text, in {language}"
    )
    for line in (block.get("text") or "(nothing to say)").split("\n"):
        out.print(f"    {escape(line)}")
    sections = ("hard", "soft", "attributes", "conflicts")
    out.print("    " + ", ".join(f"{len(block.get(k, []))} {k}" for k in sections))


async def _publish(settings: Settings, path: Path):  # type: ignore[no-untyped-def]
    async with Producer(settings) as producer:
        return await producer.publish_lines(read_lines(path), send_invalid=True)
