"""Whether a loop makes progress: its last error, since when it has been failing, and the
offsets it is stuck on. Pure: times are passed in (seconds since the epoch).

A loop that retries with back-off (a store outage, a broken schema) or restarts (a
broker outage) answers ``/v1/status`` all along; this record is how an operator, and
``turnstream wait``, tell a worker that fails from one that is only behind.

:func:`health` turns the records into the answer of ``/v1/status``: 503 once a loop has
been retrying longer than the grace (or is stopped), or the store has been unreachable
that long; 200 otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = ["PUBLIC_MESSAGES", "Health", "Liveness", "first_offsets", "health"]

State = Literal["starting", "running", "retrying", "stopped"]

#: What the open ``/v1/status`` says of a failure, by kind, instead of the error's own
#: text (a store's message may quote a producer's data; a client's, an address).
PUBLIC_MESSAGES: dict[str, str] = {
    "transient": "the store failed; retrying with back-off",
    "broken": "the store needs an operator (schema, access); retrying",
    "refused": "the store refused a write; retrying",
    "broker": "the broker is unreachable; retrying",
    "crash": "the loop failed and restarts",
    "unreachable": "the store does not answer",
}


def _iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat()


def first_offsets(positions: Iterable[tuple[str, int, int]]) -> dict[tuple[str, int], int]:
    """The lowest offset per (topic, partition) of ``(topic, partition, offset)`` triples:
    where a batch that cannot finish is stuck (its offsets are not committed)."""
    first: dict[tuple[str, int], int] = {}
    for topic, partition, offset in positions:
        tp = (topic, partition)
        if offset < first.get(tp, offset + 1):
            first[tp] = offset
    return first


@dataclass
class Liveness:
    """One loop's record of failures and progress."""

    #: Whether the loop's task runs (False before it starts and after it stops).
    running: bool = False
    #: When the task started (a loop that never reached the broker is ``starting``).
    started_at: float | None = None
    #: When the loop started failing (None while it makes progress).
    failing_since: float | None = None
    failures: int = 0
    last_error: str | None = None
    #: The class of the last error (``KafkaConnectionError``, ``StoreError``): shown to
    #: anyone, where ``last_error`` is shown to operators only.
    last_error_class: str | None = None
    last_error_at: float | None = None
    #: transient, broken, refused (see ``adapters/clickhouse/failures.py``), ``broker`` (the broker
    #: did
    #: not answer), or ``crash`` for a loop that failed outright and restarts.
    last_failure: str | None = None
    stuck_at: dict[tuple[str, int], int] = field(default_factory=dict)
    last_progress_at: float | None = None
    #: When the loop last heard from the broker (a fetch that found nothing, then an
    #: answered metadata request): how fresh its group membership may be.
    last_contact_at: float | None = None

    def failed(
        self,
        error: str,
        kind: str,
        now: float,
        stuck_at: dict[tuple[str, int], int] | None = None,
        error_class: str | None = None,
    ) -> None:
        """Note a failure; ``stuck_at``: the first offsets of the batch that met it;
        ``error_class``: the exception's class name."""
        if self.failing_since is None:
            self.failing_since = now
            self.failures = 0
        self.failures += 1
        self.last_error = error
        self.last_error_class = error_class
        self.last_error_at = now
        self.last_failure = kind
        if stuck_at is not None:
            self.stuck_at = dict(stuck_at)

    def progressed(self, now: float) -> None:
        """Note progress (a committed batch): the loop is no longer failing. The last
        error stays, for the record."""
        self.failing_since = None
        self.failures = 0
        self.stuck_at = {}
        self.last_progress_at = now

    def reached(self, now: float, idle: bool = True) -> None:
        """Note that the loop reached the broker: a ``broker`` failure is over, and so
        is a ``crash`` when the loop is ``idle`` (up again with nothing in flight: a
        batch that makes it crash again keeps it failing). A store failure stays until
        a batch commits: the batch is still held."""
        self.last_contact_at = now
        if self.last_failure == "broker" or (idle and self.last_failure == "crash"):
            self.failing_since = None
            self.failures = 0
            self.stuck_at = {}

    def started(self, now: float) -> None:
        """The loop's task runs from ``now``."""
        self.running = True
        self.started_at = now

    def stopped(self) -> None:
        """The loop's task ended (the worker stops)."""
        self.running = False

    def state(self) -> State:
        """``stopped``; ``retrying`` (failing since :attr:`failing_since`); ``starting``
        (running, and has not reached the broker yet); or ``running``."""
        if not self.running:
            return "stopped"
        if self.failing_since is not None:
            return "retrying"
        if self.last_contact_at is None and self.last_progress_at is None:
            return "starting"
        return "running"

    def failing_for(self, now: float) -> float:
        """Seconds the loop has been failing (0 while it makes progress); a loop still
        starting counts from its start (one that never reaches the broker fails)."""
        since = self.failing_since
        if since is None and self.state() == "starting":
            since = self.started_at
        return 0.0 if since is None else max(0.0, now - since)

    def as_dict(self, now: float, detail: bool = True) -> dict[str, Any]:
        """What ``/v1/status`` shows; without ``detail`` (no operator's key) the error's
        own text is replaced by what :data:`PUBLIC_MESSAGES` says of its kind."""
        if detail or self.last_failure is None:
            error = self.last_error
        else:
            error = PUBLIC_MESSAGES.get(self.last_failure, "failed")
        return {
            "state": self.state(),
            "failing_since": _iso(self.failing_since),
            "failing_seconds": round(self.failing_for(now), 1),
            "failures": self.failures,
            "last_error": error,
            "last_error_class": self.last_error_class,
            "last_error_at": _iso(self.last_error_at),
            "last_failure": self.last_failure,
            "stuck_at": [
                {"topic": topic, "partition": partition, "offset": offset}
                for (topic, partition), offset in sorted(self.stuck_at.items())
            ],
            "last_progress_at": _iso(self.last_progress_at),
            "last_contact_at": _iso(self.last_contact_at),
        }


@dataclass(frozen=True)
class Health:
    """The verdict of :func:`health`: the HTTP status and what is failing."""

    status: int
    #: The names of the loops (and ``store``) failing past the grace, or stopped.
    failing: tuple[str, ...]


def health(parts: dict[str, Liveness], now: float, grace: float) -> Health:
    """503 when any of ``parts`` (the loops by name, and the store) is stopped or has been
    failing for more than ``grace`` seconds, naming them; 200 otherwise. A failure
    shorter than the grace (one store retry, a rebalance, a restart) stays 200: the
    worker is behind, not broken."""
    failing = tuple(
        name
        for name, live in parts.items()
        if live.state() == "stopped" or live.failing_for(now) > grace
    )
    return Health(503 if failing else 200, failing)
