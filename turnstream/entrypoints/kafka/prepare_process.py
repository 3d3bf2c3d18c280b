"""The prepare stage in processes of their own, so that it runs on the other cores.

Validating and preparing a batch is pure Python, ~150 µs of CPU per item, and the GIL
lets only one thread run Python at a time: on the prepare thread it competes with the
store thread's own Python (clickhouse-connect's serialization) and the event loop. In a
process it does not. What comes back is plain data, never a model: per message its key,
profile id and refusal, the fan-out messages, whether it is accepted, its accepted item's
subject and ``occurred_at`` and whether it erases (what the erase tombstone rules read:
the parent applies them, since they depend on the keys taken and on the erasures of the
batch written meanwhile); and each table's rows as the store inserts them, a
:class:`~turnstream.core.rows.Block` of columns. Pickling the whole
:class:`~turnstream.entrypoints.kafka.prepare.Prepared` (decisions with their pydantic items) cost
67 µs per item and unpickling it 95, more than half of what the child saves; the plain
form with a dict per row, 20 and 14; with columns and a list per field, the parent's
whole share of the hand-back (its pickle, the unpickle, the decisions rebuilt, the rows
to columns) fell from ~28 to ~7 µs per item (docs/performance.md, round eight).

With more than one child (``worker.prepare_children``; by default one per usable CPU), a
batch of at least ``2 * MIN_CHUNK`` messages is cut into contiguous chunks, one per child,
prepared side by side and joined in order (:func:`joined`: the lists concatenated, the
refusals' indices shifted, each table's blocks joined); every chunk is stamped with the
batch's one ``received_at``, so the joined batch is the batch prepared whole (tested).
With one child, the first batch of a backlog kept one core busy and the other idle until
it was prepared (~0.9 s at 20,000 items), and the child was the stage the store waited on;
two children drained a sustained backlog x1.15 to x1.24 as fast (docs/performance.md, round ten).

The children are started with ``spawn`` (forking a process that holds chDB and threads is
unsafe), once per :class:`PrepareProcess`, and each ends when its parent does: it watches its
parent's pid, so a SIGKILLed worker leaves no child behind. A child that dies raises
:class:`~concurrent.futures.process.BrokenProcessPool` in the batch that waited on it (a
loud error: the batch loop's run fails, is noted as a crash and starts again, with a new
child).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from itertools import pairwise
from types import SimpleNamespace
from typing import Any

from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings
from turnstream.core.erasure import ErasureFacts
from turnstream.core.ingest import Decision, Refusal, Source
from turnstream.core.rows import BatchRows, Block
from turnstream.entrypoints.kafka.prepare import Prepared, prepare_batch, signatures_of
from turnstream.service.ports import Message

__all__ = ["PrepareProcess", "PrepareStage", "records_of"]

log = logging.getLogger(__name__)

#: How often the child checks that its parent lives (seconds).
PARENT_CHECK_SECONDS = 0.5

#: How much lower than the parent's the children's scheduling priority is (``nice``).
#: With two children the parent is the stage the others wait on, and its Python holds one
#: GIL: when the machine is full, a parent thread preempted by a child while it holds the
#: GIL stalls every thread of the parent (py-spy saw the hand-back's unpickling take ~5x
#: its in-process time in the worker). At 10 the kernel runs a child when the parent has
#: nothing to run, and the parent first otherwise: a 50,000-item backlog drained x1.10 as
#: fast, ahead in 8 of 10 alternating pairs (docs/performance.md, round ten).
CHILD_NICENESS = 10

#: A batch's records as they cross to the child, a list per field: topics, partitions,
#: offsets, values, keys, signatures (the ``turnstream-sig`` header).
_Records = tuple[
    list[str], list[int], list[int], list[bytes | None], list[bytes | None], list[bytes | None]
]
#: What the child hands back, a list per field where it is per message: keys, profile
#: ids, the refusals by message index (few), the rows as a block of columns per table,
#: the sends, accepted, erasure facts, erases, and the time the batch was taken.
_Slim = tuple[
    list[str],
    list[str | None],
    dict[int, Refusal],
    dict[str, Block],
    list[list[Message]],
    list[bool],
    list[ErasureFacts | None],
    list[bool],
    datetime,
]

_child: dict[str, Any] = {}


class PrepareProcess:
    """Child processes that prepare batches (``prepare_batch``) for this one: a batch
    of at least ``2 * MIN_CHUNK`` messages is split into contiguous chunks, one per
    child, prepared side by side and joined in order."""

    def __init__(self, settings: Settings, names: TopicNames, children: int = 1) -> None:
        self.settings = settings
        self.names = names
        self.children = children
        self._pool: ProcessPoolExecutor | None = None
        # Two batches may be handed over at once (the batch loop's prepare_concurrency):
        # one of them starts a child that is not there yet.
        self._starting = threading.Lock()

    def _started(self) -> ProcessPoolExecutor:
        with self._starting:
            return self._start_locked()

    def _start_locked(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.children,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_child,
                # The parent's collector thresholds (the worker's tune_gc): with CPython's
                # defaults, prepare took 1.7 times as long (docs/performance.md).
                initargs=(self.settings, os.getpid(), gc.get_threshold()),
            )
        return self._pool

    def start(self) -> None:
        """Start the children and wait until each is ready (a spawned interpreter imports
        turnstream: ~1 to 2 s, better before the first batch than in it)."""
        pool = self._started()
        # A child takes calls only once it is ready, and a ready child may answer them
        # all: ask until every child has answered once.
        answered: set[int] = set()
        while len(answered) < self.children:
            answered.update(f.result() for f in [pool.submit(_ready) for _ in range(self.children)])

    def prepare(
        self, messages: list[Any], fanout_max_bytes: int, received_at: datetime | None = None
    ) -> Prepared:
        """The batch prepared in the children (in chunks: :func:`chunked`), taken at
        ``received_at`` (default: now). Blocking. Raises ``BrokenProcessPool`` when a
        child died (the next call starts new ones)."""
        if received_at is None:
            received_at = datetime.now(UTC)
        chunks = chunked(messages, self.children)
        pool = self._started()
        try:
            calls = [
                pool.submit(
                    _prepare_in_child, records_of(c), self.names, fanout_max_bytes, received_at
                )
                for c in chunks
            ]
            slim = joined([call.result() for call in calls])
        except BrokenProcessPool:
            log.error("the prepare process died; a new one starts with the next batch")
            with self._starting:
                if self._pool is pool:  # the other batch in flight may have seen it first
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        return _from_slim(messages, slim)

    @property
    def pids(self) -> list[int]:
        """The children's process ids, once started (for ``ps`` and the tests)."""
        if self._pool is None:
            return []
        return sorted(p.pid for p in getattr(self._pool, "_processes", {}).values())

    @property
    def pid(self) -> int | None:
        """The first child's process id, once started."""
        pids = self.pids
        return pids[0] if pids else None

    def close(self) -> None:
        """Stop the child (it also stops when this process ends)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


#: The fewest messages a chunk holds: a smaller batch goes to one child whole.
MIN_CHUNK = 1_000


def chunked(messages: list[Any], children: int) -> list[list[Any]]:
    """``messages`` in contiguous chunks of about equal size, one per child, none
    under :data:`MIN_CHUNK` (a batch that small is one chunk)."""
    count = max(1, min(children, len(messages) // MIN_CHUNK))
    size, longer = divmod(len(messages), count)  # the first ``longer`` chunks take one more
    bounds = [i * size + min(i, longer) for i in range(count + 1)]
    return [messages[a:b] for a, b in pairwise(bounds)]


def joined(slims: list[_Slim]) -> _Slim:
    """The hand-backs of a batch's chunks, in order, as one."""
    if len(slims) == 1:
        return slims[0]
    keys: list[str] = []
    profile_ids: list[str | None] = []
    refusals: dict[int, Refusal] = {}
    blocks: dict[str, Block] = {}
    sends: list[list[Message]] = []
    accepted: list[bool] = []
    facts: list[ErasureFacts | None] = []
    erasing: list[bool] = []
    for slim in slims:
        refusals.update((len(keys) + i, r) for i, r in slim[2].items())
        keys += slim[0]
        profile_ids += slim[1]
        for table, block in slim[3].items():
            blocks[table] = block if table not in blocks else blocks[table].joined(block)
        sends += slim[4]
        accepted += slim[5]
        facts += slim[6]
        erasing += slim[7]
    return (keys, profile_ids, refusals, blocks, sends, accepted, facts, erasing, slims[0][8])


