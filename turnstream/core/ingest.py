"""The ingest rule: bytes in, one decision out. Pure: no broker, no store, no clock."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from turnstream.config import Feature, Settings
from turnstream.core.exposure_tokens import TokenCheck, check_token
from turnstream.core.identity import resolve_profile
from turnstream.errors import InvalidItem
from turnstream.models import InteractionItem, Item, Outcome, Turn, parse_item

__all__ = [
    "Decision",
    "Reason",
    "Refusal",
    "Source",
    "decide",
    "dedup_key_for",
    "dedupe",
    "judge",
    "refused_by_store",
    "too_large_to_fan_out",
]


@dataclass(frozen=True, order=True)
class Source:
    """Where a message came from: the unit of idempotent sinking."""

    topic: str
    partition: int
    offset: int


class Reason(StrEnum):
    """Why an item (or part of one) went to dead letters."""

    invalid = "invalid"
    unknown_space = "unknown_space"
    signals_disabled = "signals_disabled"
    turns_disabled = "turns_disabled"
    #: Valid, but its accepted message would pass what the accepted topic takes.
    too_large = "too_large"
    #: Valid, but the store refuses its rows, and would again (see ``sinks/failures.py``).
    store_refused = "store_refused"


@dataclass(frozen=True)
class Refusal:
    reason: Reason
    field_path: str
    message: str


@dataclass(frozen=True)
class Decision:
    """What happens to one message.

    ``item`` is set when (some of) it is accepted; ``refusal`` when (some of) it goes to
    dead letters. A turn of a space whose ``signals`` feature is off is both: the turn is
    kept, its interactions are refused. ``duplicate`` means the idempotency key was
    already taken by another message: nothing is written. ``token`` is an accepted
    outcome's exposure token as the space's keys judge it (None for other items).
    """

    source: Source
    raw: bytes
    dedup_key: str
    item: Item | None = None
    profile_id: str | None = None
    refusal: Refusal | None = None
    duplicate: bool = False
    token: TokenCheck | None = None

    @property
    def keep_interactions(self) -> bool:
        """Whether the item's interactions are accepted."""
        return self.item is not None and not (
            self.refusal is not None and self.refusal.reason is Reason.signals_disabled
        )


def dedup_key_for(item: Item | None, raw: bytes) -> str:
    """The idempotency key of a valid item; the digest of the bytes for an invalid one."""
    if item is not None:
        return f"k\x1f{item.space_id}\x1f{item.idempotency_key}"
    return "raw\x1f" + hashlib.sha256(raw).hexdigest()


def decide(
    raw: bytes,
    source: Source,
    settings: Settings,
    seen: Callable[[str], Source | None],
) -> Decision:
    """Validate, gate by the space's features and de-duplicate one message.

    ``seen(key)`` returns the source that first took an idempotency key, or None. A key
    taken by this very message (a redelivery after a crash) is not a duplicate: the
    idempotent sinks make the second write a no-op.
    """
    return dedupe(judge(raw, source, settings), seen)


def judge(raw: bytes, source: Source, settings: Settings) -> Decision:
    """Validate and gate one message by its space's features (no de-duplication yet)."""
    try:
        item = parse_item(raw)
    except InvalidItem as exc:
        key = dedup_key_for(None, raw)
        first, message = exc.errors[0]
        if len(exc.errors) > 1:
            message += f" (and {len(exc.errors) - 1} more)"
        return Decision(source, raw, key, refusal=Refusal(Reason.invalid, first, message))
    key = dedup_key_for(item, raw)
    space = settings.space(item.space_id)
    if space is None:
        refusal = Refusal(
            Reason.unknown_space, "space_id", f"space {item.space_id!r} is not configured"
        )
        return Decision(source, raw, key, refusal=refusal)
    if isinstance(item, InteractionItem) and not space.has(Feature.signals):
        refusal = Refusal(
            Reason.signals_disabled, "interaction", "the space's signals feature is off"
        )
        return Decision(source, raw, key, refusal=refusal)
    if isinstance(item, Turn) and not space.has(Feature.turns):
        refusal = Refusal(Reason.turns_disabled, "type", "the space's turns feature is off")
        return Decision(source, raw, key, refusal=refusal)
    partial = None
    if isinstance(item, Turn) and item.interactions and not space.has(Feature.signals):
        partial = Refusal(
            Reason.signals_disabled,
            "interactions",
            f"the space's signals feature is off: {len(item.interactions)} interactions refused",
        )
    profile_id = resolve_profile(item, settings.secret_bytes())
    token = None
    if isinstance(item, Outcome):
        # Verified here, in the one rule live and replay share: a token that fails never
        # attributes, in the raw table or in derivation (accepted_for drops it).
        token = check_token(item.exposure_token, item.space_id, space.token_keys())
    return Decision(source, raw, key, item, profile_id, partial, token=token)


def dedupe(decision: Decision, seen: Callable[[str], Source | None]) -> Decision:
    """The decision, or a duplicate when another message took its key first."""
    first = seen(decision.dedup_key)
    if first is not None and first != decision.source:
        return Decision(decision.source, decision.raw, decision.dedup_key, duplicate=True)
    return decision


def too_large_to_fan_out(decision: Decision, size: int, limit: int) -> Decision:
    """The decision for an item whose accepted message would be ``size`` bytes, past the
    ``limit`` the accepted topic takes: a dead letter, before anything is written. It
    keeps the key its item took, so a copy of it is a duplicate, here and in a replay."""
    message = f"its accepted message would be {size} bytes; the accepted topic takes {limit}"
    return Decision(
        decision.source,
        decision.raw,
        decision.dedup_key,
        refusal=Refusal(Reason.too_large, "", message),
    )


def refused_by_store(decision: Decision, message: str) -> Decision:
    """The decision for a message whose rows the store refused for good (``message``
    says which table and why): a dead letter. It keeps the key its item took, so a copy
    of it is a duplicate, here and in a replay."""
    return Decision(
        decision.source,
        decision.raw,
        decision.dedup_key,
        refusal=Refusal(Reason.store_refused, "", message),
    )
