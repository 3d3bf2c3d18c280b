"""Evidence counters: per value, per size, per ref, and the window of folded keys.

Weights are counted as integer millionths, so sums do not depend on the order of folding
(float addition is not associative).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from turnstream.core.derivation.events import format_time, parse_time

__all__ = [
    "MICRO",
    "KeyWindow",
    "Keyed",
    "RefStats",
    "SizeStats",
    "ValueStats",
    "later",
    "parse_or_none",
    "remember",
    "time_or_none",
    "to_micro",
]

#: Evidence counts weights in millionths.
MICRO = 1_000_000

Keyed = list[tuple[datetime, str]]
"""Idempotency keys with their ``occurred_at``, oldest first."""


def remember(keys: Keyed, when: datetime, key: str, limit: int) -> None:
    """Add ``key`` to ``keys`` (once), keeping the latest ``limit`` by time then key."""
    if any(k == key for _, k in keys):
        return
    bisect.insort(keys, (when, key))
    if len(keys) > limit:
        del keys[: len(keys) - limit]


def _keyed_to(keys: Keyed) -> list[list[str]]:
    return [[format_time(when), key] for when, key in keys]


def _keyed_from(data: Iterable[list[str]]) -> Keyed:
    return [(parse_time(when), key) for when, key in data]


def to_micro(value: float) -> int:
    """``value`` in millionths."""
    return round(value * MICRO)


def later(a: datetime | None, b: datetime) -> datetime:
    """The later of two times (``a`` may be missing)."""
    return b if a is None or b > a else a


def time_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else format_time(moment)


def parse_or_none(text: str | None) -> datetime | None:
    return None if text is None else parse_time(text)


def _union(a: Keyed, b: Keyed) -> Keyed:
    """Two keys lists as one, oldest first, each key once."""
    return sorted(set(a) | set(b))


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else later(a, b) if b is not None else a


@dataclass
class KeyWindow:
    """The idempotency keys already folded: the latest ``limit`` by ``occurred_at``."""

    keys: dict[str, datetime] = field(default_factory=dict)
    _order: Keyed = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._order = sorted((when, key) for key, when in self.keys.items())

    def __contains__(self, key: object) -> bool:
        return key in self.keys

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, key: str, when: datetime, limit: int) -> None:
        """Remember ``key``; past ``limit`` keys, forget the oldest."""
        if key in self.keys:
            return
        self.keys[key] = when
        bisect.insort(self._order, (when, key))
        while len(self._order) > limit:
            _, oldest = self._order.pop(0)
            del self.keys[oldest]

    def forget_before(self, cut: datetime) -> int:
        """Forget the keys of events that occurred before ``cut``; how many."""
        old = bisect.bisect_left(self._order, (cut, ""))
        for _, key in self._order[:old]:
            del self.keys[key]
        del self._order[:old]
        return old

    def to_dict(self) -> list[list[str]]:
        return _keyed_to(self._order)

    @classmethod
    def from_dict(cls, data: Iterable[list[str]]) -> KeyWindow:
        return cls({key: when for when, key in _keyed_from(data)})


@dataclass
class ValueStats:
    """Evidence of one ``(attr, value)`` in one bucket."""

    exposure_micro: int = 0
    signal_micro: int = 0
    events: int = 0
    sessions: set[str] = field(default_factory=set)
    origin: Keyed = field(default_factory=list)
    last_occurred_at: datetime | None = None

    def copy(self) -> ValueStats:
        """A copy whose counts change apart from this one's."""
        return ValueStats(
            self.exposure_micro,
            self.signal_micro,
            self.events,
            set(self.sessions),
            list(self.origin),
            self.last_occurred_at,
        )

    def merged(self, other: ValueStats) -> ValueStats:
        """This value's counts and ``other``'s as one value's (two spellings of one value,
        :mod:`.spellings`). The origin keeps both keys lists whole."""
        return ValueStats(
            self.exposure_micro + other.exposure_micro,
            self.signal_micro + other.signal_micro,
            self.events + other.events,
            self.sessions | other.sessions,
            _union(self.origin, other.origin),
            _latest(self.last_occurred_at, other.last_occurred_at),
        )

    @property
    def effective_exposure(self) -> float:
        return self.exposure_micro / MICRO

    @property
    def weighted_signal(self) -> float:
        return self.signal_micro / MICRO

    def to_dict(self) -> dict[str, Any]:
        return {
            "exposure_micro": self.exposure_micro,
            "signal_micro": self.signal_micro,
            "events": self.events,
            "sessions": sorted(self.sessions),
            "origin": _keyed_to(self.origin),
            "last_occurred_at": time_or_none(self.last_occurred_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ValueStats:
        return cls(
            exposure_micro=data["exposure_micro"],
            signal_micro=data["signal_micro"],
            events=data["events"],
            sessions=set(data["sessions"]),
            origin=_keyed_from(data["origin"]),
            last_occurred_at=parse_or_none(data["last_occurred_at"]),
        )


@dataclass
class SizeStats:
    """Net count of one size (``+1`` purchase or kept, ``-1`` returned for size)."""

    net: int = 0
    events: int = 0
    sessions: set[str] = field(default_factory=set)
    origin: Keyed = field(default_factory=list)
    last_occurred_at: datetime | None = None

    def copy(self) -> SizeStats:
        """A copy whose counts change apart from this one's."""
        return SizeStats(
            self.net, self.events, set(self.sessions), list(self.origin), self.last_occurred_at
        )

    def merged(self, other: SizeStats) -> SizeStats:
        """This size's counts and ``other``'s as one size's (two spellings of one size in a
        state saved before they were one). The origin keeps both keys lists whole: the
        next count of the size keeps its latest ``max_origin_events``."""
        return SizeStats(
            self.net + other.net,
            self.events + other.events,
            self.sessions | other.sessions,
            _union(self.origin, other.origin),
            _latest(self.last_occurred_at, other.last_occurred_at),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "net": self.net,
            "events": self.events,
            "sessions": sorted(self.sessions),
            "origin": _keyed_to(self.origin),
            "last_occurred_at": time_or_none(self.last_occurred_at),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SizeStats:
        return cls(
            net=data["net"],
            events=data["events"],
            sessions=set(data["sessions"]),
            origin=_keyed_from(data["origin"]),
            last_occurred_at=parse_or_none(data["last_occurred_at"]),
        )


@dataclass
class RefStats:
    """Evidence of one ref in one bucket. ``latest`` points at its latest presentation."""

    exposures: int = 0
    exposure_micro: int = 0
    engagements: int = 0
    engagement_micro: int = 0
    feedback: int = 0
    outcomes: int = 0
    sessions: set[str] = field(default_factory=set)
    exposure_keys: Keyed = field(default_factory=list)
    engaged_keys: Keyed = field(default_factory=list)
    latest: tuple[str, int, int] | None = None  # (exposure_id, page, pos)

    def copy(self) -> RefStats:
        """A copy whose counts change apart from this one's."""
        return RefStats(
            self.exposures,
            self.exposure_micro,
            self.engagements,
            self.engagement_micro,
            self.feedback,
            self.outcomes,
            set(self.sessions),
            list(self.exposure_keys),
            list(self.engaged_keys),
            self.latest,
        )

    @property
    def effective_exposure(self) -> float:
        return self.exposure_micro / MICRO

    def to_dict(self) -> dict[str, Any]:
        return {
            "exposures": self.exposures,
            "exposure_micro": self.exposure_micro,
            "engagements": self.engagements,
            "engagement_micro": self.engagement_micro,
            "feedback": self.feedback,
            "outcomes": self.outcomes,
            "sessions": sorted(self.sessions),
            "exposure_keys": _keyed_to(self.exposure_keys),
            "engaged_keys": _keyed_to(self.engaged_keys),
            "latest": list(self.latest) if self.latest else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RefStats:
        latest = data["latest"]
        return cls(
            exposures=data["exposures"],
            exposure_micro=data["exposure_micro"],
            engagements=data["engagements"],
            engagement_micro=data["engagement_micro"],
            feedback=data["feedback"],
            outcomes=data["outcomes"],
            sessions=set(data["sessions"]),
            exposure_keys=_keyed_from(data["exposure_keys"]),
            engaged_keys=_keyed_from(data["engaged_keys"]),
            latest=(latest[0], latest[1], latest[2]) if latest else None,
        )
