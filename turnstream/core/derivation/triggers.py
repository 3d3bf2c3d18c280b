"""Triggers: when the pending items of one session fire derivation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.events import format_time, parse_time

__all__ = ["PendingSession", "add_pending", "due", "next_due_at", "split_due"]

K = TypeVar("K")


@dataclass(frozen=True)
class PendingSession:
    """The items of one person's session received since derivation last fired.

    "Received" is processing time live and ``occurred_at`` in replay: the caller says.
    """

    profile_id: str
    session: str
    first_received: datetime
    last_received: datetime
    count: int
    keys: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form, read back by :meth:`from_dict`."""
        return {
            "profile_id": self.profile_id,
            "session": self.session,
            "first_received": format_time(self.first_received),
            "last_received": format_time(self.last_received),
            "count": self.count,
            "keys": list(self.keys),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingSession:
        return cls(
            profile_id=data["profile_id"],
            session=data["session"],
            first_received=parse_time(data["first_received"]),
            last_received=parse_time(data["last_received"]),
            count=data["count"],
            keys=tuple(data["keys"]),
        )


def add_pending(
    pending: PendingSession | None,
    received_at: datetime,
    key: str,
    *,
    profile_id: str | None = None,
    session: str | None = None,
) -> PendingSession:
    """``pending`` with one more item (a key already pending counts once).

    With no ``pending`` yet, ``profile_id`` and ``session`` say whose it is. The oldest
    and newest times are the minimum and maximum received, whatever the order of calls.
    """
    received_at = parse_time(received_at)
    if pending is None:
        if profile_id is None or session is None:
            raise ValueError("a new pending session needs its profile_id and session")
        return PendingSession(profile_id, session, received_at, received_at, 1, (key,))
    if key in pending.keys:
        return pending
    # The constructor, not dataclasses.replace (which reads the fields anew each call).
    return PendingSession(
        pending.profile_id,
        pending.session,
        min(pending.first_received, received_at),
        max(pending.last_received, received_at),
        pending.count + 1,
        (*pending.keys, key),
    )


def due(pending: PendingSession | None, now: datetime, config: SignalsConfig) -> bool:
    """Whether derivation fires for this session at ``now``.

    It does when the oldest pending item was received ``oldest_pending_seconds`` ago or
    more, or the newest ``quiet_seconds`` ago or more; never with nothing pending.
    """
    if pending is None or pending.count == 0:
        return False
    return now >= next_due_at(pending, config)


def next_due_at(pending: PendingSession, config: SignalsConfig) -> datetime:
    """When :func:`due` first becomes true, if nothing else arrives."""
    return min(
        pending.first_received + timedelta(seconds=config.oldest_pending_seconds),
        pending.last_received + timedelta(seconds=config.quiet_seconds),
    )


def split_due(
    pending: Mapping[K, PendingSession], now: datetime, config: SignalsConfig
) -> tuple[list[PendingSession], dict[K, PendingSession]]:
    """Fire what is due: the due sessions (by key order) and what stays pending.

    Firing empties a session's pending list, so the fired ones are not in the rest.
    """
    fired: list[PendingSession] = []
    rest: dict[K, PendingSession] = {}
    for key, session in pending.items():
        if due(session, now, config):
            fired.append(session)
        else:
            rest[key] = session
    return fired, rest
