"""Pending sessions, triggers and derivation, driven by a clock the caller passes in.

The live driver passes processing time, the replay driver ``occurred_at``; both get the
same inferences once every event is folded, because derivation depends only on the
folded evidence, never on when a trigger fired.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from turnstream.streams.signals.config import SignalsConfig
from turnstream.streams.signals.events import SignalEvent
from turnstream.streams.signals.exposure import ExposedItem
from turnstream.streams.signals.inference import Inference, derive
from turnstream.streams.signals.state import ProfileState, fold
from turnstream.streams.signals.triggers import PendingSession, add_pending, due

__all__ = ["Derivation", "Held", "SignalsEngine"]

SessionKey = tuple[str, str]


@dataclass(frozen=True)
class Held:
    """A pending event and where it came from (the driver's own position, if any)."""

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


@dataclass
class SignalsEngine:
    """Holds pending events per person and session; folds and derives when due."""

    config: SignalsConfig
    #: The latest priors of a space ((attr, value) -> rate); none: the neutral prior.
    priors_for: Callable[[str], Mapping[tuple[str, str], float]] = lambda _space: {}
    load_state: Callable[[str], ProfileState | None] = lambda _profile: None
    states: dict[str, ProfileState] = field(default_factory=dict)
    pending: dict[SessionKey, PendingSession] = field(default_factory=dict)
    held: dict[SessionKey, list[Held]] = field(default_factory=dict)

    def offer(self, event: SignalEvent, received_at: datetime, position: Any = None) -> None:
        """Hold an event until its session's derivation fires."""
        key = (event.profile_id, event.session)
        self.pending[key] = add_pending(
            self.pending.get(key),
            received_at,
            event.idempotency_key,
            profile_id=event.profile_id,
            session=event.session,
        )
        self.held.setdefault(key, []).append(Held(event, position))

    def due_sessions(self, now: datetime) -> list[SessionKey]:
        """The sessions whose trigger is due at ``now``."""
        return [key for key, p in self.pending.items() if due(p, now, self.config)]

    def fire_due(self, now: datetime) -> list[Derivation]:
        """Fire every session due at ``now``."""
        return self.fire(self.due_sessions(now))

    def fire_all(self) -> list[Derivation]:
        """Fire every pending session (the clock moved past every trigger)."""
        return self.fire(list(self.pending))

    def fire(self, keys: Iterable[SessionKey]) -> list[Derivation]:
        """Fold the sessions' held events and derive for each person touched."""
        touched: dict[str, None] = {}
        erased: set[str] = set()
        for key in keys:
            self.pending.pop(key, None)
            for held in self.held.pop(key, []):
                state = self._state(held.event.profile_id)
                fold(state, held.event, self.config)
                touched[held.event.profile_id] = None
                if held.event.kind == "command" and held.event.name == "erase":
                    erased.add(held.event.profile_id)
        out = []
        for profile_id in touched:
            state = self.states[profile_id]
            if state.space_id is None:
                continue
            if profile_id in erased:
                # Nothing of the person is kept, not even the state that says so, nor
                # what other sessions of theirs still held.
                self.states.pop(profile_id)
                for key in [k for k in self.pending if k[0] == profile_id]:
                    self.pending.pop(key, None)
                    self.held.pop(key, None)
                out.append(Derivation(profile_id, state.space_id, [], [], state, erased=True))
                continue
            before = dict(state.inferences)
            inferences = derive(state, self.priors_for(state.space_id), self.config)
            current = {i.id for i in inferences}
            # An inference whose rule no longer holds (or whose person opted out) is
            # retracted, so a store that keeps one row per id never keeps a stale one.
            inferences += [
                replace(old, status="retracted", weight=0.0)  # type: ignore[arg-type]
                for iid, old in before.items()
                if iid not in current
            ]
            exposures = [e for for_ in sorted(state.buckets) for e in state.exposures(for_)]
            out.append(Derivation(profile_id, state.space_id, exposures, inferences, state))
        return out

    def forget(self, lost: Callable[[Any], bool]) -> int:
        """Drop the sessions holding an event whose position is ``lost`` (a partition
        another worker now owns), and the states of their people; returns how many."""
        keys = [k for k, items in self.held.items() if any(lost(h.position) for h in items)]
        for key in keys:
            self.pending.pop(key, None)
            self.held.pop(key, None)
            self.states.pop(key[0], None)
        return len(keys)

    def held_positions(self) -> list[Any]:
        """Positions of every event still pending (what the live driver may not commit)."""
        return [h.position for items in self.held.values() for h in items]

    def _state(self, profile_id: str) -> ProfileState:
        state = self.states.get(profile_id)
        if state is None:
            state = self.load_state(profile_id) or ProfileState()
            self.states[profile_id] = state
        return state
