"""What the use cases need of the world, as protocols: ``adapters/clickhouse/`` (the store)
and ``entrypoints/kafka/`` (the prepare stage) provide them, and the bootstrap wires them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from turnstream.adapters.clickhouse.bisect import Isolated, Refused
from turnstream.adapters.clickhouse.erasure import Erasure
from turnstream.core.erasure import ErasureFacts, Subject, Tombstones
from turnstream.core.ingest import Decision, Source
from turnstream.core.rows import BatchRows, Rows

__all__ = ["Erasures", "Keys", "Message", "PreparedBatch", "Preparer", "RawTables"]

#: A message to send: (topic, value, key).
Message = tuple[str, bytes, bytes | None]


class PreparedBatch(Protocol):
    """A batch after the prepare stage (``entrypoints/kafka/prepare.Prepared``): per message its
    record, its decision as if no duplicate, its fan-out, whether it is accepted and its
    erasure facts; the batch's rows."""

    @property
    def messages(self) -> Sequence[Any]: ...
    @property
    def judged(self) -> Sequence[Decision]: ...
    @property
    def rows(self) -> BatchRows: ...
    @property
    def sends(self) -> Sequence[list[Message]]: ...
    @property
    def accepted(self) -> Sequence[bool]: ...
    @property
    def erasure_facts(self) -> Sequence[ErasureFacts | None]: ...
    @property
    def erases(self) -> Sequence[bool]: ...
    @property
    def received_at(self) -> datetime: ...


class Preparer(Protocol):
    """The prepare stage: a batch of records validated, gated and turned into rows and
    fan-out messages (no store); an accepted message past ``fanout_max_bytes`` is
    refused (``too_large``). ``received_at``: when the batch was taken (default: now),
    which judges its ``occurred_at`` edges and stamps its rows."""

    def __call__(
        self, messages: list[Any], fanout_max_bytes: int, received_at: datetime | None = None
    ) -> PreparedBatch: ...


class Keys(Protocol):
    """The idempotency keys taken (``adapters/clickhouse/idempotency_keys.KeyRegistry``)."""

    def lookup(self, keys: Iterable[str]) -> dict[str, Source]: ...

    def remember(self, key: str, source: Source) -> None: ...

    def drop(self, key: str, source: Source) -> None: ...

    def refused(self) -> Mapping[str, Source]: ...

    def forget(self) -> None: ...


class RawTables(Protocol):
    """The raw tables' idempotent writer, splitting a batch the store refuses
    (``adapters/clickhouse/bisect.IsolatingSink``)."""

    def write(
        self, rows: BatchRows, order: Sequence[Source], replace: Callable[[Refused], Rows]
    ) -> Isolated: ...

    def refused_before(self, sources: Sequence[Source]) -> dict[Source, str]: ...

    def forget(self) -> None: ...


class Erasures(Protocol):
    """Erase tombstones and erasures (``adapters/clickhouse/erasure.StoreErasures``)."""

    def load_tombstones(self) -> dict[Subject, datetime]: ...

    def record_tombstones(self, tombstones: Tombstones) -> None: ...

    def erase(self, subjects: Sequence[Subject]) -> list[Erasure]: ...
