"""Pending sessions, triggers and derivation, driven by a clock the caller passes in.

The live driver passes processing time, the replay driver ``occurred_at``; both get the
same inferences once every event is folded, because derivation depends only on the
folded evidence, never on when a trigger fired.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from itertools import islice
from typing import Any, NamedTuple

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive
from turnstream.core.derivation.events import SignalEvent, parse_time
from turnstream.core.derivation.exposure import ExposedItem
from turnstream.core.derivation.field_prior import FieldPrior
from turnstream.core.derivation.inference import Inference
from turnstream.core.derivation.state import ProfileState, dispose_gift, fold
from turnstream.core.derivation.triggers import PendingSession, add_pending, due, next_due_at
from turnstream.core.derivation.window import cut_for, expire
from turnstream.models.object_types import ObjectTypes

__all__ = ["Derivation", "Held", "PersonKey", "SessionKey", "SignalsEngine"]

#: Whose state it is: ``(space_id, profile_id)``. A profile id is only unique in its space.
PersonKey = tuple[str, str]
#: One pending session: ``(space_id, profile_id, session)``.
SessionKey = tuple[str, str, str]


class Held(NamedTuple):
    """A pending event and where it came from (the driver's own position, if any).

    A named tuple, not a frozen dataclass: one is made per event held, and a tuple is
    made in a fraction of the time and memory (bench/offer_cost.py, bench/memory.py)."""

    event: SignalEvent
    position: Any = None


@dataclass(frozen=True)
class Derivation:
    """What one firing produced for one person."""

    profile_id: str
    space_id: str
    exposures: list[ExposedItem]
    inferences: list[Inference]
    state: ProfileState
    #: The person was erased: their derived rows are to be deleted, not written.
    erased: bool = False


#: The partition of a person whose events came from more than one.
_SEVERAL = object()


def _person(event: SignalEvent) -> PersonKey:
    return (event.space_id, event.profile_id)


def _is_erase(event: SignalEvent) -> bool:
    return event.kind == "command" and event.name == "erase"


@dataclass
class SignalsEngine:
    """Holds pending events per person and session; folds and derives when due.

    Due times are kept in a heap, so a tick costs the sessions that are due (plus a
    logarithmic step per session), not a scan of every pending session. Positions a
    driver passes as ``(partition, offset)`` are indexed per partition, so
    :meth:`oldest_held` answers without walking every held event.

    An ``erase`` leaves an erase tombstone (``(space_id, profile_id)`` -> the erase's
    ``occurred_at``): the person's state goes, and any event of theirs that occurred at
    or before the erase and is offered later is dropped (counted in
    ``dropped_erased``), so the erased past never starts a new state, in any order.
    """

    config: SignalsConfig
    #: The latest priors of a space ((attr, value) -> rate); none: the neutral prior.
    priors_for: Callable[[str], Mapping[tuple[str, str], float]] = lambda _space: {}
    #: The fitted priors of a space's fields (type.field -> prior); none: ``taste_prior``.
    field_priors_for: Callable[[str], Mapping[str, FieldPrior]] = lambda _space: {}
    #: Told that a space's priors were rewritten: the next ``priors_for`` and
    #: ``field_priors_for`` of the space read the new ones.
    priors_changed: Callable[[str], None] = lambda _space: None
    #: The object types document of a space; none: nothing is a taste (docs/signals.md).
    types_for: Callable[[str], ObjectTypes | None] = lambda _space: None
    #: The saved states of the people asked for (those who have one), all in one call:
    #: a firing asks once for every person it folds whose state is not in memory.
    load_states: Callable[[Sequence[PersonKey]], Mapping[PersonKey, ProfileState]] = (
        lambda _people: {}
    )
    #: States kept in memory at most, people with nothing pending evicted first, least
    #: recently derived first; None: no limit. Only for a driver that saves each
    #: derivation's state before the next firing (the live loop), so an evicted state
    #: is loaded back exactly as it was.
    max_states: int | None = None
    #: Every erase tombstone saved so far (read once, at the first offer or firing).
    load_tombstones: Callable[[], Mapping[PersonKey, datetime]] = lambda: {}
    #: Events dropped because they occurred at or before their person's erase.
    dropped_erased: int = 0
    states: dict[PersonKey, ProfileState] = field(default_factory=dict)
    pending: dict[SessionKey, PendingSession] = field(default_factory=dict)
    held: dict[SessionKey, list[Held]] = field(default_factory=dict)
    #: (due at, session) entries; an entry is current while ``_scheduled`` agrees.
    _heap: list[tuple[datetime, SessionKey]] = field(default_factory=list, repr=False)
    _scheduled: dict[SessionKey, datetime] = field(default_factory=dict, repr=False)
    #: partition -> heap of held offsets, and how many times each offset is held.
    _offsets: dict[Any, list[int]] = field(default_factory=dict, repr=False)
    _live: Counter[tuple[Any, int]] = field(default_factory=Counter, repr=False)
    #: Pending sessions per person (who may not be evicted).
    _sessions: Counter[PersonKey] = field(default_factory=Counter, repr=False)
    #: Per space: the config with its types added (``SignalsConfig.for_space``).
    _configs: dict[str, SignalsConfig] = field(default_factory=dict, repr=False)
    _tombstones: dict[PersonKey, datetime] | None = field(default=None, repr=False)
    #: Sessions holding an erase: due at once, whatever their quiet time (live, ingest
    #: has erased the store already; another session of the person firing meanwhile
    #: would write them back until the erase fired).
    _erasing: set[SessionKey] = field(default_factory=set, repr=False)
    #: Per person in memory (held or cached), the partition their events came from
    #: (positions given as ``(partition, offset)``); ``_SEVERAL`` when more than one.
    _partition_of: dict[PersonKey, Any] = field(default_factory=dict, repr=False)

    @property
    def tombstones(self) -> dict[PersonKey, datetime]:
        """Erase tombstones: person -> ``erased_through``."""
        if self._tombstones is None:
            self._tombstones = dict(self.load_tombstones())
        return self._tombstones

    def reload_tombstones(self) -> None:
        """Read the tombstones again at next use (another worker may have erased)."""
        self._tombstones = None

    def erased_before(self, event: SignalEvent) -> bool:
        """Whether ``event`` occurred at or before its person's erase (an ``erase``
        itself never is: erasing again is harmless)."""
        through = self.tombstones.get(_person(event)) if self.tombstones else None
        if through is None or event.occurred_at > through:
            return False
        return not _is_erase(event)

    def config_for(self, space_id: str) -> SignalsConfig:
        """``config`` with the sensitive types and fields, and the attribute fields (sizes
        an outcome's ``attrs`` may give), of the space's types added."""
        config = self._configs.get(space_id)
        if config is None:
            config = self.config.for_space(self.types_for(space_id))
            self._configs[space_id] = config
        return config

    def offer(self, event: SignalEvent, received_at: datetime, position: Any = None) -> None:
        """Hold an event until its session's derivation fires; drop (and count) one that
        occurred at or before its person's erase."""
        if self.tombstones and self.erased_before(event):
            self.dropped_erased += 1
            return
        key = (event.space_id, event.profile_id, event.session)
        if key not in self.pending:
            self._sessions[key[:2]] += 1
        pending = add_pending(
            self.pending.get(key),
            received_at,
            event.idempotency_key,
            profile_id=event.profile_id,
            session=event.session,
        )
        self.pending[key] = pending
        self.held.setdefault(key, []).append(Held(event, position))
        self._hold(position)
        if _is_offset(position):
            self._note_partition(key[:2], position[0])
        # New items only move the quiet trigger later, except an item received earlier
        # than the oldest (replay of an unsorted file): reschedule only when earlier.
        due_at = next_due_at(pending, self.config)
        if _is_erase(event):
            self._erasing.add(key)
            due_at = min(due_at, received_at)
        scheduled = self._scheduled.get(key)
        if scheduled is None or due_at < scheduled:
            self._scheduled[key] = due_at
            heapq.heappush(self._heap, (due_at, key))

    def offer_many(
        self, received_at: datetime, batch: Iterable[tuple[Any, Any, Sequence[SignalEvent]]]
    ) -> None:
        """Offer every event of ``batch`` (per ``(partition, offset, events)``) in order,
        all received at ``received_at`` and held at position ``(partition, offset)``: the
        engine ends exactly as after :meth:`offer` for each event in turn, but each
        session's pending items, due time and held list change once per call, and each
        position is counted once."""
        received_at = parse_time(received_at)
        groups: dict[SessionKey, list[Held]] = {}
        live = self._live
        tombstones = None  # read (and loaded) at the first event, as offer does
        for partition, offset, events in batch:
            if not events:
                continue
            position = (partition, offset)
            held = 0
            for event in events:
                if tombstones is None:
                    tombstones = self.tombstones
                if tombstones and self.erased_before(event):
                    self.dropped_erased += 1
                    continue
                key = (event.space_id, event.profile_id, event.session)
                group = groups.get(key)
                if group is None:
                    groups[key] = [Held(event, position)]
                else:
                    group.append(Held(event, position))
                held += 1
            if held and isinstance(offset, int):  # as _hold
                count = live.get(position)
                if not count:
                    heapq.heappush(self._offsets.setdefault(partition, []), offset)
                    count = 0
                live[position] = count + held
        if not groups:
            return
        oldest = timedelta(seconds=self.config.oldest_pending_seconds)
        quiet = timedelta(seconds=self.config.quiet_seconds)
        fresh_due = received_at + min(oldest, quiet)  # next_due_at of a new session
        pending, held_by, scheduled_by = self.pending, self.held, self._scheduled
        sessions, heap = self._sessions, self._heap
        part_of = self._partition_of
        for key, group in groups.items():
            # As _note_partition, inlined: a lookup per session and batch.
            part = group[0].position[0]
            known = part_of.setdefault(key[:2], part)
            if known is not part and known != part and known is not _SEVERAL:
                part_of[key[:2]] = _SEVERAL
            if len(group) > 1:
                for h in group:
                    if h.position[0] != part:
                        part_of[key[:2]] = _SEVERAL
                        break
            before = pending.get(key)
            if len(group) == 1:
                new: Sequence[str] = (group[0].event.idempotency_key,)
            else:
                new = tuple(dict.fromkeys(h.event.idempotency_key for h in group))
            if before is None:
                person = key[:2]
                sessions[person] = sessions.get(person, 0) + 1
                first = group[0].event
                now = PendingSession(
                    first.profile_id, first.session, received_at, received_at, len(new), new
                )
                held_by[key] = group
                due_at = fresh_due
            else:
                known = set(before.keys) if len(before.keys) > 8 else before.keys
                new = [k for k in new if k not in known]
                # A key already pending counts once (add_pending), and leaves the times.
                now = (
                    PendingSession(
                        before.profile_id,
                        before.session,
                        min(before.first_received, received_at),
                        max(before.last_received, received_at),
                        before.count + len(new),
                        (*before.keys, *new),
                    )
                    if new
                    else before
                )
                held_by.setdefault(key, []).extend(group)
                due_at = min(now.first_received + oldest, now.last_received + quiet)
            pending[key] = now
            if any(_is_erase(h.event) for h in group):  # as offer
                self._erasing.add(key)
                due_at = min(due_at, received_at)
            # As offer: reschedule only when earlier.
            scheduled = scheduled_by.get(key)
            if scheduled is None or due_at < scheduled:
                scheduled_by[key] = due_at
                heapq.heappush(heap, (due_at, key))

    def next_due(self) -> datetime | None:
        """When the next session may be due (never later than the real time; it may be
        earlier when newer items moved a session's quiet trigger)."""
        return self._heap[0][0] if self._heap else None

    def due_sessions(self, now: datetime) -> list[SessionKey]:
        """The sessions whose trigger is due at ``now`` (a scan; for inspection)."""
        return sorted(key for key, p in self.pending.items() if due(p, now, self.config))

    def fire_due(self, now: datetime) -> list[Derivation]:
        """Fire every session due at ``now``."""
        return self.fire(self._take_due(now))

    def fire_all(self) -> list[Derivation]:
        """Fire every pending session (the clock moved past every trigger)."""
        return self.fire(list(self.pending))

    def fire(self, keys: Iterable[SessionKey]) -> list[Derivation]:
        """Fold the sessions' held events and derive for each person touched."""
        keys = list(keys)
        self._load_states(key[:2] for key in keys)
        touched: dict[PersonKey, None] = {}
        erased: set[PersonKey] = set()
        for key in keys:
            for held in self._release(key):
                person = _person(held.event)
                fold(self.states[person], held.event, self.config_for(person[0]))
                touched[person] = None
                if _is_erase(held.event):
                    erased.add(person)
                    through = self.tombstones.get(person)
                    at = held.event.occurred_at
                    self.tombstones[person] = at if through is None else max(through, at)
        out = []
        for person in touched:
            state = self.states[person]
            if state.space_id is None:
                continue
            if person in erased:
                # Nothing of the person is kept, not even the state that says so, nor
                # what other sessions of theirs still held.
                self.states.pop(person)
                self._partition_of.pop(person, None)
                for key in [k for k in self.pending if k[:2] == person]:
                    self._release(key)
                out.append(Derivation(person[1], person[0], [], [], state, erased=True))
                continue
            inferences, before = self._derive(person, state)
            current = {i.id for i in inferences}
            # An inference whose rule no longer holds (or whose person opted out) is
            # retracted, so a store that keeps one row per id never keeps a stale one.
            inferences += _retracted(before, current)
            exposures = [e for for_ in sorted(state.buckets) for e in state.exposures(for_)]
            out.append(Derivation(person[1], person[0], exposures, inferences, state))
            self.states[person] = self.states.pop(person)  # most recently derived last
        self._evict()
        return out

    def rederive(
        self, people: Iterable[PersonKey], since: datetime | None = None
    ) -> tuple[list[Derivation], int]:
        """Derive ``people`` again on their folded states, with their spaces' priors read
        again first (``priors_changed``): the nightly job wrote new ones. Returns the
        derivations of the people whose inferences changed, and how many were derived.

        The state is the one in memory when the person's is (newer than the store's),
        else the saved one, which is not kept in memory. Each derivation is the one
        :meth:`fire` would make of the state, but holds only the inferences that changed
        (new, changed, retracted) and no exposures. Left out: a person without a state,
        erased since it was saved, or whose newest event is before ``since``."""
        people = list(dict.fromkeys(people))
        for space_id in dict.fromkeys(space for space, _ in people):
            self.priors_changed(space_id)
        missing = [p for p in people if p not in self.states]
        saved = self.load_states(missing) if missing else {}
        out = []
        derived = 0
        for person in people:
            state = self.states.get(person) or saved.get(person)
            if state is None or state.space_id is None or state.newest_occurred_at is None:
                continue
            if since is not None and state.newest_occurred_at < since:
                continue
            through = self.tombstones.get(person) if self.tombstones else None
            if through is not None and state.newest_occurred_at <= through:
                continue
            derived += 1
            inferences, before = self._derive(person, state)
            current = {i.id for i in inferences}
            changed = [i for i in inferences if before.get(i.id) != i]
            changed += _retracted(before, current)
            if changed:
                out.append(Derivation(person[1], person[0], [], changed, state))
        return out, derived

    def _derive(
        self, person: PersonKey, state: ProfileState
    ) -> tuple[list[Inference], dict[str, Inference]]:
        """The person's current inferences from their folded ``state`` (updated in place:
        the raw window's cut, the gift bucket's end, the set derived), and the set before."""
        before = dict(state.inferences)
        space_id = person[0]
        config = self.config_for(space_id)
        assert state.newest_occurred_at is not None  # a folded person has events
        expire(state, cut_for(state.newest_occurred_at, config), config)
        dispose_gift(state, config)
        inferences = derive(
            state,
            self.priors_for(space_id),
            config,
            self.types_for(space_id),
            self.field_priors_for(space_id),
        )
        return inferences, before

    def _evict(self) -> None:
        """Drop the least recently derived states of people with nothing pending."""
        if self.max_states is None or len(self.states) <= self.max_states:
            return
        excess = len(self.states) - self.max_states
        idle = list(islice((p for p in self.states if not self._sessions.get(p)), excess))
        for person in idle:
            del self.states[person]
            self._partition_of.pop(person, None)

    def forget(self, lost: Callable[[Any], bool]) -> int:
        """Drop the sessions holding an event whose position is ``lost`` (a partition
        another worker now owns), and the states of their people; returns how many."""
        keys = [k for k, items in self.held.items() if any(lost(h.position) for h in items)]
        for key in keys:
            self._release(key)
            self.states.pop(key[:2], None)
        return len(keys)

    def drop_partitions(self, partitions: Collection[Any]) -> tuple[int, int]:
        """``partitions`` are another member's now, or were meanwhile (a rebalance, a
        run that ended): release every session holding an event of theirs (consumed
        again from the last commit) and drop every cached state of a person whose events
        came from them, so the next firing reads the state from the store, never one this
        member cached before another derived from it. Returns (sessions, states) dropped.
        """
        if not partitions:
            return 0, 0
        before = len(self.states)
        sessions = self.forget(lambda position: _is_offset(position) and position[0] in partitions)
        people = [
            p for p, part in self._partition_of.items() if part is _SEVERAL or part in partitions
        ]
        for person in people:
            self.states.pop(person, None)
            if not self._sessions.get(person):  # still pending elsewhere: keep the mark
                del self._partition_of[person]
        return sessions, before - len(self.states)

    def partitions(self) -> set[Any]:
        """Every partition the engine holds an event or a person's state of."""
        marked = {p for p in self._partition_of.values() if p is not _SEVERAL}
        return marked | set(self.oldest_held())

    def held_positions(self) -> list[Any]:
        """Positions of every event still pending (a walk; for inspection)."""
        return [h.position for items in self.held.values() for h in items]

    def oldest_held(self) -> dict[Any, int]:
        """Per partition, the lowest offset still held (what a live driver may not
        commit past), for the positions given as ``(partition, offset)``."""
        out: dict[Any, int] = {}
        for partition, offsets in list(self._offsets.items()):
            while offsets and not self._live.get((partition, offsets[0])):
                heapq.heappop(offsets)
            if offsets:
                out[partition] = offsets[0]
            else:
                del self._offsets[partition]
        return out

    def _take_due(self, now: datetime) -> list[SessionKey]:
        """Pop the sessions due at ``now`` off the heap, in due order."""
        fired: list[SessionKey] = []
        while self._heap and self._heap[0][0] <= now:
            due_at, key = heapq.heappop(self._heap)
            if self._scheduled.get(key) != due_at:
                continue  # superseded by an earlier entry, or fired already
            actual = next_due_at(self.pending[key], self.config)
            if actual <= now or key in self._erasing:
                fired.append(key)
            else:  # newer items moved the quiet trigger: wait for the new time
                self._scheduled[key] = actual
                heapq.heappush(self._heap, (actual, key))
        return fired

    def _release(self, key: SessionKey) -> list[Held]:
        """Take a session's held events out of every index."""
        if self.pending.pop(key, None) is not None:
            self._sessions[key[:2]] -= 1
            if self._sessions[key[:2]] <= 0:
                del self._sessions[key[:2]]
        self._scheduled.pop(key, None)
        self._erasing.discard(key)
        held = self.held.pop(key, [])
        for h in held:
            if _is_offset(h.position):
                slot = (h.position[0], h.position[1])
                self._live[slot] -= 1
                if self._live[slot] <= 0:
                    del self._live[slot]
        return held

    def _note_partition(self, person: PersonKey, partition: Any) -> None:
        """Mark ``person``'s events as coming from ``partition`` (or from several)."""
        known = self._partition_of.setdefault(person, partition)
        if known is not _SEVERAL and known != partition:
            self._partition_of[person] = _SEVERAL

    def _hold(self, position: Any) -> None:
        if not _is_offset(position):
            return
        slot = (position[0], position[1])
        if not self._live[slot]:
            heapq.heappush(self._offsets.setdefault(slot[0], []), slot[1])
        self._live[slot] += 1

    def _load_states(self, people: Iterable[PersonKey]) -> None:
        """Put the state of each of ``people`` in memory: the saved one, read in one call
        for all those not in memory, or a new one."""
        missing = [p for p in dict.fromkeys(people) if p not in self.states]
        if not missing:
            return
        saved = self.load_states(missing)
        for person in missing:
            self.states[person] = saved.get(person) or ProfileState()


def _retracted(before: Mapping[str, Inference], current: Collection[str]) -> list[Inference]:
    """The inferences of ``before`` not in ``current``, retracted."""
    return [
        replace(old, status="retracted", weight=0.0)  # type: ignore[arg-type]
        for iid, old in before.items()
        if iid not in current
    ]


def _is_offset(position: Any) -> bool:
    return isinstance(position, tuple) and len(position) == 2 and isinstance(position[1], int)
