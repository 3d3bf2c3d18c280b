"""The main job: a local broker, a worker on the embedded store, the sample day
published, waited for, summed up, and everything stopped again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import signal
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from rich.markup import escape

from turnstream.adapters.clickhouse.context_use import ReportQuery
from turnstream.adapters.jsonl import read_lines
from turnstream.adapters.kafka.admin import wait_until_drained
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.kafka.topology import topology_of
from turnstream.adapters.processes import pid_alive
from turnstream.adapters.worker_client import WorkerClient, owner_url, read_query
from turnstream.config import Feature, Settings
from turnstream.core.access import ALL_SPACES, Role
from turnstream.core.derivation.field_prior import FIT_FLOOR
from turnstream.core.derivation.first_fit import QUIET_SECONDS
from turnstream.entrypoints.cli.api_keys import create_key
from turnstream.entrypoints.cli.common import Format, err, out, print_rows, print_summary
from turnstream.entrypoints.cli.report import print_context_use
from turnstream.errors import ConfigError
from turnstream_dev.kafka import LocalKafka, parse_local_broker
from turnstream_dev.sample import sample_day
from turnstream_dev.worker_process import WorkerProcess

__all__ = ["run_demo", "stop_demo"]

#: The space and roles of the key the demo hands out (printed with how to use it).
DEMO_SPACE = "acme"
DEMO_ROLES = frozenset({Role.agent, Role.analyst, Role.security})

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
#: The spaces due a first fit (10 people derived or more; a fresh store) and those done.
FIT_DUE_SQL = (
    "SELECT space_id FROM signal_state GROUP BY space_id "
    "HAVING uniqExact(profile_id) >= {floor:UInt32} ORDER BY space_id"
)
FIRST_FITS_SQL = (
    "SELECT r.space_id, sum(r.people) AS people_derived_again, sum(r.changed) AS changed, "
    "any(f.fields) AS field_priors FROM rederived AS r LEFT JOIN (SELECT space_id, "
    "count() AS fields FROM field_priors_latest GROUP BY space_id) AS f USING (space_id) "
    "GROUP BY r.space_id ORDER BY r.space_id"
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
    # A demo left running here owns the store about to be wiped: stop it first.
    for stopped in stop_demo(home):
        _step(f"stopped the demo left running here: {stopped}")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    dsn = f"chdb://{home / 'store'}"
    demo_settings = settings.model_copy(
        update={"store": settings.store.model_copy(update={"dsn": dsn})}
    )
    # Two keys in the store's keys file: the demo's own (every space: the summary reads
    # every table through /v1/sql), and the one it prints, for one space.
    operator_key = create_key(demo_settings, ALL_SPACES, frozenset(Role), "demo: the summary")
    demo_settings = demo_settings.model_copy(
        update={"api": demo_settings.api.model_copy(update={"key": SecretStr(operator_key)})}
    )
    demo_key = create_key(demo_settings, DEMO_SPACE, DEMO_ROLES, "demo: printed")
    worker = WorkerProcess(
        config=settings.source,
        log_path=home / "worker.log",
        web_port=settings.worker.web_port,
        dsn=dsn,
        broker=settings.broker.bootstrap,
    )
    # `turnstream sql` (and the other store commands) run here without flags find the
    # demo's store through this note, while the demo runs and after --keep-running.
    # It holds the demo's operator key (the store's own keys file holds only hashes), so
    # the commands that reach the running worker can authenticate: readable by you only.
    pointer = home / "demo.json"
    pointer.touch(mode=0o600)
    pointer.write_text(
        json.dumps({"config": str(settings.source), "dsn": dsn, "key": operator_key})
    )
    started = time.monotonic()
    # Stop the children on SIGTERM too, not only on Ctrl-C.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        _step(f"starting Kafka on {settings.broker.bootstrap} (data in {kafka.home})")
        kafka.up(timeout=120, progress=lambda m: out.print(f"    {m}"))
        _step(f"starting the worker on {dsn} (log {worker.log_path})")
        worker.start()
        _note_worker(pointer, worker.pid)
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
                options=client_options(settings),
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
                options=client_options(settings),
            )
        )
        if settings.jobs.first_fit:
            _wait_first_fits(demo_settings)
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
        shown = _show_block(demo_settings)
        query = "SELECT kind, attr, value, confidence FROM inferences FINAL LIMIT 10"
        _step("query the store it used:")
        command = f"turnstream sql --config {settings.source} --dsn {dsn} {shlex.quote(query)}"
        # While the worker runs, the command goes through its /v1/sql: it needs a key.
        prefix = f"TURNSTREAM_API_KEY={operator_key} " if keep_running else ""
        out.print(f"    {prefix}{command}")
        _call_the_api(demo_settings, demo_key, day.isoformat(), keep_running, shown)
    finally:
        if keep_running:
            _step(
                f"left running: worker (web :{settings.worker.web_port}), Kafka {kafka.bootstrap}; "
                f"`turnstream sql` run from here reaches its store without flags ({pointer}); "
                f"stop both with `turnstream demo --stop`"
            )
        else:
            _step("stopping the worker and Kafka")
            worker.stop()
            kafka.down()
            pointer.unlink(missing_ok=True)


def _wait_first_fits(settings: Settings, timeout: float = 180.0) -> None:
    """Wait for the worker's first fits of the new spaces (``jobs.first_fit``: the
    spaces with 10 people derived fitted, none running, none since the quiet refit's
    wait), then print what they did."""
    _step("first fit: a new space's priors once 10 of its people are derived (no night to wait)")
    floor = {"floor": FIT_FLOOR}
    due = {s for (s,) in read_query(settings, FIT_DUE_SQL, floor).rows}
    client = WorkerClient(owner_url(settings) or "", settings.api_key())
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    settled_since = time.monotonic()
    while True:
        fits = client.status().get("first_fits", {})
        if fits != last:
            last, settled_since = fits, time.monotonic()
        quiet = time.monotonic() - settled_since > QUIET_SECONDS + 2
        if due <= set(fits.get("spaces", [])) and not fits.get("running") and quiet:
            break
        if time.monotonic() > deadline:
            err.print(f"    the first fit of {', '.join(sorted(due))} did not end in {timeout:g}s")
            return
        time.sleep(0.5)
    result = read_query(settings, FIRST_FITS_SQL)
    print_rows(result.columns, result.rows, Format.table)
    out.print("    (a field's prior needs 10 people with 8 engaged objects on it: docs/signals.md)")


def _note_worker(pointer: Path, pid: int | None) -> None:
    """Add the worker's process id to the demo's note, for ``turnstream demo --stop``."""
    noted = json.loads(pointer.read_text())
    pointer.write_text(json.dumps({**noted, "worker_pid": pid}))


def _is_worker(pid: int) -> bool:
    """Whether ``pid`` is alive and still a turnstream worker (not a reused id)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return pid_alive(pid) and b"turnstream" in argv and b"worker" in argv


