"""Whether a loop makes progress: its last error, since when it has been failing, and the
offsets it is stuck on. Pure: times are passed in (seconds since the epoch).

A loop that retries with back-off (a store outage, a broken schema) or restarts (a
broker outage) answers ``/v1/status`` all along; this record is how an operator, and
``turnstream wait``, tell a worker that fails from one that is only behind.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

__all__ = ["Liveness", "first_offsets"]


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

    #: When the loop started failing (None while it makes progress).
    failing_since: float | None = None
    failures: int = 0
    last_error: str | None = None
    last_error_at: float | None = None
    #: transient, broken, refused (see ``sinks/failures.py``), or ``crash`` for a loop
    #: that failed outright and restarts.
    last_failure: str | None = None
    stuck_at: dict[tuple[str, int], int] = field(default_factory=dict)
    last_progress_at: float | None = None

    def failed(
        self,
        error: str,
        kind: str,
        now: float,
        stuck_at: dict[tuple[str, int], int] | None = None,
    ) -> None:
        """Note a failure; ``stuck_at``: the first offsets of the batch that met it."""
        if self.failing_since is None:
            self.failing_since = now
            self.failures = 0
        self.failures += 1
        self.last_error = error
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

    def failing_for(self, now: float) -> float:
        """Seconds the loop has been failing (0 while it makes progress)."""
        return 0.0 if self.failing_since is None else max(0.0, now - self.failing_since)

    def as_dict(self, now: float) -> dict[str, Any]:
        """What ``/v1/status`` shows."""
        return {
            "state": "ok" if self.failing_since is None else "failing",
            "failing_since": _iso(self.failing_since),
            "failing_seconds": round(self.failing_for(now), 1),
            "failures": self.failures,
            "last_error": self.last_error,
            "last_error_at": _iso(self.last_error_at),
            "last_failure": self.last_failure,
            "stuck_at": [
                {"topic": topic, "partition": partition, "offset": offset}
                for (topic, partition), offset in sorted(self.stuck_at.items())
            ],
            "last_progress_at": _iso(self.last_progress_at),
        }
