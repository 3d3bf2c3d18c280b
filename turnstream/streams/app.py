"""The Faust app: records, app, topics, tables, agents, timers, pages, top to bottom.

The agent only moves data: :func:`~turnstream.streams.ingest.decide` rules on each
message, :func:`~turnstream.sinks.rows.rows_for` shapes rows, the sink writes them, and
only then are the messages acknowledged, so Faust never commits past an unwritten one.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import faust
from faust.web import Request, Response, View

from turnstream.config import Settings
from turnstream.errors import StoreError
from turnstream.models.deadletter import DeadLetter
from turnstream.sinks.rows import Rows, rows_for
from turnstream.sinks.store import AsyncStore
from turnstream.sinks.writer import RawSink, write_with_retry
from turnstream.streams.ingest import Decision, Source, decide
from turnstream.streams.topics import TopicNames

__all__ = ["DEDUP_TABLE", "IngestStats", "Pipeline", "build_app", "changelog_topic"]

log = logging.getLogger(__name__)

#: The table of idempotency keys: key -> [topic, partition, offset, first seen (epoch s)].
DEDUP_TABLE = "idempotency-keys"


def changelog_topic(app_id: str, table: str) -> str:
    """The changelog topic Faust gives a table."""
    return f"{app_id}-{table}-changelog"


@dataclass
class IngestStats:
    """Counters served at ``/v1/status``."""

    messages: int = 0
    accepted: int = 0
    duplicates: int = 0
    batches: int = 0
    dead_letters: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    started_at: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "batches": self.batches,
            "dead_letters": dict(self.dead_letters),
            "rows_written": dict(self.rows),
            "uptime_seconds": round(time.time() - self.started_at, 1),
        }


def _seen_source(value: Any) -> Source | None:
    return Source(value[0], value[1], value[2]) if value else None


def _merge(into: Rows, rows: Rows) -> None:
    for table, batch in rows.items():
        into.setdefault(table, []).extend(batch)


@dataclass
class Pipeline:
    """What the agent needs besides Faust: settings, the store and the counters."""

    settings: Settings
    store: AsyncStore
    sink: RawSink
    stats: IngestStats = field(default_factory=IngestStats)

    def decide_batch(self, events: list[Any], dedup: Any, set_event: Any) -> list[Decision]:
        """Rule on each message in order, taking idempotency keys as it goes."""
        now = time.time()
        decisions = []
        for event in events:
            message = event.message
            set_event(event)  # table writes go to this message's changelog partition
            source = Source(message.topic, message.partition, message.offset)
            raw = event.value if isinstance(event.value, bytes) else bytes(event.value or b"")
            decision = decide(raw, source, self.settings, lambda k: _seen_source(dedup.get(k)))
            if not decision.duplicate:
                dedup[decision.dedup_key] = [source.topic, source.partition, source.offset, now]
            decisions.append(decision)
        return decisions

    def rows(self, decisions: list[Decision]) -> Rows:
        """Every raw row of a batch."""
        out: Rows = {}
        ingested_at = datetime.now(UTC)
        for decision in decisions:
            _merge(out, rows_for(decision, self.settings, ingested_at))
        return out

    def count(self, decisions: list[Decision], written: dict[str, int]) -> None:
        self.stats.batches += 1
        self.stats.messages += len(decisions)
        self.stats.rows.update(written)
        for d in decisions:
            if d.duplicate:
                self.stats.duplicates += 1
                continue
            if d.item is not None:
                self.stats.accepted += 1
            if d.refusal is not None:
                self.stats.dead_letters[d.refusal.reason.value] += 1


def dead_letter_for(decision: Decision) -> bytes:
    """The dead-letter topic's message for a refusal."""
    assert decision.refusal is not None
    src = decision.source
    return (
        DeadLetter(
            reason=decision.refusal.reason.value,
            field_path=decision.refusal.field_path,
            message=decision.refusal.message,
            topic=src.topic,
            partition=src.partition,
            offset=src.offset,
            received_at=datetime.now(UTC),
            original=base64.b64encode(decision.raw).decode(),
        )
        .model_dump_json()
        .encode()
    )