def stop_demo(home: Path, timeout: float = 60.0) -> list[str]:
    """Stop what a ``turnstream demo --keep-running`` left under ``home`` (its worker,
    then its broker) and remove its note; what was stopped, in words."""
    home = home.resolve()
    pointer = home / "demo.json"
    stopped: list[str] = []
    try:
        pid = json.loads(pointer.read_text()).get("worker_pid")
    except (OSError, ValueError, AttributeError):
        pid = None
    if isinstance(pid, int) and _is_worker(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)  # started in its own session: pgid == pid
        deadline = time.monotonic() + timeout
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
        stopped.append(f"worker (pid {pid})")
    if LocalKafka(home=home / "kafka").down():
        stopped.append("Kafka")
    pointer.unlink(missing_ok=True)
    return stopped


def _show_block(settings: Settings) -> tuple[str, str] | None:
    """The constraints block of the person with the most inferences, as the agent gets it;
    returns whose block it showed (space, profile id)."""
    # The first space with signals on (the sample's clothing store, in Portuguese).
    space_id = next((s for s, c in settings.spaces.items() if c.has(Feature.signals)), None)
    found = read_query(settings, BUSIEST_SQL, {"space_id": space_id}).rows if space_id else []
    if space_id is None or not found:
        _step("no inferences yet: no block to show")
        return None
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
    return space_id, profile_id


def _call_the_api(
    settings: Settings, key: str, since: str, keep_running: bool, shown: tuple[str, str] | None
) -> None:
    """Call ``/v1/context-use`` with the demo's key, and print how to call the API: its
    ``curl`` lines ask for the person whose block the demo showed, when in the key's space."""
    url = f"http://{settings.worker.web_host}:{settings.worker.web_port}"
    roles = ", ".join(sorted(r.value for r in DEMO_ROLES))
    _step(f"the API with the demo's key (space {DEMO_SPACE}; roles {roles})")
    request = urllib.request.Request(
        f"{url}/v1/context-use?since={since}", headers={"Authorization": f"Bearer {key}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = json.loads(response.read())
    out.print(
        f"    GET /v1/context-use?since={since}: {response.status}, "
        f"{len(body['claims'])} claims rows and {len(body['constraints'])} constraints rows "
        f"for space {body['space_id']}"
    )
    if shown and shown[0] == DEMO_SPACE:
        who = shown[1]
    else:
        profile = read_query(
            settings,
            "SELECT profile_id FROM inferences FINAL WHERE space_id = {space:String} "
            "AND status = 'active' ORDER BY profile_id LIMIT 1",
            {"space": DEMO_SPACE},
        ).rows
        who = profile[0][0] if profile else "PROFILE_ID"
    when = "now" if keep_running else "with turnstream demo --keep-running"
    if keep_running:
        out.print(f"    call it now (the key is in {settings.keys_path()}, hashed):")
    else:  # each run wipes its home, keys included: this key dies with this run's worker
        out.print(
            f"    this run's key (in {settings.keys_path()}, hashed); each run makes its own: "
            "call the API with turnstream demo --keep-running and the key it prints:"
        )
    out.print(f"    KEY={key}", markup=False, highlight=False)
    for line in (
        f'curl -H "Authorization: Bearer $KEY" "{url}/v1/context-use?since={since}&by=agent"',
        f'curl -H "Authorization: Bearer $KEY" -X POST {url}/v1/constraints '
        f'-d \'{{"space_id": "{DEMO_SPACE}", "profile_id": "{who}", "asked": ["size"]}}\'',
        f'curl -H "Authorization: Bearer $KEY" "{url}/v1/profiles/{who}/inferences'
        f'?space_id={DEMO_SPACE}"',
    ):
        out.print(f"    {line}", markup=False, highlight=False)
    # The console's page, for people who would rather look: the same key, entered in it.
    out.print(
        f"    console {when}: {url}/console (enter KEY and space {DEMO_SPACE}; "
        "?lang=pt or es for other labels)",
        markup=False,
        highlight=False,
    )


async def _publish(settings: Settings, path: Path):  # type: ignore[no-untyped-def]
    async with Producer(settings) as producer:
        return await producer.publish_lines(read_lines(path), send_invalid=True)
