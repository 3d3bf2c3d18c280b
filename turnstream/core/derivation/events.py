"""Signal events: one per interaction, outcome or command of an accepted item."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = [
    "EventKind",
    "SignalEvent",
    "events_from_accepted",
    "format_time",
    "holds_no_events",
    "parse_time",
    "session_of",
]

EventKind = Literal["interaction", "outcome", "command"]

#: An outcome's ``for`` stays in its payload too: ``None`` when the producer gave none, so
#: that ``state`` can tell "mine" (absent) from an explicit bucket.
_OUTCOME_FIELDS = ("outcome", "ref", "order_id", "exposure_token", "attrs", "reason", "for")
_COMMAND_FIELDS = ("command", "inference_id", "replacement")


def parse_time(value: str | datetime) -> datetime:
    """An RFC 3339 time (or an aware datetime) in UTC; a naive time is refused."""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
    if moment.tzinfo is UTC:
        # Already UTC (a producer's "Z", the driver's clock): astimezone would copy it.
        return moment
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError(f"time without a zone: {value!r}")
    return moment.astimezone(UTC)


def format_time(moment: datetime) -> str:
    """The ISO form of a time in UTC, which :func:`parse_time` reads back exactly."""
    return moment.astimezone(UTC).isoformat()


def session_of(message: Mapping[str, Any]) -> str:
    """The session of an item: ``session_id``, else ``conversation_id``, else ``"-"``."""
    return message.get("session_id") or message.get("conversation_id") or "-"


@dataclass(frozen=True)
class SignalEvent:
    """One accepted interaction, outcome or command: the input of every rule.

    ``payload`` is the JSON form of the interaction object (without ``for``), of the
    outcome fields or of the command fields. ``occurred_at`` is in UTC.
    """

    kind: EventKind
    space_id: str
    profile_id: str
    for_: str
    session: str
    occurred_at: datetime
    idempotency_key: str
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The interaction kind, ``"outcome"``, or the command."""
        if self.kind == "interaction":
            return str(self.payload.get("kind", ""))
        if self.kind == "command":
            return str(self.payload.get("command", ""))
        return "outcome"

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form, read back by :meth:`from_dict`."""
        return {
            "kind": self.kind,
            "space_id": self.space_id,
            "profile_id": self.profile_id,
            "for": self.for_,
            "session": self.session,
            "occurred_at": format_time(self.occurred_at),
            "idempotency_key": self.idempotency_key,
            "payload": self.payload,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SignalEvent:
        return cls(
            kind=data["kind"],
            space_id=data["space_id"],
            profile_id=data["profile_id"],
            for_=data["for"],
            session=data["session"],
            occurred_at=parse_time(data["occurred_at"]),
            idempotency_key=data["idempotency_key"],
            payload=dict(data["payload"]),
        )


def _interaction(
    common: tuple[str, str, str, datetime],
    interaction: Mapping[str, Any],
    key: str,
    default_for: str,
) -> SignalEvent:
    space_id, profile_id, session, occurred_at = common
    payload = {k: v for k, v in interaction.items() if k != "for"}
    return SignalEvent(
        kind="interaction",
        space_id=space_id,
        profile_id=profile_id,
        # The interaction's own `for` wins: an item-level default must not pull a
        # gift's or a beneficiary's evidence into the person's own bucket.
        for_=interaction.get("for") or default_for,
        session=session,
        occurred_at=occurred_at,
        idempotency_key=key,
        payload=payload,
    )


def _common(message: Mapping[str, Any]) -> tuple[str, str, str, datetime]:
    """What every event of an item shares, read once per item (not once per event)."""
    return (
        message["space_id"],
        message["profile_id"],
        session_of(message),
        parse_time(message["occurred_at"]),
    )


#: How an accepted turn without interactions reads (``core/messages.accepted_for``: the
#: item's fields in order, compact, ``type`` first).
_TURN = b'{"type":"turn"'
_INTERACTIONS = b'"interactions":'
_NO_INTERACTIONS = b'"interactions":[]'


def holds_no_events(value: bytes) -> bool:
    """Whether an accepted message surely gives no signal events, from its bytes alone: a
    turn whose ``interactions`` are empty (a mixed backlog's turns, 40% of its accepted
    messages, are all such, and the largest to read). ``"interactions":`` can be nothing
    but a key in JSON (a quote inside a string is escaped); it must be there once, so a
    presented item's ``shown`` naming a field ``interactions`` cannot pass for the turn's
    own. False means "read it", never "it has events"."""
    return value.startswith(_TURN) and value.count(_INTERACTIONS) == 1 and _NO_INTERACTIONS in value


def events_from_accepted(message: Mapping[str, Any]) -> list[SignalEvent]:
    """The signal events of one accepted item as the worker fans it out.

    ``message`` is the item dumped as JSON (by alias, without ``handle``) plus
    ``profile_id``. A batch interaction gives one event in the item's ``for``; a turn
    gives one per interaction (key ``<turn key>#<index>``, index from 0, in the
    interaction's own ``for``, default ``self``), and nothing for its claims and
    constraints; an outcome and a command give one each, in the item's ``for`` (default
    ``self``; see ``state`` for how an outcome's bucket is chosen).
    """
    item_type = message.get("type")
    key = message["idempotency_key"]
    if item_type == "interaction":
        interaction = message["interaction"]
        return [_interaction(_common(message), interaction, key, message.get("for") or "self")]
    if item_type == "turn":
        interactions = message.get("interactions") or []
        if not interactions:
            return []
        common = _common(message)
        return [
            _interaction(common, interaction, f"{key}#{index}", "self")
            for index, interaction in enumerate(interactions)
        ]
    if item_type in ("outcome", "command"):
        names = _OUTCOME_FIELDS if item_type == "outcome" else _COMMAND_FIELDS
        space_id, profile_id, session, occurred_at = _common(message)
        return [
            SignalEvent(
                kind=item_type,
                space_id=space_id,
                profile_id=profile_id,
                for_=message.get("for") or "self",
                session=session,
                occurred_at=occurred_at,
                idempotency_key=key,
                payload={name: message.get(name) for name in names},
            )
        ]
    raise ValueError(f"not an accepted item type: {item_type!r}")
