"""The embedded store refuses writes for a while: the worker backs off, holds its
offsets, and catches up with exact totals.

The store (chDB) lives inside the worker process, so its writes are made to fail from
outside: ``chattr +i`` on the data directories of every raw table but ``turns``.
ClickHouse can read them but cannot create a part in them (an immutable directory
refuses new entries even to root). A batch with a turn then lands partly (its ``turns``
row) and fails on the next table, so the retry must skip what landed. This needs
``chattr``, CAP_LINUX_IMMUTABLE and a file system with the flag (ext4, xfs, btrfs, ...):
the test is skipped elsewhere, and fails instead when ``CI=true``.

A file-size limit on the worker (``RLIMIT_FSIZE`` = 0, as a full disk) is not used:
chDB reports success for the INSERTs and merges that hit it and commits parts with
empty mark files, so no client can see the failure. It corrupts the store (the merged,
empty part replaces the good ones) instead of failing the writes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from aiokafka import TopicPartition

from tests.chaos.helpers import (
    Factory,
    StatusWatch,
    assert_exact,
    committed_offsets,
    log_tail,
    q,
)
from turnstream.adapters.clickhouse.schema import RAW_TABLES
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.errors import InvalidItem
from turnstream.models import Turn, parse_item
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import mixed_items

pytestmark = pytest.mark.chaos(budget=240)

SEED = 7003
OUTAGE = 14.0  # attempts at 0, 0.5, 1.5, 3.5, 7.5 s: five failures, delays doubling
_RETRY = re.compile(r"store write failed \(attempt (\d+)\), retrying in ([\d.]+)s")


def _chattr(flag: str, path: Path) -> None:
    subprocess.run(["chattr", flag, str(path)], check=True, capture_output=True)


def _immutable_dirs_work(probe: Path) -> str | None:
    """None when an immutable directory refuses new entries here; else why not."""
    if shutil.which("chattr") is None:
        return "chattr (e2fsprogs) is not installed"
    probe.mkdir()
    try:
        _chattr("+i", probe)
    except subprocess.CalledProcessError as exc:
        return f"chattr +i is not permitted here: {exc.stderr.decode().strip()}"
    try:
        (probe / "x").touch()
    except PermissionError:
        return None
    finally:
        _chattr("-i", probe)
    return "an immutable directory still accepts new files here"


class Outage:
    """Starts and ends a store outage; ``end`` is idempotent and runs at teardown too."""

    def __init__(self, start: Callable[[], None], end: Callable[[], None]) -> None:
        self._start, self._end, self.active = start, end, False

    def start(self) -> None:
        self.active = True
        self._start()

    def end(self) -> None:
        if self.active:
            self._end()
            self.active = False


@pytest.fixture
def lockable(tmp_path: Path) -> None:
    """Skip where table directories cannot be locked; in CI (``CI=true``), fail."""
    why = _immutable_dirs_work(tmp_path / "probe")
    if why is None:
        return
    message = f"cannot lock table directories: {why}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message} (CI=true: the store outage test must run in CI)")
    pytest.skip(message)


@pytest.fixture
def outages() -> Iterator[list[Outage]]:
    made: list[Outage] = []
    yield made
    for outage in made:  # never leave immutable directories behind
        outage.end()


def _locked_tables(deployment: Deployment) -> Outage:
    database = deployment.settings.store.database
    rows = q(
        deployment,
        f"SELECT name, data_paths FROM system.tables WHERE database = '{database}'",
    )
    paths = {name: Path(p[0]) for name, p in rows if p}
    locked = [paths[t] for t in RAW_TABLES if t != "turns"]
    assert all(p.is_dir() for p in locked), locked

    def start() -> None:
        for path in locked:
            _chattr("+i", path)

    def end() -> None:
        for path in locked:
            _chattr("-i", path)

    return Outage(start, end)


def _retries(log: Path, after: int) -> list[tuple[int, float]]:
    """(attempt, delay) of each failed write logged past byte ``after`` of the log."""
    with log.open("rb") as fh:
        fh.seek(after)
        text = fh.read().decode(errors="replace")
    return [(int(a), float(d)) for a, d in _RETRY.findall(text)]


def test_store_refuses_writes_for_a_while(
    lockable: None, deployment_factory: Factory, outages: list[Outage]
) -> None:
    batch = mixed_items(n=6_000, bad=120, seed=SEED)
    lines = list(batch.lines)
    # One turn goes first and alone once the outage starts: its batch lands partly.
    lone = next(i for i, raw in enumerate(lines[2_000:], 2_000) if _is_turn(raw))
    lone_turn = lines.pop(lone)
    before, after = lines[:2_000], lines[2_000:]

    deployment = deployment_factory(batch_size=200, batch_seconds=0.2)
    worker = deployment.worker
    worker.start()
    deployment.publish(before)
    deployment.drain()
    group = deployment.settings.worker.app_id
    bootstrap = deployment.settings.broker.bootstrap
    held = committed_offsets(bootstrap, group)
    processed = worker.stats()["messages"]
    assert processed == len(before)
    counts_before = deployment.counts()

    outage = _locked_tables(deployment)
    outages.append(outage)
    log_mark = worker.log_path.stat().st_size
    outage.start()
    deployment.publish([lone_turn])
    # The lone turn's batch fails; everything else waits in Kafka behind it.
    first_failure = time.monotonic()
    while not _retries(worker.log_path, log_mark):
        assert worker.alive(), f"the worker died on a store failure:\n{log_tail(worker.log_path)}"
        assert time.monotonic() - first_failure < 30, "no failed write was logged"
        time.sleep(0.1)
    deployment.publish(after)
    with StatusWatch(worker) as watch:
        while time.monotonic() - first_failure < OUTAGE:
            assert worker.alive(), (
                f"the worker died during the outage:\n{log_tail(worker.log_path)}"
            )
            time.sleep(0.5)
        # Offsets held, nothing counted as done.
        assert committed_offsets(bootstrap, group) == held
        assert worker.stats()["messages"] == processed
        during = deployment.counts()
        # The worker says it fails, since when, on what, and where it is stuck: the
        # lone turn, at its partition's committed offset.
        failing = worker.stats()["ingest"]
        assert failing["state"] == "retrying" and failing["last_failure"] == "transient"
        assert failing["failing_seconds"] >= OUTAGE / 2 and failing["failures"] >= 4
        assert "insert into" in failing["last_error"] and "Code: 1001" in failing["last_error"]
        [stuck] = failing["stuck_at"]
        tp = TopicPartition(stuck["topic"], stuck["partition"])
        assert stuck["topic"] == TopicNames(deployment.settings.worker.topic_prefix).input("turn")
        assert stuck["offset"] == held.get(tp, 0)
        # `turnstream wait` tells a failing worker from a lagging one: exit code 3.
        waited = _wait_cli(deployment, "--failing-after", "2", "--timeout", "60")
        assert waited.returncode == 3, waited.stderr
        assert "failing" in waited.stderr and "stuck at" in waited.stderr
    assert not watch.failures, watch.failures[:5]
    retries = _retries(worker.log_path, log_mark)
    attempts = [a for a, _ in retries]
    delays = [d for _, d in retries]
    assert attempts[:4] == [1, 2, 3, 4], retries
    assert delays[:4] == [0.5, 1.0, 2.0, 4.0], retries  # backing off, doubling
    # The batch landed partly: its turn, nothing else.
    grown = {t: during[t] - counts_before[t] for t in during}
    assert grown == {t: int(t == "turns") for t in during}, grown

    outage.end()
    deployment.drain(timeout=120)
    assert worker.alive()
    assert_exact(deployment, batch)
    recovered = worker.stats()["ingest"]
    assert recovered["state"] == "running" and recovered["stuck_at"] == []
    assert "Code: 1001" in recovered["last_error"]  # kept, for the record
    waited = _wait_cli(deployment, "--timeout", "60")
    assert waited.returncode == 0, waited.stderr


def _wait_cli(deployment: Deployment, *options: str) -> subprocess.CompletedProcess[str]:
    """``turnstream wait`` for the deployment, as an operator would run it."""
    return subprocess.run(
        [sys.executable, "-m", "turnstream", "wait", "--config", str(deployment.config), *options],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _is_turn(raw: bytes) -> bool:
    """An accepted turn (of a space with turns and claims)."""
    try:
        item = parse_item(raw)
    except InvalidItem:
        return False
    return isinstance(item, Turn) and item.space_id == "acme" and bool(item.claims)
