"""Time at the edges: an item dated outside what the store keeps is refused, never lost.

The raw ``interactions`` table deletes a row ``RAW_KEEP_DAYS`` after its ``occurred_at``
(its TTL): a row older than that vanished on insert, without a trace. An item dated
further ahead than the configured skew would sit in the tables as a future event (and
years past 2299 do not fit the store's ``DateTime64`` columns). Both go to the dead
letters instead, with a reason that says so. The same edges hold for every producer
time a row is dated by: a presented list's ``delivered_at`` dates its ``exposure_items``
rows (their TTL), so one delivered 50 days ago vanished on insert, and one of year 0001
or 2350 got a TTL its ``DateTime`` cannot hold (it wraps, to 2042 or 2077). Pure: the
time is passed in (the batch's received time live, the replay's start in a replay: the
TTL counts from the store's clock, not from the file's event time).
"""

from __future__ import annotations

from datetime import datetime, timedelta

__all__ = [
    "ERASE_TOMBSTONE_DAYS",
    "KEY_KEEP_DAYS",
    "RAW_KEEP_DAYS",
    "Edge",
    "inside",
    "key_kept_from",
    "time_edge",
]

#: Days the raw tables keep an item after its ``occurred_at`` (the ``interactions``
#: TTL, ``core/tables.py``; a test holds the two together).
RAW_KEEP_DAYS = 45

#: Days an erase tombstone is kept after its ``erased_through``. It drops an item of the
#: erased person that occurred at or before the erase; 45 days after it, any such item is
#: refused as ``past_retention`` before the tombstone is read, so the tombstone has no
#: more to drop. The 7 days beyond cover an item accepted just inside the window that the
#: derivation driver reads from a backlog after a restart (a stalled worker is an alert
#: long before that).
ERASE_TOMBSTONE_DAYS = RAW_KEEP_DAYS + 7

#: Days an idempotency key is kept after :func:`key_kept_from`: past the day its item
#: stops being accepted (``occurred_at`` + ``RAW_KEEP_DAYS``), so a signed record sent
#: again while its date is still inside the window is a duplicate, never a second item.
KEY_KEEP_DAYS = RAW_KEEP_DAYS + 1


def key_kept_from(occurred_at: datetime | None, taken_at: datetime) -> datetime:
    """When an idempotency key's :data:`KEY_KEEP_DAYS` start: the later of its item's
    ``occurred_at`` (an item dated ahead is accepted until that date plus the window)
    and when the key was taken (``occurred_at`` None: a digest of bytes refused whole)."""
    if occurred_at is None or occurred_at < taken_at:
        return taken_at
    return occurred_at


class Edge:
    """Which edge an item fell past: the reasons' values (``core/ingest.Reason``)."""

    too_old = "past_retention"
    too_far_ahead = "ahead_of_clock"


def time_edge(
    at: datetime,
    now: datetime,
    max_ahead: timedelta,
    keep_days: int = RAW_KEEP_DAYS,
    path: str = "occurred_at",
) -> tuple[str, str] | None:
    """The edge the time ``at`` (the field at ``path``) falls past, with a message naming
    the limit, judged at ``now``; ``None`` when it is inside.

    Too old: ``at`` at or before ``now - keep_days`` (a row the TTL would delete at
    once). Too far ahead: after ``now + max_ahead``. Both datetimes must be aware (the
    models parse every producer time with its zone)."""
    oldest, latest = inside(now, max_ahead, keep_days)
    if at <= oldest:
        age = now - at
        field = path.rpartition(".")[2]
        return Edge.too_old, (
            f"{path} {_iso(at)} is {_span(age)} before it was received "
            f"({_iso(now)}); the raw tables keep {keep_days} days after {field}, "
            "so its rows would be deleted on insert"
        )
    if at > latest:
        ahead = at - now
        return Edge.too_far_ahead, (
            f"{path} {_iso(at)} is {_span(ahead)} after it was received "
            f"({_iso(now)}); at most {_span(max_ahead)} ahead is accepted "
            "(worker.occurred_at_max_ahead): check the producer's clock"
        )
    return None


def inside(
    now: datetime, max_ahead: timedelta, keep_days: int = RAW_KEEP_DAYS
) -> tuple[datetime, datetime]:
    """The edges judged at ``now``: a time after the first and at or before the second
    falls past neither (:func:`time_edge` is ``None``)."""
    return now - timedelta(days=keep_days), now + max_ahead


def _iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def _span(delta: timedelta) -> str:
    """``3 days 04:05:06`` or ``04:05:06`` (whole seconds)."""
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    if days:
        return f"{days:,} day{'s' if days != 1 else ''} {clock}"
    return clock