def records_of(messages: list[Any]) -> _Records:
    """What crosses to the child of ``messages``: a list per field."""
    return (
        [m.topic for m in messages],
        [m.partition for m in messages],
        [m.offset for m in messages],
        [m.value for m in messages],
        [m.key for m in messages],
        signatures_of(messages),
    )


def _from_slim(messages: list[Any], slim: _Slim) -> Prepared:
    keys, profile_ids, refusals, blocks, sends, accepted, facts, erasing, received_at = slim
    judged = [
        Decision(
            Source(m.topic, m.partition, m.offset),
            m.value or b"",
            key,
            profile_id=profile_id,
        )
        for m, key, profile_id in zip(messages, keys, profile_ids, strict=True)
    ]
    for i, refusal in refusals.items():  # few: a decision with a refusal built again
        d = judged[i]
        judged[i] = Decision(d.source, d.raw, d.dedup_key, profile_id=d.profile_id, refusal=refusal)
    rows: BatchRows = dict(blocks)
    return Prepared(messages, judged, rows, sends, accepted, facts, erasing, received_at)


def _start_child(settings: Settings, parent: int, thresholds: tuple[int, int, int]) -> None:
    _child["settings"] = settings
    # Below the parent: see CHILD_NICENESS.
    os.nice(CHILD_NICENESS)
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    # No collection while a batch is prepared, one before each: between two batches
    # nearly nothing is alive, so it finds the last batch's few cycles (an invalid item's
    # exception and traceback) at once, where the young collections, walking a batch's
    # live objects over and over, cost more with every batch the child had prepared
    # (3 to 12 µs an item over ten batches of 20,000; flat without: round nine).
    gc.disable()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _ready() -> int:
    time.sleep(0.01)  # long enough for a child that is ready too to take the next call
    return os.getpid()


