"""The pure core of signals derivation: exposures, triggers, evidence and inferences.

Standard library and pydantic only; no Faust, no store, no clock (time is passed in),
so the live driver and the replay driver run the same rules (docs/signals.md).
"""

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import derive
from turnstream.core.derivation.events import (
    SignalEvent,
    events_from_accepted,
    format_time,
    holds_no_events,
    parse_time,
    session_of,
)
from turnstream.core.derivation.evidence import KeyWindow, RefStats, SizeStats, ValueStats
from turnstream.core.derivation.exposure import (
    AlreadyPresented,
    ExposedItem,
    Page,
    ShownItem,
    already_presented,
    exposed_items,
    exposed_positions,
    is_exposed,
    weight,
    weight_micro,
)
from turnstream.core.derivation.inference import Evidence, Inference, inference_id
from turnstream.core.derivation.state import BucketState, ProfileState, fold
from turnstream.core.derivation.triggers import (
    PendingSession,
    add_pending,
    due,
    next_due_at,
    split_due,
)
from turnstream.core.derivation.values import attr_of, ref_type, size_key, value_key

__all__ = [
    "AlreadyPresented",
    "BucketState",
    "Evidence",
    "ExposedItem",
    "Inference",
    "KeyWindow",
    "Page",
    "PendingSession",
    "ProfileState",
    "RefStats",
    "ShownItem",
    "SignalEvent",
    "SignalsConfig",
    "SizeStats",
    "ValueStats",
    "add_pending",
    "already_presented",
    "attr_of",
    "derive",
    "due",
    "events_from_accepted",
    "exposed_items",
    "exposed_positions",
    "fold",
    "format_time",
    "holds_no_events",
    "inference_id",
    "is_exposed",
    "next_due_at",
    "parse_time",
    "ref_type",
    "session_of",
    "size_key",
    "split_due",
    "value_key",
    "weight",
    "weight_micro",
]
