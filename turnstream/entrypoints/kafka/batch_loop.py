"""The one batch loop: consume a batch, let a driver work on it, send what the driver
produced, then commit. The ingest and the derivation drivers both run on it.

Offsets are committed only after the driver has finished a batch (its store writes) and
the broker has acknowledged every message the batch produced, so a crash anywhere
replays from the last commit, and the idempotent sinks make the replay a no-op. A
driver may commit less than it consumed (derivation commits below the oldest event it
still holds).

Three stages overlap: while batch N is finished (the driver's store work, on the store
thread), batch N-1's messages are sent and its offsets committed (on the event loop),
and the next batches are fetched and prepared (pure work: validation, parsing), as many
at once as the driver's ``prepare_concurrency`` (the ingest driver's prepare process
takes the next batch while it hands the last one back). chDB releases the GIL while it
inserts, so the stages share the machine's cores. Batches still finish, send and commit
strictly in fetch order: N's sends start once N-1's are acknowledged and committed.
Measured with a backlog (issue 14, round nine): the overlap of N's store work with N-1's
delivery x1.14 items/s; the prepare process, which had waited on the parent's hand-back
~40% of the time, then busy throughout.

When partitions move (a rebalance), the batches in flight finish and commit first, then
the driver is told which partitions it lost or got. A failure ends the run (consumer
and producer stopped, each within :data:`~turnstream.adapters.kafka.clients.STOP_SECONDS`
even with the broker down); :meth:`BatchLoop.run_forever` starts it again from the last
commit after :data:`RESTART_DELAY`, so a worker never answers while not consuming.

Each driver keeps a :class:`~turnstream.core.liveness.Liveness` record, served at
``/v1/status``: the loop notes progress after each step is sent and committed, and a
failure when a run ends in one (``crash``); the driver notes the store failures it
retries meanwhile (with the offsets it is stuck on).

The loop drives aiokafka directly rather than through a Faust agent: with Faust 0.15.3,
a worker restarted after SIGKILL fetched from offset 0 before seeking to its committed
offsets and then stopped committing (or stopped consuming) in 9 of 13 trials here
(``noack_take`` 8 of 9, ``take_events`` 1 of 4), which stalls the pipeline; this loop, 0
of 9. It runs inside the worker's Faust app as a task.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError

from turnstream.adapters.clickhouse.failures import short_message
from turnstream.adapters.kafka.auth import client_options
from turnstream.adapters.kafka.clients import stop_within
from turnstream.config import Settings
from turnstream.core.liveness import Liveness
from turnstream.entrypoints.kafka.fanout import Message, send_all

__all__ = ["PROBE_SECONDS", "RESTART_DELAY", "BatchDriver", "BatchLoop", "Step"]

log = logging.getLogger(__name__)

#: Seconds between a failed (or unexpectedly cancelled) run and the next. Short: a loop
#: that is not running leaves a worker that answers but does not consume; a broker
#: outage makes aiokafka's own start-up wait, so a restart does not spin.
RESTART_DELAY = 1.0
#: Seconds between the broker probes of a loop whose fetches come back empty (and the
#: most a probe waits): a broker that is down shows within seconds, and an idle loop's
#: contact stays fresher than ``adapters/kafka/ownership``'s bound (3/4 of the session
#: timeout, 7.5 s by default), at the cost of one metadata request per idle 3 s.
PROBE_SECONDS = 3.0
#: Seconds a Kafka client's start may take before the run fails as a broker failure (a
#: start against a live broker took under 1 s here).
START_SECONDS = 20.0

P = TypeVar("P")


@dataclass
class Step:
    """What a driver's work on one batch produced."""

    #: Sent, and acknowledged by the broker, before the commit.
    messages: Iterable[Message] = ()
    #: The offsets to commit (the next offset to read, per partition).
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    #: Called after the commit (counters), whether or not the commit succeeded.
    done: Callable[[], None] | None = None


