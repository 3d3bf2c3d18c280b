"""The topology, declared in one place: every topic, its key, the largest message it
takes, and which processor reads and writes what (``turnstream topology`` prints it).

Reading it tells where a change goes: a new item type is a new input topic that the
ingest driver reads; a new derived table is written by the derivation driver.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.config import Settings
from turnstream.models.items import MAX_ITEM_BYTES

__all__ = [
    "ACCEPTED_TOPIC_BYTES",
    "FANOUT_MAX_BYTES",
    "INPUT_TOPIC_BYTES",
    "INPUT_TOPIC_CONFIG",
    "Processor",
    "Topic",
    "TopicNames",
    "Topology",
    "topology_of",
]

#: ``max.message.bytes`` of the input topics turnstream creates, and the producer's
#: ``max_request_size``: an item of the contract's largest size (1 MiB) with its key and
#: the record's framing. The broker's default (1 MiB + 12 bytes) refuses such an item.
INPUT_TOPIC_BYTES = MAX_ITEM_BYTES + 64 * 1024

#: The input topics' settings: the largest record, and the broker's own time on each
#: record, not its producer's (a producer stamping records days apart in the past made
#: the broker roll a segment per record; ``tests/integration/kafka/test_hostile_clients.py``).
#: The worker reads no record's timestamp.
INPUT_TOPIC_CONFIG = {
    "max.message.bytes": str(INPUT_TOPIC_BYTES),
    "message.timestamp.type": "LogAppendTime",
}

#: ``max.message.bytes`` of the accepted topic turnstream creates: above the accepted
#: message of any valid item (a 1 MiB item re-serialized with its defaults grew to 1.5 MiB,
#: a turn of 55,000 minimal presented items; see :data:`FANOUT_MAX_BYTES`).
ACCEPTED_TOPIC_BYTES = 4 * 1024 * 1024

#: The largest accepted message (value and key) the ingest driver sends; a larger one is refused
#: with reason ``too_large`` before anything is written. The bootstrap lowers it to what
#: the accepted topic takes (``max.message.bytes``), which it creates at 4 MiB: an item
#: of the contract's 1 MiB grows when re-serialized with its defaults, by 1.5x for a turn
#: of 55,000 minimal presented items (1.94x for claims, but 1,000 of them make 140 KB),
#: so every valid item fits.
FANOUT_MAX_BYTES = ACCEPTED_TOPIC_BYTES - 1024


@dataclass(frozen=True)
class TopicNames:
    """Every topic turnstream uses, under one prefix."""

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

    @property
    def every(self) -> tuple[str, ...]:
        """Every topic, inputs first."""
        return (*self.inputs, self.accepted, self.dead_letters, self.inferences)

    def configs(self) -> dict[str, dict[str, str]]:
        """Topic settings turnstream creates its topics with (an existing topic keeps its
        own: the worker reads what the accepted topic takes)."""
        inputs = {t: dict(INPUT_TOPIC_CONFIG) for t in self.inputs}
        return {**inputs, self.accepted: {"max.message.bytes": str(ACCEPTED_TOPIC_BYTES)}}


@dataclass(frozen=True)
class Topic:
    """A topic, what its messages are keyed by and what they hold."""

    name: str
    key: str
    holds: str
    #: ``max.message.bytes`` turnstream creates it with (None: the broker's default).
    max_bytes: int | None = None


@dataclass(frozen=True)
class Processor:
    """Who reads which topics (in which consumer group) and writes which topics and tables."""

    name: str
    does: str
    #: The consumer group ("" for a processor that only writes).
    group: str = ""
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()


@dataclass(frozen=True)
class Topology:
    """Every topic and every processor of one deployment."""

    names: TopicNames
    topics: tuple[Topic, ...]
    processors: tuple[Processor, ...]

    def processor(self, name: str) -> Processor:
        """The processor called ``name`` (KeyError for an unknown one)."""
        for processor in self.processors:
            if processor.name == name:
                return processor
        raise KeyError(name)

    @property
    def ingest(self) -> Processor:
        """The ingest driver: input topics in, raw tables, accepted and dead letters out."""
        return self.processor("ingest")

    @property
    def derivation(self) -> Processor:
        """The derivation driver: accepted items in, derived tables and inferences out."""
        return self.processor("derivation")

    def render(self) -> str:
        """The topology as text: the topics, then each processor's reads and writes."""
        width = max(len(t.name) for t in self.topics)
        lines = ["topics"]
        lines += [
            f"  {t.name:<{width}}  key: {t.key}; {t.holds}"
            + (f"; up to {t.max_bytes:,} bytes" if t.max_bytes else "")
            for t in self.topics
        ]
        for p in self.processors:
            group = f" (consumer group {p.group})" if p.group else ""
            lines += ["", f"{p.name}{group}: {p.does}"]
            lines += [f"  reads   {', '.join(p.reads)}"] if p.reads else []
            lines += [f"  writes  {', '.join(p.writes)}"] if p.writes else []
            lines += [f"  tables  {', '.join(p.tables)}"] if p.tables else []
        return "\n".join(lines) + "\n"


def topology_of(settings: Settings) -> Topology:
    """The topology of the configured deployment (``worker.topic_prefix``, ``app_id``)."""
    # The tables on use: the producer imports this module, and an SDK install has no store.
    from turnstream.adapters.clickhouse.derivations import SIGNAL_COLUMNS
    from turnstream.adapters.clickhouse.schema import RAW_TABLES

    names = TopicNames(settings.worker.topic_prefix)
    app_id = settings.worker.app_id
    by_profile = "profile id"
    topics = (
        *(
            Topic(
                t,
                f"{by_profile} (as producers send it)",
                f"{t.split('.')[-1]} as published",
                INPUT_TOPIC_BYTES,
            )
            for t in names.inputs
        ),
        Topic(
            names.accepted, by_profile, "validated items without their handle", ACCEPTED_TOPIC_BYTES
        ),
        Topic(
            names.dead_letters,
            "the refused message's own key",
            "reason, field path and the original bytes",
        ),
        Topic(names.inferences, by_profile, "every inference as derived"),
    )
    processors = (
        Processor(
            "producers",
            "validate each item, key it by profile id, publish it "
            "(turnstream.adapters.kafka.producer)",
            writes=names.inputs,
        ),
        Processor(
            "ingest",
            "validate, gate by features, de-duplicate, write the raw tables, erase, fan out",
            group=app_id,
            reads=names.inputs,
            writes=(names.accepted, names.dead_letters),
            tables=RAW_TABLES,
        ),
        Processor(
            "derivation",
            "hold sessions until their trigger, fold evidence, derive inferences",
            # The group keeps its first name (committed offsets live under it).
            group=f"{app_id}-signals",
            reads=(names.accepted,),
            writes=(names.inferences,),
            tables=tuple(SIGNAL_COLUMNS),
        ),
        Processor(
            "read side",
            "the constraints block and the reviewable profile over HTTP; changes as commands",
            writes=(names.input("command"),),
            tables=("review_requests",),
        ),
    )
    return Topology(names, topics, processors)
