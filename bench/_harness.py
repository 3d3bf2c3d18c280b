"""What the benchmark scripts share: a throw-away broker, deployments, publishing at a
given pace, queries through the worker, the worker's RSS and percentiles.

Not a benchmark itself (the leading underscore); each script imports it after putting
the repository root on ``sys.path``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import platform
import signal
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import AsyncStore
from turnstream.adapters.kafka.admin import wait_until_drained
from turnstream.adapters.kafka.producer import Producer
from turnstream.adapters.worker_client import read_query
from turnstream.config import Settings, WorkerSettings, load_settings
from turnstream.entrypoints.bootstrap import build_parts
from turnstream.entrypoints.kafka.ingest_driver import IngestDriver
from turnstream_dev import LocalKafka, free_ports
from turnstream_dev.deployment import SPACES, Deployment, new_deployment

__all__ = [
    "Broker",
    "add_prepare_process",
    "cpu_seconds",
    "deploy",
    "fanned_out",
    "in_process_loop",
    "load",
    "machine",
    "percentile",
    "prepare_process_line",
    "publish",
    "publish_paced",
    "records",
    "rss_bytes",
    "run_broker",
    "sql",
    "store_query_ms",
    "wait_drained",
    "worker_pid",
]

#: The worker's own defaults (``[worker]`` in turnstream/config/settings.py), which the tests'
#: ``new_deployment`` does not use (it defaults to 200 / 0.2 s).
DEFAULT_BATCH_SIZE = WorkerSettings().batch_size
DEFAULT_BATCH_SECONDS = WorkerSettings().batch_seconds


@dataclass
class Broker:
    bootstrap: str
    home: Path
    made: list[Deployment] = field(default_factory=list)
    #: The broker's JVM (for its CPU time: it shares the machine's cores).
    pid: int | None = None


def _exit_on_term(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


@contextmanager
def run_broker() -> Iterator[Broker]:
    """A single-node Kafka 4.1.1 on free ports in a temporary directory, stopped and
    removed at the end, together with every deployment made under its ``home``. A SIGTERM
    (``timeout``, ``kill``) ends the script through this cleanup too: Python's default
    would leave the broker's JVM running."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_term)
    with tempfile.TemporaryDirectory(prefix="turnstream-bench-") as tmp:
        port, controller = free_ports(2)
        kafka = LocalKafka(home=Path(tmp) / "kafka", port=port, controller_port=controller)
        kafka.up(timeout=120)
        broker = Broker(kafka.bootstrap, Path(tmp), pid=kafka.status().pid)
        try:
            yield broker
        finally:
            for deployment in broker.made:
                deployment.worker.stop()
            kafka.down()


def deploy(
    broker: Broker,
    batch_size: int = DEFAULT_BATCH_SIZE,
    batch_seconds: float = DEFAULT_BATCH_SECONDS,
    extra: str = "",
    worker_extra: str = "",
) -> Deployment:
    """A deployment (own topics, group, port, store) whose worker is not started yet;
    :func:`run_broker` stops its worker at the end. ``worker_extra``: lines of its
    ``[worker]`` table."""
    deployment = new_deployment(
        broker.bootstrap, broker.home, batch_size, batch_seconds, extra, worker_extra
    )
    broker.made.append(deployment)
    return deployment


async def _publish(
    deployment: Deployment, lines: Sequence[bytes], on_sent: Callable[[int], None] | None
) -> None:
    async with Producer(deployment.settings) as producer:
        for n, raw in enumerate(lines):
            try:
                await producer.publish(raw)
            except Exception:
                await producer.publish_raw(raw)
            if on_sent is not None:
                on_sent(n)
        await producer.flush()


def publish(
    deployment: Deployment,
    lines: Sequence[bytes],
    on_sent: Callable[[int], None] | None = None,
) -> None:
    """Publish every line as fast as the producer takes them (invalid ones raw), then
    wait until the broker has acknowledged all of them."""
    asyncio.run(_publish(deployment, lines, on_sent))