def _watch_parent(parent: int) -> None:
    # A parent killed with SIGKILL cannot stop its child, and the child holds both ends
    # of its call queue, so it would wait forever: once reparented, it exits.
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_SECONDS)
    os._exit(1)


def _prepare_in_child(
    records: _Records, names: TopicNames, fanout_max_bytes: int, received_at: datetime
) -> _Slim:
    gc.collect()  # the collector is off in the child: the last batch's cycles go now
    *fields, signatures = records
    messages = [
        SimpleNamespace(topic=t, partition=p, offset=o, value=v, key=k)
        for t, p, o, v, k in zip(*fields, strict=True)
    ]
    # The rows as the store inserts them, built here: the parent's Python is the worker's
    # bottleneck, this process has time to spare (docs/performance.md, round eight).
    prepared = prepare_batch(
        messages,
        _child["settings"],
        names,
        fanout_max_bytes,
        received_at=received_at,
        signatures=signatures,
        blocks=True,
    )
    judged = prepared.judged
    blocks: dict[str, Block] = prepared.rows  # type: ignore[assignment]
    return (
        [d.dedup_key for d in judged],
        [d.profile_id for d in judged],
        {i: d.refusal for i, d in enumerate(judged) if d.refusal is not None},
        blocks,
        prepared.sends,
        prepared.accepted,
        prepared.erasure_facts,
        prepared.erases,
        prepared.received_at,
    )


class PrepareStage:
    """The use case's prepare stage (:class:`~turnstream.service.ports.Preparer`): in
    the prepare process when ``worker.prepare_process`` puts it there, else on the
    calling thread (:func:`~turnstream.entrypoints.kafka.prepare.prepare_batch`). Blocking."""

    def __init__(self, settings: Settings, names: TopicNames) -> None:
        self.settings = settings
        self.names = names
        #: Where batches are prepared: a child process, or (None) the calling thread.
        self.process = (
            PrepareProcess(settings, names, settings.worker.prepare_children_count())
            if settings.worker.prepares_in_child()
            else None
        )

    def __call__(
        self, messages: list[Any], fanout_max_bytes: int, received_at: datetime | None = None
    ) -> Prepared:
        if self.process is not None and messages:
            return self.process.prepare(messages, fanout_max_bytes, received_at)
        return prepare_batch(
            messages, self.settings, self.names, fanout_max_bytes, received_at, blocks=True
        )

    def start(self) -> None:
        """Start the prepare process, if there is one (else the first batch does)."""
        if self.process is not None:
            self.process.start()

    def close(self) -> None:
        """Stop the prepare process, if there is one."""
        if self.process is not None:
            self.process.close()
