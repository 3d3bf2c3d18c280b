"""Shared pieces of the fault tests: exact expectations, broker offsets, a status watch
and the worker's log."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from turnstream.adapters.clickhouse.summaries import differences
from turnstream.adapters.worker_client import read_query
from turnstream.config import Feature, Settings
from turnstream.errors import InvalidItem
from turnstream.models import EVIDENCED_VERDICTS, Turn, parse_item
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import MixedBatch
from turnstream_dev.worker_process import WorkerProcess

#: The ``deployment_factory`` fixture.
Factory = Callable[..., Deployment]

RAW_COUNTED = ("turns", "interactions", "outcomes", "commands", "dead_letters")


def q(
    deployment: Deployment, sql: str, parameters: dict[str, Any] | None = None
) -> list[tuple[Any, ...]]:
    """Rows of a read-only query (through the worker while it runs); values as
    ``{name:Type}`` parameters."""
    return read_query(deployment.settings, sql, parameters).rows


def scalar(deployment: Deployment, sql: str, parameters: dict[str, Any] | None = None) -> int:
    return int(q(deployment, sql, parameters)[0][0])


def expected_totals(batch: MixedBatch) -> dict[str, int]:
    """Rows per raw table that ingesting ``batch`` must give, from the batch itself."""
    assert not any(b'"command":"erase"' in line for line in batch.lines), (
        "an erase in the batch would make the totals depend on timing"
    )
    totals = {t: 0 for t in RAW_COUNTED}
    totals.update(batch.accepted)
    totals["dead_letters"] = sum(batch.refused.values())
    return totals


@dataclass
class LineCounts:
    """What the lines hold, counted straight from them (not through the pipeline)."""

    claims: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    constraint_calls: int = 0


def count_lines(lines: Iterable[bytes], settings: Settings) -> LineCounts:
    """Claims (and evidenced claims) per (source, agent) of turns in spaces with the
    ``claims`` feature, and constraint measurements of every accepted turn."""
    claims: Counter[tuple[str, str]] = Counter()
    evidenced: Counter[tuple[str, str]] = Counter()
    calls = 0
    for raw in lines:
        try:
            item = parse_item(raw)
        except InvalidItem:
            continue
        space = settings.space(item.space_id)
        if not isinstance(item, Turn) or space is None or not space.has(Feature.turns):
            continue
        calls += len(item.constraints)
        if space.has(Feature.claims):
            for claim in item.claims:
                claims[item.source, item.agent] += 1
                evidenced[item.source, item.agent] += claim.verdict in EVIDENCED_VERDICTS
    return LineCounts({k: (claims[k], evidenced[k]) for k in claims}, calls)


def assert_exact(deployment: Deployment, batch: MixedBatch) -> None:
    """Every total equals what the batch must give: no loss, no double count."""
    counts = deployment.counts()
    assert {t: counts[t] for t in RAW_COUNTED} == expected_totals(batch)
    assert deployment.dead_letters() == {r: n for r, n in batch.refused.items() if n}
    # Every distinct message takes one idempotency key, exactly once.
    assert scalar(deployment, "SELECT count() FROM idempotency_keys") == len(batch.lines)
    from_lines = count_lines(batch.lines, deployment.settings)
    rolled = {
        (s, a): (int(n), int(e))
        for s, a, n, e in q(
            deployment,
            "SELECT source, agent, sum(claims), sum(evidenced) FROM context_use_claims "
            "GROUP BY source, agent",
        )
    }
    assert rolled == from_lines.claims
    assert sum(n for n, _ in rolled.values()) > 0
    calls = scalar(deployment, "SELECT sum(calls) FROM context_use_constraints")
    assert calls == from_lines.constraint_calls
    assert counts["turn_constraints"] == from_lines.constraint_calls
    assert_summaries_exact(deployment)


def assert_summaries_exact(deployment: Deployment) -> None:
    """Every summary (context use, the interactions ledger, the value and object
    aggregates and their weekly roll-ups, stated) equals its recomputation from the raw
    tables: no crash left one short or counted an insert twice (issue 35)."""
    found = differences(lambda sql: q(deployment, sql))
    assert found == dict.fromkeys(found, 0), f"rows off their recomputation: {found}"
    assert scalar(deployment, "SELECT sum(events) FROM value_weekly") > 0


def committed_offsets(bootstrap: str, group: str) -> dict[TopicPartition, int]:
    """The offsets ``group`` has committed, per partition."""

    async def read() -> dict[TopicPartition, int]:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            found = await admin.list_consumer_group_offsets(group)
        finally:
            await admin.close()
        return {tp: meta.offset for tp, meta in found.items() if meta.offset >= 0}

    return asyncio.run(read())


def read_topic(bootstrap: str, topic: str, timeout: float = 60.0) -> list[tuple[bytes, bytes]]:
    """Every message of ``topic`` now, as (key, value), partition by partition."""

    async def read() -> list[tuple[bytes, bytes]]:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            described = await admin.describe_topics([topic])
        finally:
            await admin.close()
        partitions = [TopicPartition(topic, p["partition"]) for p in described[0]["partitions"]]
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap,
            enable_auto_commit=False,
            max_partition_fetch_bytes=8 << 20,
        )
        await consumer.start()
        out: list[tuple[bytes, bytes]] = []
        try:
            consumer.assign(partitions)
            await consumer.seek_to_beginning(*partitions)
            ends = await consumer.end_offsets(partitions)
            left = {tp: end for tp, end in ends.items() if end > 0}
            while left:
                batches = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), timeout)
                for tp, batch in batches.items():
                    out += [(m.key or b"", m.value or b"") for m in batch]
                    if batch and batch[-1].offset + 1 >= left.get(tp, 0):
                        left.pop(tp, None)
        finally:
            await consumer.stop()
        return out

    return asyncio.run(read())


def prepare_store(deployment: Deployment, *statements: str) -> None:
    """Migrate the deployment's store and run ``statements`` on it, in a process of its
    own (chDB opens one path per process), before its worker starts."""
    code = (
        "import sys\n"
        "from turnstream.adapters.clickhouse.schema import apply_migrations\n"
        "from turnstream.adapters.clickhouse.store import Store\n"
        "store = Store(sys.argv[1], sys.argv[2])\n"
        "apply_migrations(store)\n"
        "for sql in sys.argv[3:]:\n"
        "    store.command(sql)\n"
        "store.close()\n"
    )
    store = deployment.settings.store
    subprocess.run([sys.executable, "-c", code, store.dsn, store.database, *statements], check=True)


def store_rows(deployment: Deployment, sql: str) -> list[list[Any]]:
    """Rows of ``sql`` read on the deployment's store itself, not through the analysts'
    gate (a table no analyst reads), in a process of its own once the worker is stopped
    (chDB opens one path per process)."""
    code = (
        "import json, sys\n"
        "from turnstream.adapters.clickhouse.store import Store\n"
        "store = Store(sys.argv[1], sys.argv[2])\n"
        "print(json.dumps([list(r) for r in store.query(sys.argv[3]).rows], default=str))\n"
        "store.close()\n"
    )
    store = deployment.settings.store
    done = subprocess.run(
        [sys.executable, "-c", code, store.dsn, store.database, sql],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def wait_for(predicate: Any, timeout: float, what: str, every: float = 0.2) -> Any:
    """Poll ``predicate()`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(every)


_ERROR_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit)\b.*$", re.MULTILINE)
#: A task of the worker's app that ended: a cancelled one does not crash the app.
_TASK_ENDED = re.compile(r"^.*(Terminating cancelled task|Crashed reason).*$", re.MULTILINE)


def processed(worker: WorkerProcess) -> int:
    """Messages the running worker has processed since it started (-1 while it does not
    answer: a busy moment is not a failure here; a death is checked by the caller)."""
    try:
        return int(worker.stats()["messages"])
    except OSError:
        return -1


def log_tail(path: Path, lines: int = 25) -> str:
    """The last lines of a worker log, after the last exception it printed and the
    app's tasks that ended (if any)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    errors = [m.group(0) for m in _ERROR_LINE.finditer(text)]
    head = f"last exception in the log: {errors[-1]}\n" if errors else ""
    head += "".join(f"task ended: {m.group(0)}\n" for m in _TASK_ENDED.finditer(text))
    return head + "\n".join(text.splitlines()[-lines:])


class StatusWatch:
    """Asks the worker's ``/v1/status`` every ``every`` seconds on a thread, and keeps
    every failure (the worker must answer throughout)."""

    def __init__(self, worker: WorkerProcess, every: float = 0.25) -> None:
        self.worker, self.every = worker, every
        self.answers = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="status-watch", daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.worker.stats()
                self.answers += 1
            except Exception as exc:  # any failure to answer counts
                self.failures.append(f"{time.strftime('%H:%M:%S')}: {exc!r}")
            self._stop.wait(self.every)

    def __enter__(self) -> StatusWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