async def _publish_paced(
    deployment: Deployment,
    make: Callable[[int, float], bytes],
    rate: float,
    count: int,
    on_sent: Callable[[int, float, bytes], None] | None,
) -> float:
    async with Producer(deployment.settings) as producer:
        start = time.time()
        for n in range(count):
            due = start + n / rate
            delay = due - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            sent_at = time.time()
            raw = make(n, sent_at)
            await producer.publish(raw)
            if on_sent is not None:
                on_sent(n, sent_at, raw)
        await producer.flush()
        return time.time() - start


def publish_paced(
    deployment: Deployment,
    make: Callable[[int, float], bytes],
    rate: float,
    count: int,
    on_sent: Callable[[int, float, bytes], None] | None = None,
) -> float:
    """Publish ``count`` items at ``rate`` per second; ``make(n, now)`` builds item ``n``
    at its send time. Returns the seconds the sending took."""
    return asyncio.run(_publish_paced(deployment, make, rate, count, on_sent))


def wait_drained(deployment: Deployment, timeout: float = 600.0, signals: bool = False) -> None:
    """Until the ingest (or the derivation) consumer group has committed everything."""
    processor = deployment.topology.derivation if signals else deployment.topology.ingest
    asyncio.run(
        wait_until_drained(
            deployment.settings.broker.bootstrap,
            processor.group,
            processor.reads,
            timeout=timeout,
            alive=deployment.worker.alive,
        )
    )


def sql(deployment: Deployment, query: str) -> list[tuple[Any, ...]]:
    """Rows of a read-only query, answered by the worker (its ``/v1/sql``)."""
    return read_query(deployment.settings, query).rows


def worker_pid(deployment: Deployment) -> int:
    """The worker process's pid (``turnstream worker`` runs directly, not via a shell)."""
    proc = deployment.worker._proc  # the bench reads /proc of its own child
    assert proc is not None, "the worker is not started"
    return proc.pid


def rss_bytes(pid: int) -> int:
    """Resident set size of a process, from ``/proc/<pid>/status`` (VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process (all its threads) and of its live child
    processes (the worker's prepare process), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            children.update(int(c) for c in task.read_text().split())
    for child in children:
        with contextlib.suppress(OSError):  # it may just have ended
            own += cpu_seconds(child)
    return own


def percentile(values: Iterable[float], p: float) -> float:
    """The ``p``-th percentile (0-100), nearest rank."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def machine() -> str:
    """One line: cores, CPU model, memory, Python, chDB and the engine it ships in, the
    boot (a figure from another boot may be from another host), the load."""
    from importlib.metadata import PackageNotFoundError, version

    import chdb

    mem = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "?",
    )
    try:  # chdb 4.x ships its engine in chdb-core, whose version chdb's own does not pin
        core = f" (chdb-core {version('chdb-core')})"
    except PackageNotFoundError:
        core = ""
    booted = time.strftime("%Y-%m-%d %H:%M", time.gmtime(time.time() - _uptime()))
    return (
        f"{os.cpu_count()} cores ({model}), {mem / 2**30:.1f} GiB, "
        f"Python {platform.python_version()}, Kafka 4.1.1, chDB {chdb.__version__}{core}, "
        f"booted {booted} UTC; {load()}"
    )


def _uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


def store_query_ms(queries: int = 300) -> float:
    """CPU milliseconds (this process, all threads) of one point query on a throw-away
    chDB store with the project's schema: the cost every per-item query pays, whatever
    it reads. A figure that moves between runs of the same code says the machine (or
    the engine) changed, not the code."""
    from turnstream.adapters.clickhouse.derivations import load_state
    from turnstream.adapters.clickhouse.store import Store

    with tempfile.TemporaryDirectory(prefix="turnstream-bench-") as tmp:
        store = Store(f"chdb://{tmp}/store")
        try:
            apply_migrations(store)
            load_state(store, "acme", "p_warm")
            started = time.process_time()
            for n in range(queries):
                store.query(
                    "SELECT argMax(state, version) FROM signal_state "
                    "WHERE space_id = {space_id:String} AND profile_id = {profile_id:String}",
                    {"space_id": "acme", "profile_id": f"p_{n}"},
                )
            return (time.process_time() - started) * 1000 / queries
        finally:
            store.close()


