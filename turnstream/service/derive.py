"""The derivation use case: fire what is due, write it. Live fires on processing time
(``entrypoints/kafka/derivation_driver.py``), a replay on each event's ``occurred_at``
(``entrypoints/replay.py``); both through the same engine (:mod:`turnstream.core.derivation.engine`)
and the same writer."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from turnstream.core.derivation.engine import Derivation, SignalsEngine

__all__ = ["DerivationWriter", "derive_all", "derive_due", "derive_on_event_time"]


class DerivationWriter(Protocol):
    """Writes derivations (``adapters/clickhouse/derivations.DerivationSink``): an erased person's
    rows are deleted instead."""

    def write(self, derivations: list[Derivation]) -> dict[str, int]: ...


def derive_due(engine: SignalsEngine, sink: DerivationWriter, now: datetime) -> list[Derivation]:
    """Fire the sessions due at ``now`` and write their derivations. Blocking."""
    derivations = engine.fire_due(now)
    if derivations:
        sink.write(derivations)
    return derivations


def derive_on_event_time(
    engine: SignalsEngine, sink: DerivationWriter, events: Iterable[Any]
) -> list[Derivation]:
    """Offer ``events`` in order, each at its own ``occurred_at``, firing first what is
    due by then; write the derivations. Blocking."""
    derivations: list[Derivation] = []
    for event in events:
        derivations.extend(engine.fire_due(event.occurred_at))
        engine.offer(event, event.occurred_at)
    if derivations:
        sink.write(derivations)
    return derivations


def derive_all(engine: SignalsEngine, sink: DerivationWriter) -> list[Derivation]:
    """Fire every session held (the end of a replay) and write the derivations."""
    derivations = engine.fire_all()
    if derivations:
        sink.write(derivations)
    return derivations
