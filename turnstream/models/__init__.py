"""Pydantic v2 models of every event and document: the wire format (docs/wire.md)."""

from turnstream.models.commands import Command
from turnstream.models.common import Envelope, Handle, HandleType, field_of
from turnstream.models.interactions import (
    Attribute,
    Engaged,
    Feedback,
    Interaction,
    Preference,
    Presented,
    PresentedItem,
    Seen,
    Unwatch,
    Watch,
)
from turnstream.models.items import ITEM_TYPES, InteractionItem, Item, parse_item
from turnstream.models.outcomes import Outcome
from turnstream.models.turns import EVIDENCED_VERDICTS, Claim, ConstraintMeasurement, Turn, Verdict

__all__ = [
    "EVIDENCED_VERDICTS",
    "ITEM_TYPES",
    "Attribute",
    "Claim",
    "Command",
    "ConstraintMeasurement",
    "Engaged",
    "Envelope",
    "Feedback",
    "Handle",
    "HandleType",
    "Interaction",
    "InteractionItem",
    "Item",
    "Outcome",
    "Preference",
    "Presented",
    "PresentedItem",
    "Seen",
    "Turn",
    "Unwatch",
    "Verdict",
    "Watch",
    "field_of",
    "parse_item",
]