def fanned_out(items: int, prefix: str, batch: int = 5_000) -> tuple[list[Any], Settings]:
    """Every (topic, value, key) the ingest driver fans out for ``items`` mixed items
    (seed 7, 1% bad), prepared in this process in batches of ``batch``; and its settings."""
    from turnstream.adapters.kafka.topology import TopicNames
    from turnstream_dev.sample import mixed_items

    lines = list(mixed_items(n=items, bad=items // 100, seed=7).lines)
    with in_process_loop(prefix) as loop:
        loop.stage.process = None
        messages = records(lines, TopicNames(loop.settings.worker.topic_prefix).input("turn"))
        out: list[Any] = []
        for at in range(0, len(messages), batch):
            prepared = loop.prepare(messages[at : at + batch])
            out += [send for sends in prepared.sends for send in sends]
        return out, loop.settings


def add_prepare_process(parser: argparse.ArgumentParser) -> None:
    """``--prepare-process on|off`` and ``--prepare-children N``: the worker's
    ``prepare_process`` and ``prepare_children`` (default: its own)."""
    parser.add_argument(
        "--prepare-process", choices=("on", "off"), help="worker.prepare_process (default: auto)"
    )
    parser.add_argument(
        "--prepare-children", type=int, help="worker.prepare_children (default: auto)"
    )


def prepare_process_line(choice: str | None, children: int | None = None) -> str:
    """The ``[worker]`` lines for ``--prepare-process`` and ``--prepare-children``; empty
    for the worker's defaults."""
    lines = ""
    if choice is not None:
        lines += f"prepare_process = {'true' if choice == 'on' else 'false'}\n"
    if children is not None:
        lines += f"prepare_children = {children}\n"
    return lines


def load() -> str:
    """The load averages: the machine may be shared, and every figure here is CPU-bound."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min)"


def settle(loop: IngestDriver, prepared: Any) -> list[Any]:
    """A prepared batch's decisions after the key look-up (the ingest use case's first
    store call)."""
    batch = loop.ingest.batch(prepared)
    batch.settle()
    return batch.decisions


def raw_sink(loop: IngestDriver) -> Any:
    """The driver's raw sink (``adapters/clickhouse/writer.RawSink``), under the use case's port."""
    return loop.ingest.raw.sink  # type: ignore[attr-defined]


def dumps(item: dict[str, Any]) -> bytes:
    """An item as a compact JSON line."""
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False).encode()


@contextmanager
def in_process_loop(prefix: str = "turnstream-bench-") -> Iterator[IngestDriver]:
    """The ingest driver on a throw-away, migrated chDB store, built by the worker's
    bootstrap, with no broker: what the worker does to the store, in this process (prepare
    too: ``prepare_process = false``). Call
    the store through ``loop.store.call`` (its own thread, as in the worker)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        config = Path(tmp) / "turnstream.toml"
        config.write_text(
            f'[broker]\nbootstrap = "127.0.0.1:9"\n[store]\ndsn = "chdb://{tmp}/store"\n'
            f'[identity]\nsecret = "bench"\n[worker]\napp_id = "b"\ntopic_prefix = "b"\n'
            f"prepare_process = false\n{SPACES}"
        )
        settings = load_settings(config, environ={})
        store = AsyncStore.open(settings.store.dsn, settings.store.database)
        try:
            store.call(apply_migrations, store.store)
            yield build_parts(settings, store).ingest
        finally:
            store.call(store.store.close)
            store.shutdown()


def records(lines: Sequence[bytes], topic: str, start: int = 0) -> list[Any]:
    """The lines as the consumer records the ingest driver takes (four partitions)."""
    return [
        SimpleNamespace(topic=topic, partition=n % 4, offset=start + n, value=line, key=None)
        for n, line in enumerate(lines)
    ]