class BatchDriver(Protocol[P]):
    """What the loop needs of a driver: where to read, and its work on a batch."""

    #: For logs: ``ingest``, ``derivation``.
    name: str
    #: The consumer group and the topics it reads.
    group: str
    topics: Sequence[str]
    #: Messages per batch at most (None: as many as the fetch returned).
    max_records: int | None
    #: Options of the producer the loop sends the driver's messages with.
    producer_options: Mapping[str, Any]
    #: Options of the consumer beyond the loop's own (fetch sizes).
    consumer_options: Mapping[str, Any]
    #: Whether a poll that fetched nothing still reaches :meth:`finish` (a timer).
    tick_when_idle: bool
    #: Batches that may be in :meth:`prepare` at once (each on a thread of its own):
    #: 1 when prepare is Python on the prepare thread (more would only share the GIL);
    #: 2 when it hands the batch to another process, which then takes the next batch
    #: while the last one is handed back.
    prepare_concurrency: int
    #: Its failures and progress, served at ``/v1/status`` (the loop notes both too).
    liveness: Liveness

    def poll_seconds(self) -> float:
        """How long the next fetch may wait for messages."""
        ...

    def prepare(self, messages: list[Any]) -> P:
        """Pure work on a fetched batch (on the prepare thread; no store)."""
        ...

    async def finish(self, prepared: P) -> Step:
        """The store work on a prepared batch; what to send and to commit."""
        ...

    async def on_revoked(self, partitions: set[TopicPartition]) -> None:
        """Partitions went to another worker (the batches in flight are finished)."""
        ...

    async def on_assigned(self, partitions: set[TopicPartition]) -> None:
        """Partitions came to this worker."""
        ...


class _Handover(ConsumerRebalanceListener):
    """Before partitions move, the batches in flight finish and commit; then the driver
    hears which partitions went and came."""

    def __init__(self, loop: BatchLoop[Any]) -> None:
        self.loop = loop

    async def on_partitions_revoked(self, revoked: Any) -> None:
        # aiokafka has stopped fetching: the batches already fetched are all there is.
        await self.loop.wait_idle(timeout=self.loop.settings.worker.session_timeout)
        await self.loop.driver.on_revoked(set(revoked))
        await self.loop.holding(set())  # eager rebalancing: every partition goes

    async def on_partitions_assigned(self, assigned: Any) -> None:
        await self.loop.driver.on_assigned(set(assigned))
        await self.loop.holding(set(assigned))


