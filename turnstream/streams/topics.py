"""Topic names: one input topic per item type, plus fan-out and dead letters; and the
largest message each takes."""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.models.items import MAX_ITEM_BYTES

__all__ = ["ACCEPTED_TOPIC_BYTES", "INPUT_TOPIC_BYTES", "TopicNames"]

#: ``max.message.bytes`` of the input topics turnstream creates, and the producer's
#: ``max_request_size``: an item of the contract's largest size (1 MiB) with its key and
#: the record's framing. The broker's default (1 MiB + 12 bytes) refuses such an item.
INPUT_TOPIC_BYTES = MAX_ITEM_BYTES + 64 * 1024

#: ``max.message.bytes`` of the accepted topic turnstream creates: above the accepted
#: message of any valid item (a 1 MiB item re-serialized with its defaults grew to 1.5 MiB,
#: a turn of 55,000 minimal presented items; see ``ingest_loop.FANOUT_MAX_BYTES``).
ACCEPTED_TOPIC_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TopicNames:
    """Every topic turnstream uses, under one prefix. All are keyed by profile id."""

    prefix: str = "turnstream"

    def input(self, item_type: str) -> str:
        """The topic producers publish items of ``item_type`` to."""
        return f"{self.prefix}.{item_type}s"

    @property
    def inputs(self) -> tuple[str, ...]:
        """Input topics, one per item type."""
        return tuple(self.input(t) for t in ("turn", "interaction", "outcome", "command"))

    @property
    def accepted(self) -> str:
        """Validated items fanned out for derivation, keyed by profile id (no raw handle)."""
        return f"{self.prefix}.accepted"

    @property
    def inferences(self) -> str:
        """Inferences as derived (every change), keyed by profile id."""
        return f"{self.prefix}.inferences"

    @property
    def dead_letters(self) -> str:
        """Refused and invalid messages with the reason and the original bytes."""
        return f"{self.prefix}.dead-letters"

    def configs(self) -> dict[str, dict[str, str]]:
        """Topic settings turnstream creates its topics with (an existing topic keeps its
        own: the worker reads what the accepted topic takes)."""
        inputs = {t: {"max.message.bytes": str(INPUT_TOPIC_BYTES)} for t in self.inputs}
        return {**inputs, self.accepted: {"max.message.bytes": str(ACCEPTED_TOPIC_BYTES)}}