def accepted_for(decision: Decision) -> bytes:
    """The fan-out message of an accepted item: the item without its handle."""
    assert decision.item is not None
    body = decision.item.model_dump(mode="json", by_alias=True, exclude={"handle"})
    body["profile_id"] = decision.profile_id
    if not decision.keep_interactions and "interactions" in body:
        body["interactions"] = []
    return json.dumps(body, separators=(",", ":")).encode()


def build_app(settings: Settings, pipeline: Pipeline) -> faust.App:
    """The worker's Faust app, wired to ``pipeline``."""
    w = settings.worker
    names = TopicNames(w.topic_prefix)
    app = faust.App(
        w.app_id,
        broker=f"kafka://{settings.broker.bootstrap}",
        store="memory://",
        datadir=str(settings.faust_dir()),
        topic_partitions=w.partitions,
        topic_allow_declare=True,
        web_enabled=True,
        web_bind=w.web_host,
        web_port=w.web_port,
        web_host=w.web_host,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        broker_session_timeout=w.session_timeout,
        broker_heartbeat_interval=w.session_timeout / 4,
    )

    # Topics: declared here (internal=True) so a fresh broker gets them with the right
    # partition count before the consumer subscribes.
    inputs = app.topic(
        *names.inputs,
        value_serializer="raw",
        key_serializer="raw",
        partitions=w.partitions,
        internal=True,
    )
    accepted = app.topic(
        names.accepted, value_serializer="raw", partitions=w.partitions, internal=True
    )
    dead_letters = app.topic(
        names.dead_letters, value_serializer="raw", partitions=w.partitions, internal=True
    )

    dedup = app.Table(DEDUP_TABLE, default=None, partitions=w.partitions)

    @app.agent(inputs, concurrency=1)
    async def ingest(stream: faust.StreamT) -> None:
        async for events in stream.noack_take(w.batch_size, within=w.batch_seconds):
            decisions = pipeline.decide_batch(events, dedup, stream._set_current_event)
            written = await write_with_retry(
                pipeline.store, pipeline.sink, pipeline.rows(decisions)
            )
            for event, decision in zip(events, decisions, strict=True):
                if decision.refusal is not None:
                    await dead_letters.send(key=event.key, value=dead_letter_for(decision))
                if decision.item is not None:
                    await accepted.send(
                        key=decision.profile_id.encode(), value=accepted_for(decision)
                    )
            for event in events:
                await stream.ack(event)
            pipeline.count(decisions, written)

    @app.on_partitions_assigned.connect
    async def _forget_marks(sender: Any, *args: Any, **kwargs: Any) -> None:
        # Another worker may have written these partitions meanwhile.
        pipeline.sink.forget()

    @app.timer(interval=3600.0)
    async def expire_idempotency_keys() -> None:
        if app.rebalancing:
            return
        horizon = time.time() - w.dedup_days * 86400
        expired = [(k, v) for k, v in list(dedup.data.items()) if v and v[3] < horizon]
        for key, value in expired:
            dedup.send_changelog(value[1], key, None)
            del dedup.data[key]
        if expired:
            log.info("forgot %d idempotency keys older than %d days", len(expired), w.dedup_days)

    @app.page("/v1/status")
    class StatusView(View):
        async def get(self, request: Request) -> Response:
            return self.json({"store": pipeline.store.store.describe(), **pipeline.stats.as_dict()})

    @app.page("/v1/sql")
    class SqlView(View):
        async def post(self, request: Request) -> Response:
            try:
                body = await request.json()
                sql = body["sql"]
            except (ValueError, KeyError, TypeError):
                return self.error(400, 'body must be JSON: {"sql": "SELECT ..."}')
            try:
                result = await pipeline.store.run(pipeline.store.store.read_only, sql)
            except StoreError as exc:
                return self.error(400, str(exc))
            payload = {"columns": result.columns, "types": result.types, "rows": result.rows}
            return self.bytes(
                json.dumps(payload, default=str).encode(), content_type="application/json"
            )

    return app