class BatchLoop(Generic[P]):
    """Runs one driver: consumer, producer, handover, commits, teardown, restarts."""

    def __init__(
        self,
        settings: Settings,
        driver: BatchDriver[P],
        on_held: Callable[[set[TopicPartition]], Awaitable[None]] | None = None,
    ) -> None:
        """``on_held`` hears the loop's whole assignment after each change (empty when
        revoked or when a run ends): ``adapters/kafka/ownership.PartitionRole`` follows it."""
        self.settings = settings
        self.driver = driver
        self._on_held = on_held
        self._prepare_threads = ThreadPoolExecutor(
            driver.prepare_concurrency, thread_name_prefix=f"turnstream-{driver.name}"
        )
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def holding(self, partitions: set[TopicPartition]) -> None:
        """Tell ``on_held`` the partitions this loop now holds."""
        if self._on_held is not None:
            await self._on_held(partitions)

    async def wait_idle(self, timeout: float) -> None:
        """Wait until every fetched batch is committed (or ``timeout`` passes)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout)

    async def run_forever(self, should_stop: Callable[[], bool]) -> None:
        """Run, and after a failure (or a cancellation nobody asked for: ``should_stop``
        is false) run again from the last commit after :data:`RESTART_DELAY`."""
        self.driver.liveness.started(time.time())
        try:
            await self._run_forever(should_stop)
        finally:
            self.driver.liveness.stopped()

    async def _run_forever(self, should_stop: Callable[[], bool]) -> None:
        while True:
            try:
                await self.run()
            except asyncio.CancelledError:
                if should_stop():
                    raise
                log.exception(
                    "the %s loop was cancelled; restarting it in %g s",
                    self.driver.name,
                    RESTART_DELAY,
                )
            except Exception as exc:
                log.exception(
                    "the %s loop failed; restarting it in %g s", self.driver.name, RESTART_DELAY
                )
                # A client that cannot reach the broker (start, send) is a broker failure:
                # over once the loop reaches the broker again (Liveness.reached).
                kind = "broker" if isinstance(exc, KafkaError | ConnectionError) else "crash"
                self.driver.liveness.failed(
                    _describe(exc), kind, time.time(), error_class=type(exc).__name__
                )
            await asyncio.sleep(RESTART_DELAY)

    async def run(self) -> None:
        """Consume, finish, send and commit until cancelled or failed."""
        w = self.settings.worker
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self.settings.broker.bootstrap,
            group_id=self.driver.group,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_poll_records=self.driver.max_records,
            session_timeout_ms=int(w.session_timeout * 1000),
            heartbeat_interval_ms=int(w.session_timeout * 250),
            **self.driver.consumer_options,
            **client_options(self.settings),
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=self.settings.broker.bootstrap,
            **self.driver.producer_options,
            **client_options(self.settings),
        )
        consumer.subscribe(list(self.driver.topics), listener=_Handover(self))
        try:
            # Bounded: the consumer's start waits without end for a group coordinator
            # while the broker is gone, and the loop would look up and idle.
            await asyncio.wait_for(consumer.start(), START_SECONDS)
            await asyncio.wait_for(producer.start(), START_SECONDS)
        except BaseException:
            await self._stop(producer, consumer)
            raise
        self.driver.liveness.reached(time.time(), idle=False)
        watch = asyncio.create_task(self._watch(consumer))
        # Batches fetched ahead, in fetch order, each as its prepare's future: as many
        # in the queue as may be prepared at once, and one more fetched.
        ready: asyncio.Queue[asyncio.Future[P]] = asyncio.Queue(
            maxsize=self.driver.prepare_concurrency
        )
        fetcher = asyncio.create_task(self._fetch(consumer, ready))
        get: asyncio.Future[P] | None = None
        # The previous batch's sends and commit, running while this batch is finished.
        delivering: asyncio.Task[None] | None = None
        committed: dict[TopicPartition, int] = {}
        try:
            while True:
                if get is None:
                    get = asyncio.ensure_future(_prepared(ready))
                watched: set[asyncio.Future[Any]] = {get, fetcher}
                if delivering is not None:
                    watched.add(delivering)
                await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
                if delivering is not None and delivering.done():
                    delivering, done = None, delivering
                    done.result()  # a send or commit that failed ends the run here
                if not get.done():
                    if fetcher.done():
                        fetcher.result()  # the fetcher failed: raise its error
                        raise RuntimeError(f"the {self.driver.name} fetcher stopped")
                    continue  # only the delivery finished: wait on for the next batch
                prepared, get = get.result(), None
                # Batch N+1's store work overlaps batch N's sends and commit: measured
                # (bench/batch_phases.py, 50,000 items, load 5), the sends and the commit
                # were 502 ms of a batch's 1,645 on the loop, the store thread idle for
                # them. Sends and commits still go strictly in batch order: N+1's start
                # once N's are acknowledged and committed.
                step = await self.driver.finish(prepared)
                if delivering is not None:
                    delivering, previous = None, delivering
                    await previous
                delivering = asyncio.create_task(self._deliver(producer, consumer, step, committed))
        finally:
            await self.holding(set())  # a stopped consumer holds nothing
            if get is not None and not get.done():
                get.cancel()
            if delivering is not None:
                delivering.cancel()
                with contextlib.suppress(BaseException):
                    await delivering
            fetcher.cancel()
            with contextlib.suppress(BaseException):
                await fetcher
            while not ready.empty():  # batches prepared for a run that ended: dropped
                left = ready.get_nowait()
                left.cancel()
                with contextlib.suppress(BaseException):
                    await left
            watch.cancel()  # waited for within a bound: a probe is a client call in flight
            await asyncio.wait({watch}, timeout=PROBE_SECONDS)
            self._in_flight = 0
            self._idle.set()
            await self._stop(producer, consumer)

    async def _deliver(
        self,
        producer: AIOKafkaProducer,
        consumer: AIOKafkaConsumer,
        step: Step,
        committed: dict[TopicPartition, int],
    ) -> None:
        """Send a finished batch's messages, then commit its offsets (the broker has the
        messages before the commit); the batch is then no longer in flight."""
        await send_all(producer, step.messages)
        if await self._commit(consumer, step, committed):
            self.driver.liveness.progressed(time.time())
        if step.done is not None:
            step.done()
        self._in_flight -= 1
        if self._in_flight <= 0:
            self._in_flight = 0
            self._idle.set()

    async def _stop(self, producer: AIOKafkaProducer, consumer: AIOKafkaConsumer) -> None:
        # Side by side, each within a bound: with the broker down, a plain stop waits
        # for the producer's unsent batches to time out (40 s).
        name = self.driver.name
        await asyncio.gather(
            stop_within(producer, f"{name} producer"),
            stop_within(consumer, f"{name} consumer"),
        )

    async def _fetch(
        self, consumer: AIOKafkaConsumer, ready: asyncio.Queue[asyncio.Future[P]]
    ) -> None:
        loop = asyncio.get_running_loop()
        while True:
            fetched = await consumer.getmany(
                timeout_ms=int(self.driver.poll_seconds() * 1000),
                max_records=self.driver.max_records,
            )
            messages = [m for batch in fetched.values() for m in batch]
            if not messages and not self.driver.tick_when_idle:
                continue
            self._in_flight += 1
            self._idle.clear()
            prepared: asyncio.Future[P]
            if messages:
                # Not awaited here: the next batch is fetched (and its prepare started)
                # while this one is prepared; the queue keeps them in fetch order.
                prepared = loop.run_in_executor(
                    self._prepare_threads, self.driver.prepare, messages
                )
            else:
                prepared = loop.create_future()
                prepared.set_result(self.driver.prepare(messages))
            await ready.put(prepared)

    async def _watch(self, consumer: AIOKafkaConsumer) -> None:
        """Every :data:`PROBE_SECONDS`, whether the broker answers a metadata request (in
        as long), noted in the driver's liveness: a fetch waits alike on an idle topic
        and on a broker that is gone (and, for an assignment, without end)."""
        while True:
            await asyncio.sleep(PROBE_SECONDS)
            try:
                await asyncio.wait_for(consumer.topics(), PROBE_SECONDS)
            except (KafkaError, OSError, TimeoutError) as exc:
                self.driver.liveness.failed(
                    _describe(exc) if str(exc) else f"{type(exc).__name__}: no answer",
                    "broker",
                    time.time(),
                    error_class=type(exc).__name__,
                )
                continue
            self.driver.liveness.reached(time.time(), idle=self._in_flight == 0)

    async def _commit(
        self, consumer: AIOKafkaConsumer, step: Step, committed: dict[TopicPartition, int]
    ) -> bool:
        """Commit the step's offsets that moved since the last commit; True when some
        did (progress), False when none moved or the commit failed: an idle tick is no
        progress, so it does not hide a broker the loop cannot reach."""
        advance = {tp: o for tp, o in step.offsets.items() if committed.get(tp) != o}
        if not advance:
            return False
        try:
            await consumer.commit(advance)
            committed.update(advance)
            return True
        except (CommitFailedError, KafkaError) as exc:
            # A rebalance took the partitions: the next owner consumes from the last
            # commit again, and the idempotent sinks make that a no-op.
            log.warning(
                "%s commit failed, the batch will be consumed again: %s", self.driver.name, exc
            )
            return False


async def _prepared(ready: asyncio.Queue[asyncio.Future[P]]) -> P:
    """The next fetched batch, once prepared (its prepare's error, if it failed)."""
    return await (await ready.get())


def _describe(exc: BaseException) -> str:
    """One line for the liveness record: the exception's class and message."""
    return short_message(f"{type(exc).__name__}: {exc}")
