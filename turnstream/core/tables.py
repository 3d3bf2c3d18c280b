"""Every table of the store, declared once: its columns with their types and meanings,
its retention (and whether a TTL keeps it), its description, and whether analysts query
it or it is internal.

The migrations (``migrations/NNNN_*.sql``) are history: they made these tables and are
not rewritten. This registry describes the tables as the migrations leave them; an
integration test compares it with the migrated store's ``system.columns`` and TTLs,
column for column. From it come the catalog and the tables page (``catalog.py``,
``turnstream docs tables``), the retention promises (``RETENTION``: the retention job and
check), the raw tables' envelope and source columns (``rows.py``), and the text of a new
table's columns and TTL for its migration file (:func:`columns_ddl`, :func:`ttl_ddl`).

Materialized views, ``Null`` tables and the ``_current`` views are not declared: the
tables page describes them from the live schema.
"""

from __future__ import annotations

from dataclasses import dataclass

from turnstream.core.derivation.exposure import WEIGHT_FORMULA
from turnstream.core.time_edges import ERASE_TOMBSTONE_DAYS, KEY_KEEP_DAYS, RAW_KEEP_DAYS

__all__ = [
    "DIMS",
    "ENVELOPE",
    "FIELD_PRIOR_COLUMNS",
    "INSERT",
    "PRIOR_COLUMNS",
    "RETENTION",
    "SOURCE",
    "TABLES",
    "Column",
    "Retention",
    "Table",
    "columns_ddl",
    "table",
    "ttl_ddl",
]


@dataclass(frozen=True)
class Column:
    """One column: its name, its ClickHouse type as ``system.columns`` spells it, and what
    it means."""

    name: str
    type: str
    description: str


@dataclass(frozen=True)
class Retention:
    """What a table promises to keep: rows dated by ``dated_by`` at most ``days`` old
    (None: kept), how the promise is kept, and whether a TTL of ``days`` on ``dated_by``
    is part of it."""

    dated_by: str | None
    days: int | None
    how: str
    ttl: bool = False


@dataclass(frozen=True)
class Table:
    """One table (or view) as the migrations leave it."""

    name: str
    kind: str  # "table", "roll-up" or "view"
    description: str
    columns: tuple[Column, ...]
    retention: Retention | None = None
    #: Not for analysts' queries (the tables page lists it among the internal objects).
    internal: bool = False


#: The columns every item's raw row starts with (the wire envelope, models/common.py).
ENVELOPE: tuple[Column, ...] = (
    Column("space_id", "LowCardinality(String)", "the space (tenant)"),
    Column(
        "profile_id",
        "String",
        "the person: keyed hash of the handle, or the producer's profile id",
    ),
    Column("source", "LowCardinality(String)", "channel or integration that sent the item"),
    Column("conversation_id", "String", "the conversation ('' when none)"),
    Column("session_id", "String", "the session: session_id, else conversation_id ('' when none)"),
    Column("idempotency_key", "String", "the producer's idempotency key"),
    Column("occurred_at", "DateTime64(3, 'UTC')", "when it happened (event time, UTC)"),
)
#: Where a raw row came from: its Kafka topic, partition and offset.
SOURCE: tuple[Column, ...] = (
    Column("ingested_at", "DateTime64(3, 'UTC')", "when the worker wrote the row (UTC)"),
    Column("_topic", "LowCardinality(String)", "Kafka topic the row came from"),
    Column("_partition", "UInt16", "Kafka partition the row came from"),
    Column(
        "_offset",
        "UInt64",
        "Kafka offset the row came from (with topic and partition: the row's identity)",
    ),
)
#: The breakdown of the per-minute roll-ups and their views.
DIMS: tuple[Column, ...] = (
    Column("space_id", "LowCardinality(String)", "the space"),
    Column("source", "LowCardinality(String)", "channel or integration"),
    Column("agent", "LowCardinality(String)", "the agent that produced the turn"),
)
#: The columns of a prior (the table and its view).
PRIOR_COLUMNS: tuple[Column, ...] = (
    Column("space_id", "LowCardinality(String)", "the space"),
    Column("attr", "String", "type.field (type.ref for an object)"),
    Column("value", "String", "the value"),
    Column(
        "people",
        "UInt64",
        "distinct people who saw it in the window: exact below 64, an estimate (within ~25%) "
        "from 64 up",
    ),
    Column("events", "UInt64", "engagements on it in the window"),
    Column("exposure", "Float64", "effective exposure in the window"),
    Column("signal", "Float64", "weighted signal in the window"),
    Column("prior", "Float64", "signal / exposure: the rate lift is measured against"),
    Column("window_start", "Date", "first day of the 90-day window"),
    Column("window_end", "Date", "day after the window (the as-of day)"),
    Column("version", "UInt32", "the as-of day as yyyymmdd"),
)
#: The columns of ``field_priors`` (and its latest view).
FIELD_PRIOR_COLUMNS: tuple[Column, ...] = (
    Column("space_id", "LowCardinality(String)", "the space"),
    Column("attr", "String", "type.field"),
    Column("people", "UInt64", "people with evidence on the field the fit rests on"),
    Column("taste_prior", "Float64", "the fitted share of people with a favourite value"),
    Column("lifts", "Array(Float64)", "the lift grid of the fit"),
    Column("weights", "Array(Float64)", "the fitted weight of each lift (sum 1)"),
    Column("window_end", "Date", "the as-of day of the priors run"),
    Column("version", "UInt32", "the as-of day as yyyymmdd"),
)
#: The sink's insert that wrote a raw row (after the source columns).
INSERT = Column(
    "_insert",
    "UInt64",
    "the sink's insert that wrote the row (a hash of its insert token; 0 for rows written "
    "before migration 22)",
)


#: Every table and view, analysts' first (in the tables page's order).
TABLES: tuple[Table, ...] = (
    Table(
        "turns",
        "table",
        "One row per accepted turn record.",
        (
            *ENVELOPE,
            Column("turn_id", "String", "the turn"),
            Column("agent", "LowCardinality(String)", "the agent"),
            Column("build", "String", "the agent's build ('' when not given)"),
            Column("contract_version", "String", "the claim contract's version the turn cites"),
            Column(
                "constraints_version",
                "String",
                "the constraints block's version the turn cites ('' when none)",
            ),
            Column("experiment_id", "String", "experiment the turn ran under ('' when none)"),
            Column("experiment_arm", "String", "arm of that experiment"),
            Column("guard_acted", "Bool", "the claims guard changed or held the output"),
            Column(
                "guard_budget_exceeded",
                "Bool",
                "the guard ran out of time and let the text go annotated",
            ),
            Column(
                "internal_text_found",
                "UInt32",
                "claims with verdict internal_text_found in this turn",
            ),
            Column("interactions", "UInt32", "interactions accepted from this turn"),
            Column(
                "interactions_refused",
                "UInt32",
                "interactions refused (the space's signals feature is off)",
            ),
            Column("claims", "UInt32", "claims in the turn"),
            Column("constraints", "UInt32", "constraint measurements (tool calls) in the turn"),
            *SOURCE,
            INSERT,
            Column(
                "language",
                "LowCardinality(String)",
                "the language the output was read in: pt, en, es ('' when not given)",
            ),
        ),
        retention=Retention(None, None, "counts and verdicts, no interaction content"),
    ),
    Table(
        "interactions",
        "table",
        "One row per interaction, from batch items and from turns. Kept 45 days.",
        (
            *ENVELOPE,
            Column("for", "LowCardinality(String)", "whose signal: self, beneficiary:<id> or gift"),
            Column("turn_id", "String", "the turn that carried it ('' for a batch item)"),
            Column(
                "item_index",
                "UInt16",
                "position in the turn's interactions (0 for a batch item)",
            ),
            Column(
                "kind",
                "LowCardinality(String)",
                "presented, seen, engaged, feedback, preference, attribute, watch, unwatch",
            ),
            Column("exposure_id", "String", "the exposure (presented, seen, engaged)"),
            Column("list_id", "String", "the list (presented)"),
            Column("ref", "String", "the object (engaged, feedback)"),
            Column("attr", "String", "type.field (preference, attribute)"),
            Column("payload", "String", "the whole interaction as JSON"),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(
            "occurred_at",
            RAW_KEEP_DAYS,
            "TTL; the retention job deletes what a merge has not yet removed",
            ttl=True,
        ),
    ),
    Table(
        "turn_claims",
        "table",
        "One row per claim of a turn, in spaces whose claims feature is on. Join to turns on "
        "(space_id, turn_id). An erasure deletes the rows of the person's turns.",
        (
            *DIMS,
            Column("turn_id", "String", "the turn"),
            Column("claim_index", "UInt16", "position in the turn's claims"),
            Column("contract_version", "String", "the claim contract's version"),
            Column(
                "category",
                "LowCardinality(String)",
                "the claim category (price, deadline, ...)",
            ),
            Column(
                "class",
                "LowCardinality(String)",
                "money, percent, date, duration, quantity, count, dosage, label ('' if none)",
            ),
            Column("nature", "LowCardinality(String)", "quoted, computed or model"),
            Column("role", "String", "the number's role ('' when none)"),
            Column("verdict", "LowCardinality(String)", "the verdict the SDK gave"),
            Column(
                "action",
                "LowCardinality(String)",
                "the action taken: none, block, warn, count, rewrite, discard_anchor",
            ),
            Column(
                "evidenced",
                "Bool",
                "the claim stands on evidence (matched, quoted_found or anchored)",
            ),
            Column("value", "String", "the normalized value"),
            Column("evidence", "String", "the evidence as JSON ('' when none)"),
            Column("occurred_at", "DateTime64(3, 'UTC')", "when the turn happened"),
            *SOURCE,
            INSERT,
            Column(
                "language",
                "LowCardinality(String)",
                "the turn's language: pt, en, es ('' when not given)",
            ),
        ),
        retention=Retention(None, None, "verdicts of claims"),
    ),
    Table(
        "turn_constraints",
        "table",
        "One row per constraint measurement (a tool call measured against the hard constraints "
        "sent to it). An erasure deletes the rows of the person's turns.",
        (
            *DIMS,
            Column("turn_id", "String", "the turn"),
            Column("call_index", "UInt16", "position in the turn's measurements"),
            Column("tool", "LowCardinality(String)", "the tool called"),
            Column("sent", "UInt32", "hard constraints sent to the tool"),
            Column("results_checked", "UInt32", "results the SDK checked"),
            Column("violations", "UInt32", "results that broke a sent constraint"),
            Column(
                "unverifiable",
                "UInt32",
                "results that broke none but lacked a constrained field",
            ),
            Column("relaxed", "Bool", "the tool said it relaxed what it was asked"),
            Column("occurred_at", "DateTime64(3, 'UTC')", "when the turn happened"),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(None, None, "counts of constraint measurements"),
    ),
    Table(
        "outcomes",
        "table",
        "One row per lifecycle outcome.",
        (
            *ENVELOPE,
            Column("outcome", "LowCardinality(String)", "purchase, delivery, return or kept"),
            Column("ref", "String", "the object"),
            Column("order_id", "String", "the order"),
            Column("exposure_token", "String", "the token as the producer sent it ('' when none)"),
            Column(
                "exposure_id",
                "String",
                "the exposure a valid token points at ('' unless token_status is valid)",
            ),
            Column(
                "exposure_pos",
                "UInt32",
                "the position a valid token points at (0 unless valid)",
            ),
            Column(
                "token_status",
                "LowCardinality(String)",
                "valid, invalid (forged, altered, another space's: no key of the space verifies"
                " it), malformed, absent; unverified for rows written before signed tokens "
                "(migration 10)",
            ),
            Column("attrs", "Map(String, String)", "attributes of the outcome (e.g. size)"),
            Column("reason", "String", "why (e.g. returned_for_size)"),
            Column(
                "for",
                "LowCardinality(String)",
                "whose purchase it was: self, beneficiary:<id> or gift (self when the producer "
                "gave none; migration 13)",
            ),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(None, None, "experiments read outcomes by person"),
    ),
    Table(
        "commands",
        "table",
        "One row per profile command.",
        (
            *ENVELOPE,
            Column("command", "LowCardinality(String)", "correct, delete, opt_out or erase"),
            Column("inference_id", "String", "the inference corrected or deleted"),
            Column("replacement", "String", "the stated replacement as JSON (correct)"),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(None, None, "the person's corrections and requests"),
    ),
    Table(
        "dead_letters",
        "table",
        "One row per refused message. The original bytes stay on the dead-letter topic.",
        (
            Column(
                "reason",
                "LowCardinality(String)",
                "invalid, unknown_space, signals_disabled, turns_disabled, unknown_field, "
                "too_large, store_refused, turn_scope, past_retention (occurred_at, or a "
                "presented list's delivered_at, older than the raw tables keep, 45 days), "
                "ahead_of_clock (either further ahead of the received time than "
                "worker.occurred_at_max_ahead), unsigned or bad_signature",
            ),
            Column("field_path", "String", "the offending field, e.g. interaction.items[0].pos"),
            Column("message", "String", "what was wrong"),
            Column("item_type", "LowCardinality(String)", "the item's type, when it is one"),
            Column("space_id", "String", "the item's space, when it is a space's id"),
            Column("source", "String", "the item's source, when readable"),
            Column("idempotency_key", "String", "the item's key, when readable"),
            Column("raw_sha256", "String", "SHA-256 of the original bytes"),
            Column("raw_bytes", "UInt32", "size of the original bytes"),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(None, None, "reason, field path, digest; no bytes"),
    ),
    Table(
        "exposure_items",
        "table",
        "One row per exposed item (ReplacingMergeTree: query with FINAL). Written by "
        "derivation; see docs/signals.md for when an item counts as exposed.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("for", "LowCardinality(String)", "whose signal: self, beneficiary:<id> or gift"),
            Column("exposure_id", "String", "the exposure (UUIDv7)"),
            Column("list_id", "String", "the list"),
            Column("page", "UInt16", "the page of the list"),
            Column("pos", "UInt32", "position across pages"),
            Column("ref", "String", "the object"),
            Column("weight", "Float64", WEIGHT_FORMULA),
            Column("method", "LowCardinality(String)", "bridge, otel or tool_result"),
            Column("delivered_at", "DateTime64(3, 'UTC')", "when the list reached the person"),
            Column("version", "UInt64", "write version (the newest row wins)"),
        ),
        retention=Retention(
            "delivered_at",
            RAW_KEEP_DAYS,
            "not written past the person's raw window; TTL and the retention job; gift rows 7 days",
            ttl=True,
        ),
    ),
    Table(
        "effective_exposure",
        "view",
        "Per person, bucket and object: the sum of its exposure weights.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("for", "LowCardinality(String)", "whose signal"),
            Column("ref", "String", "the object"),
            Column("effective_exposure", "Float64", "sum of weights"),
            Column("exposures", "UInt64", "times exposed"),
        ),
    ),
    Table(
        "already_presented",
        "view",
        "Per person, bucket and object: times presented (exposed or not), from the raw "
        "interactions (so over their 45 days).",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("for", "LowCardinality(String)", "whose signal"),
            Column("ref", "String", "the object"),
            Column("times", "UInt64", "times presented"),
            Column("last_delivered_at", "DateTime64(3, 'UTC')", "last delivery (UTC)"),
        ),
    ),
    Table(
        "signal_state",
        "table",
        "One derivation state per person (ReplacingMergeTree by version: the newest row is "
        "current). Its evidence is kept 45 days: older evidence is settled into counts.",
        (
            Column("profile_id", "String", "the person"),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column(
                "state",
                "String",
                "the state as JSON (core/derivation/state.py: buckets, counts, tombstones, "
                "opt-out, pages and signals of the raw window)",
            ),
            Column("version", "UInt64", "write version (the newest row wins)"),
            Column(
                "evidence_from",
                "Nullable(DateTime64(3, 'UTC'))",
                "when the oldest raw evidence the state holds occurred (NULL: none; 1970 for "
                "rows written before migration 15, until the retention job folds them)",
            ),
        ),
        retention=Retention(
            "evidence_from",
            RAW_KEEP_DAYS,
            "the engine settles evidence older than 45 days before the person's newest event "
            "into counts; the retention job folds states the clock aged out",
        ),
    ),
    Table(
        "inferences",
        "table",
        "One current row per inference (ReplacingMergeTree: query with FINAL).",
        (
            Column("id", "String", "inf_ + digest of space, person, bucket, kind, attr and value"),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("for", "LowCardinality(String)", "whose signal"),
            Column(
                "kind",
                "LowCardinality(String)",
                "affinity, implicit_negative, attribute or interest",
            ),
            Column("attr", "String", "type.field (type.ref for an object)"),
            Column("value", "String", "the value (the object for implicit_negative and interest)"),
            Column("polarity", "LowCardinality(String)", "prefer or avoid ('' for an attribute)"),
            Column("weight", "Float64", "soft weight, 0 to 1 (0 when retracted)"),
            Column("confidence", "Float64", "1 - 1 / (1 + count)"),
            Column("effective_exposure", "Float64", "evidence: effective exposure"),
            Column("weighted_signal", "Float64", "evidence: weighted signal"),
            Column("events", "UInt32", "evidence: events"),
            Column("sessions", "UInt32", "evidence: distinct sessions"),
            Column("lift", "Float64", "evidence: (signal / exposure) / prior"),
            Column("exposures", "UInt32", "evidence: times exposed (per object)"),
            Column(
                "origin_events",
                "Array(String)",
                "idempotency keys of the latest contributing events",
            ),
            Column("purposes", "Array(String)", "purposes of use"),
            Column("applies", "LowCardinality(String)", "always, or when_asked (an inferred size)"),
            Column("status", "LowCardinality(String)", "active, deleted (tombstone) or retracted"),
            Column("created_at", "DateTime64(3, 'UTC')", "event time it first appeared"),
            Column("updated_at", "DateTime64(3, 'UTC')", "event time it last changed"),
            Column("version", "UInt64", "write version (the newest row wins)"),
        ),
        retention=Retention(
            None, None, "the reviewable profile, with tombstones (gift rows 7 days)"
        ),
    ),
    Table(
        "value_daily",
        "roll-up",
        "Per space, attribute value, day and level: who saw it, exposure and engagements "
        "(AggregatingMergeTree, kept 100 days, partitioned by ISO week since migration 21, so "
        "the days at a window's edges are read from two weeks' parts; fed from interactions by "
        "views, so it outlives the 45-day raw rows). What the priors job reads. Holds per value"
        " and day at most 64 person keys per level, 8 levels: every person below 64, a sample "
        "above. A key is sipHash64 of the profile id: it CAN tell whether a known person saw a "
        "value, so an erase takes the person's key out (at the next priors run, from "
        "erased_people). Sensitive types and fields never appear here.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("attr", "String", "type.field, or type.ref for the object itself"),
            Column(
                "value",
                "String",
                "the value (strings as they are, numbers as ClickHouse writes them)",
            ),
            Column("day", "Date", "the day (UTC)"),
            Column(
                "level",
                "UInt8",
                "0 to 7: the people whose key falls in 4^-level of the key space",
            ),
            Column(
                "people",
                "SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64))",
                "up to 64 person keys of the level, a plain array (since migration 17; were "
                "aggregate states): merge with groupUniqArrayArray(64)",
            ),
            Column(
                "exposure_micro",
                "SimpleAggregateFunction(sum, UInt64)",
                f"effective exposure (sum of {WEIGHT_FORMULA}) in millionths",
            ),
            Column(
                "events",
                "SimpleAggregateFunction(sum, UInt64)",
                "engagements on the object (type.ref rows)",
            ),
            Column(
                "signal_micro",
                "SimpleAggregateFunction(sum, Int64)",
                "weighted signal of those engagements in millionths",
            ),
        ),
        retention=Retention("day", 100, "TTL (aggregates: person keys, no person id)", ttl=True),
    ),
    Table(
        "ref_values_daily",
        "roll-up",
        "Per space, field, object, value and day: how often the object showed the value "
        "(SummingMergeTree, kept 100 days; keyed by field first, so one field's priors run "
        "reads only its rows; partitioned by ISO week since migration 21); the job splits an "
        "object's engagements over the values it showed. No person in it. Sensitive types and "
        "fields never appear.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("attr", "String", "type.field"),
            Column("ref", "String", "the object"),
            Column("value", "String", "the value shown"),
            Column("day", "Date", "the day (UTC)"),
            Column("presentations", "UInt64", "times the object was presented showing it"),
        ),
        retention=Retention("day", 100, "TTL (aggregates: no person)", ttl=True),
    ),
    Table(
        "value_weekly",
        "roll-up",
        "value_daily per ISO week (migration 20): per space, attribute value, week and level, "
        "the week's days merged (AggregatingMergeTree, kept 107 days: a week until its last day"
        " is 100 days old). Filled by a view at every insert into value_daily, so a late event "
        "lands in its week too. The priors job reads the whole weeks inside its window here and"
        " the days at its edges from value_daily (2.2 to 2.5 times fewer rows at 2M to 30M "
        "presented items; at most 7). Holds per value and week at most 64 person keys per "
        "level, 8 levels: it CAN tell whether a known person saw a value that week, so an erase"
        " takes the key out here as in value_daily. Sensitive types and fields never appear "
        "here.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("attr", "String", "type.field, or type.ref for the object itself"),
            Column("value", "String", "the value"),
            Column("week", "Date", "the week's Monday (UTC)"),
            Column("level", "UInt8", "0 to 7, as in value_daily"),
            Column(
                "people",
                "SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64))",
                "up to 64 person keys of the level over the week: the capped union of its days'"
                " keys; merge with groupUniqArrayArray(64)",
            ),
            Column(
                "exposure_micro",
                "SimpleAggregateFunction(sum, UInt64)",
                "effective exposure over the week in millionths",
            ),
            Column(
                "events",
                "SimpleAggregateFunction(sum, UInt64)",
                "engagements on the object over the week (type.ref rows)",
            ),
            Column(
                "signal_micro",
                "SimpleAggregateFunction(sum, Int64)",
                "weighted signal of those engagements in millionths",
            ),
        ),
        retention=Retention(
            "week",
            107,
            "TTL: a week until its last day is 100 days old (aggregates: person keys, no person"
            " id)",
            ttl=True,
        ),
    ),
    Table(
        "ref_values_weekly",
        "roll-up",
        "ref_values_daily per ISO week (migration 20): how often each object showed each value "
        "that week (SummingMergeTree, kept 107 days; filled by a view at every insert into "
        "ref_values_daily). The priors job reads its whole weeks here. No person in it. "
        "Sensitive types and fields never appear.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("attr", "String", "type.field"),
            Column("ref", "String", "the object"),
            Column("value", "String", "the value shown"),
            Column("week", "Date", "the week's Monday (UTC)"),
            Column(
                "presentations",
                "UInt64",
                "times the object was presented showing it that week",
            ),
        ),
        retention=Retention(
            "week",
            107,
            "TTL: a week until its last day is 100 days old (aggregates: no person)",
            ttl=True,
        ),
    ),
    Table(
        "sensitive_daily",
        "roll-up",
        "Sensitive types and fields by name and count only (SummingMergeTree, kept 100 days): "
        "never a value, never a person.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("name", "String", "the sensitive type, or type.field"),
            Column("day", "Date", "the day (UTC)"),
            Column(
                "presented",
                "UInt64",
                "items of the type presented, or items that showed the field",
            ),
            Column("engaged", "UInt64", "engagements on objects of the type"),
        ),
        retention=Retention("day", 100, "TTL (aggregates: names and counts only)", ttl=True),
    ),
    Table(
        "interactions_daily",
        "roll-up",
        "Interactions per space, day and kind, kept 400 days: the retention check compares it "
        "with value_daily after the raw rows are gone. No person in it.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("day", "Date", "the day (UTC)"),
            Column("kind", "LowCardinality(String)", "interaction kind"),
            Column("rows", "UInt64", "interactions"),
        ),
        retention=Retention("day", 400, "TTL (a ledger of row counts)", ttl=True),
    ),
    Table(
        "sensitive_names",
        "table",
        "The sensitive types and type.fields the views leave out, written from the "
        "configuration at every start and priors run.",
        (Column("name", "String", "a type, or type.field"),),
    ),
    Table(
        "erase_tombstones",
        "table",
        "One row per erased person (ReplacingMergeTree: the latest erase wins; read the max): "
        "the ingest and derivation drivers drop any item of theirs that occurred at or before "
        "erased_through, whenever it arrives, so a late event from before the erase neither "
        "writes a row nor starts a new state. It holds the pseudonymous profile id every table "
        "already keys people by (a keyed hash of the handle, or the producer's own id) and the "
        "time of the erase: no handle, no evidence, nothing the person did. An erasure keeps "
        "it.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the erased person (pseudonymous, as in every table)"),
            Column(
                "erased_through",
                "DateTime64(6, 'UTC')",
                "the occurred_at of their latest erase: what occurred at or before it is dropped",
            ),
            Column("recorded_at", "DateTime64(3, 'UTC')", "when the row was written"),
        ),
        retention=Retention(
            "erased_through",
            ERASE_TOMBSTONE_DAYS,
            "an erased person's pseudonymous id and the erase's time, no more: what drops their"
            " late events; deleted by the retention job 52 days after the erase (45 days after "
            "it an item of theirs is refused as past_retention anyway; 7 for a backlog)",
        ),
    ),
    Table(
        "erased_people",
        "table",
        "Keys (sipHash64 of the profile id) of people erased since the last priors run, which "
        "takes them out of value_daily and then deletes them here.",
        (
            Column("space_id", "String", "the space"),
            Column("person", "UInt64", "the erased person's key"),
            Column("requested_at", "DateTime64(3, 'UTC')", "when the erasure ran"),
        ),
    ),
    Table(
        "sink_marks",
        "table",
        "The ingest sink's confirmed marks (AggregatingMergeTree: read the max): per raw table "
        "and source partition, the highest offset whose insert returned, the parts of the "
        "table's materialized views included. After a start the sink repairs the summaries "
        "where the rows above them fall (their days recomputed from the raw rows, "
        "docs/summaries.md), then confirms. No person in it.",
        (
            Column("table", "LowCardinality(String)", "the raw table"),
            Column("_topic", "LowCardinality(String)", "Kafka topic"),
            Column("_partition", "UInt16", "Kafka partition"),
            Column(
                "_offset",
                "SimpleAggregateFunction(max, UInt64)",
                "the highest offset confirmed in the table and its views",
            ),
        ),
        retention=Retention(
            None, None, "a row per raw table and source partition once merged: offsets, no person"
        ),
    ),
    Table(
        "summary_repairs",
        "table",
        "What a repair of the summaries recomputes (docs/summaries.md): per repair, the (space,"
        " day) pairs and insert ids of a raw table's rows above its confirmed marks. Kept a day"
        " (TTL). No person in it.",
        (
            Column("repair", "String", "the repair's id"),
            Column("source", "LowCardinality(String)", "the raw table"),
            Column("space_id", "String", "the space"),
            Column("day", "Date", "a day (UTC) the rows occurred on"),
            Column("insert", "UInt64", "the insert id (`_insert`) of some of the rows"),
            Column("at", "DateTime('UTC')", "when the repair ran (UTC)"),
        ),
        retention=Retention("at", 1, "TTL (a repair's spaces, days and insert ids)", ttl=True),
    ),
    Table(
        "priors",
        "table",
        "Priors by version (one per as-of day): only values seen by at least 10 people.",
        (*PRIOR_COLUMNS,),
        retention=Retention("window_end", 400, "TTL", ttl=True),
    ),
    Table(
        "priors_latest",
        "view",
        "The latest version of each space's priors: what derivation uses.",
        (*PRIOR_COLUMNS,),
    ),
    Table(
        "field_priors",
        "table",
        "Per taste field, its prior fitted across the space's people (a share with a "
        "favourite, lift weights), by version: only fields with evidence from at least 10 "
        "people (core/derivation/field_prior.py).",
        (*FIELD_PRIOR_COLUMNS,),
        retention=Retention("window_end", 400, "TTL", ttl=True),
    ),
    Table(
        "rederived",
        "table",
        "Per space, the priors its people were last derived again with by the nightly "
        "priors job (ReplacingMergeTree: query with FINAL); the job derives them again "
        "when the latest priors differ (docs/signals.md). No person in it.",
        (
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("priors", "String", "a hash of the priors and field priors derived with"),
            Column("people", "UInt64", "people derived again"),
            Column("changed", "UInt64", "inference rows that changed"),
            Column("done_at", "DateTime64(3, 'UTC')", "when every person was done"),
        ),
        retention=Retention(None, None, "a row per space once merged: a hash, no person"),
        internal=True,
    ),
    Table(
        "field_priors_latest",
        "view",
        "The latest version of each space's field priors: what derivation uses.",
        (*FIELD_PRIOR_COLUMNS,),
    ),
    Table(
        "experiment_assignments",
        "table",
        "Who is in which arm (ReplacingMergeTree: query with FINAL).",
        (
            Column("experiment_id", "String", "the experiment"),
            Column("space_id", "LowCardinality(String)", "its space"),
            Column("profile_id", "String", "the person"),
            Column("arm", "LowCardinality(String)", "the arm"),
            Column("source", "LowCardinality(String)", "the source the person came through"),
            Column(
                "method",
                "LowCardinality(String)",
                "cited (a turn named the arm) or hashed (assigned here)",
            ),
            Column(
                "assigned_at",
                "DateTime64(3, 'UTC')",
                "first turn or sighting in the experiment",
            ),
            Column("recorded_at", "DateTime64(3, 'UTC')", "when this row was written"),
        ),
    ),
    Table(
        "experiment_results",
        "table",
        "Per experiment, arm and day: the daily comparison (query with FINAL).",
        (
            Column("experiment_id", "String", "the experiment"),
            Column("space_id", "LowCardinality(String)", "its space"),
            Column("arm", "LowCardinality(String)", "the arm"),
            Column("day", "Date", "the as-of day"),
            Column("baseline", "String", "the arm compared against (control, else the first)"),
            Column("outcome", "LowCardinality(String)", "the outcome that counts as success"),
            Column("window_days", "UInt16", "days after assignment an outcome counts"),
            Column("people", "UInt64", "people in the arm"),
            Column("successes", "UInt64", "people with the outcome in the window"),
            Column("rate", "Nullable(Float64)", "successes / people"),
            Column("rate_low", "Nullable(Float64)", "95% Wilson interval, low"),
            Column("rate_high", "Nullable(Float64)", "95% Wilson interval, high"),
            Column("diff", "Nullable(Float64)", "rate - baseline rate"),
            Column("diff_low", "Nullable(Float64)", "95% Newcombe interval, low"),
            Column("diff_high", "Nullable(Float64)", "95% Newcombe interval, high"),
            Column("lift", "Nullable(Float64)", "rate / baseline rate - 1"),
            Column(
                "lift_low",
                "Nullable(Float64)",
                "95% interval (delta method on the log ratio), low",
            ),
            Column("lift_high", "Nullable(Float64)", "95% interval, high"),
            Column("p_value", "Nullable(Float64)", "two-sided pooled two-proportion z-test"),
            Column("srm_p_value", "Float64", "sample-ratio-mismatch chi-square p-value"),
            Column("srm_flag", "Bool", "srm_p_value < 0.001"),
            Column("computed_at", "DateTime64(3, 'UTC')", "as of when"),
            Column(
                "p_holm",
                "Nullable(Float64)",
                "p_value, Holm-adjusted across the arms against the baseline",
            ),
            Column(
                "cuped_days",
                "UInt16",
                "CUPED covariate: the outcome in these days before assignment (0: off)",
            ),
            Column(
                "cuped_theta",
                "Nullable(Float64)",
                "CUPED slope of the outcome on the covariate (one for all arms)",
            ),
            Column(
                "cuped_diff",
                "Nullable(Float64)",
                "rate - baseline rate, adjusted for the covariate (regression)",
            ),
            Column("cuped_diff_low", "Nullable(Float64)", "95% interval (HC1 errors), low"),
            Column("cuped_diff_high", "Nullable(Float64)", "95% interval (HC1 errors), high"),
            Column("cuped_lift", "Nullable(Float64)", "adjusted rate / adjusted baseline rate - 1"),
            Column(
                "cuped_lift_low",
                "Nullable(Float64)",
                "95% interval (delta method on the log ratio), low",
            ),
            Column("cuped_lift_high", "Nullable(Float64)", "95% interval, high"),
            Column("cuped_p_value", "Nullable(Float64)", "two-sided p-value of cuped_diff"),
            Column(
                "cuped_p_holm",
                "Nullable(Float64)",
                "cuped_p_value, Holm-adjusted across the arms",
            ),
            Column(
                "method",
                "LowCardinality(String)",
                "the sequential method (Lan-DeMets O'Brien-Fleming spending)",
            ),
            Column(
                "basis",
                "LowCardinality(String)",
                "the statistic the sequential test reads: cuped or raw",
            ),
            Column("look", "UInt16", "the daily look (1 = the start day)"),
            Column("horizon_days", "UInt16", "the planned number of daily looks"),
            Column(
                "boundary",
                "Nullable(Float64)",
                "bound on the absolute z at this look (null: nothing may be acted on yet)",
            ),
            Column(
                "seq_p_value",
                "Nullable(Float64)",
                "repeated p-value: smallest level crossed at any look so far",
            ),
            Column("seq_p_holm", "Nullable(Float64)", "seq_p_value, Holm-adjusted across the arms"),
            Column(
                "seq_diff_low",
                "Nullable(Float64)",
                "repeated confidence interval of the tested difference, low",
            ),
            Column("seq_diff_high", "Nullable(Float64)", "repeated confidence interval, high"),
            Column(
                "may_act",
                "Bool",
                "an arm crossed its boundary (seq_p_holm <= alpha), or the horizon passed",
            ),
            Column("verdict", "String", "what the look says, in words"),
            Column(
                "per_person",
                "Nullable(Float64)",
                "outcomes per person within the window (mean of a count)",
            ),
            Column("per_person_diff", "Nullable(Float64)", "per_person - baseline per_person"),
            Column("per_person_diff_low", "Nullable(Float64)", "95% Welch interval, low"),
            Column("per_person_diff_high", "Nullable(Float64)", "95% Welch interval, high"),
            Column(
                "per_person_p_value",
                "Nullable(Float64)",
                "Welch's t-test (a secondary metric: not in Holm or the look)",
            ),
            Column(
                "per_person_cuped_diff",
                "Nullable(Float64)",
                "per_person_diff adjusted for the pre-period count (CUPED)",
            ),
            Column(
                "per_person_cuped_diff_low",
                "Nullable(Float64)",
                "95% interval (HC1 errors), low",
            ),
            Column(
                "per_person_cuped_diff_high",
                "Nullable(Float64)",
                "95% interval (HC1 errors), high",
            ),
            Column(
                "per_person_cuped_p_value",
                "Nullable(Float64)",
                "two-sided p-value of per_person_cuped_diff",
            ),
        ),
    ),
    Table(
        "stated",
        "table",
        "What each person said they want, refuse or are: preferences and attributes, from "
        "interactions and corrections, kept past the 45-day raw TTL (query with FINAL).",
        (
            Column("id", "String", "the event key (#index inside a batch or turn)"),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column(
                "for",
                "LowCardinality(String)",
                "whose constraint (a correction: the corrected inference's bucket; rows written"
                " before migration 13 restated by migration 18)",
            ),
            Column("kind", "LowCardinality(String)", "preference or attribute"),
            Column("attr", "String", "type.field"),
            Column("payload", "String", "the stated interaction as JSON"),
            Column("session_id", "String", "the session it was said in"),
            Column("origin", "String", "the turn or event where it was said"),
            Column("occurred_at", "DateTime64(3, 'UTC')", "when it was said"),
        ),
        retention=Retention(None, None, "what the person said (gift rows 7 days)"),
    ),
    Table(
        "stated_sensitive",
        "table",
        "The words of values stated on sensitive fields (a diet as the person said it), "
        "apart from `stated` and `interactions`, whose payload keeps only the field "
        "(`withheld`): the block serves what they mean (docs/signals.md). No analyst reads "
        "it (the SQL gate refuses it, no role or user is granted it); an erasure removes it "
        "with the person.",
        (
            Column("id", "String", "the stated row's id in `stated`"),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("for", "LowCardinality(String)", "whose statement"),
            Column("attr", "String", "type.field (a sensitive one)"),
            Column("value", "String", "the words as said (JSON: a value, or a list of them)"),
            Column("occurred_at", "DateTime64(3, 'UTC')", "when it was said"),
            *SOURCE,
            INSERT,
        ),
        retention=Retention(
            None,
            None,
            "the words of sensitive stated values, apart (gift rows 7 days); "
            "erased with the person; no analyst reads it",
        ),
        internal=True,
    ),
    Table(
        "review_requests",
        "table",
        "Requests to review an automated decision, by receipts; kept (no TTL) at least 395 days"
        " after resolution (query with FINAL).",
        (
            Column("id", "String", "the request"),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("profile_id", "String", "the person"),
            Column("status", "LowCardinality(String)", "open or resolved"),
            Column("reason", "String", "the subject's reason"),
            Column("receipts", "Array(String)", "receipt ids the request is about"),
            Column("decision", "String", "upheld, overturned or amended"),
            Column(
                "explanation",
                "Array(String)",
                "references (receipts, rules, versions): never personal content",
            ),
            Column("created_at", "DateTime64(3, 'UTC')", "when it was asked"),
            Column(
                "resolved_at",
                "Nullable(DateTime64(3, 'UTC'))",
                "when the decision was recorded",
            ),
            Column("version", "UInt64", "write version (the newest row wins)"),
        ),
        retention=Retention(None, None, "kept at least 395 days after resolution"),
    ),
    Table(
        "webhook_events",
        "table",
        "One row per review-request event (`review_request.created`, `.resolved`), written by a"
        " view in the same insert as the request: the webhooks' outbox. Kept 30 days, also "
        "after an erase, as the requests are (query with FINAL).",
        (
            Column(
                "event_id",
                "String",
                "the event (evt_<request>.created or .resolved): the receiver's idempotency key",
            ),
            Column(
                "type",
                "LowCardinality(String)",
                "review_request.created or review_request.resolved",
            ),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column("review_id", "String", "the review request"),
            Column("profile_id", "String", "the person"),
            Column("status", "LowCardinality(String)", "the request's status in the event"),
            Column("receipts", "Array(String)", "receipt ids the request is about"),
            Column("decision", "String", "upheld, overturned or amended ('' while open)"),
            Column("explanation", "Array(String)", "references (receipts, rules, versions)"),
            Column("created_at", "DateTime64(3, 'UTC')", "when the request was asked"),
            Column(
                "resolved_at",
                "Nullable(DateTime64(3, 'UTC'))",
                "when its decision was recorded",
            ),
            Column("event_at", "DateTime64(3, 'UTC')", "when the event happened"),
        ),
        retention=Retention("event_at", 30, "TTL", ttl=True),
    ),
    Table(
        "webhook_deliveries",
        "table",
        "Where each event stands with each endpoint (query with FINAL). Kept 30 days.",
        (
            Column("endpoint", "String", "<space>/<endpoint id>"),
            Column("event_id", "String", "the event"),
            Column("attempts", "UInt16", "attempts made"),
            Column(
                "status",
                "LowCardinality(String)",
                "pending, delivered or gave_up (after 15 attempts)",
            ),
            Column("next_attempt_at", "DateTime64(3, 'UTC')", "when a pending one is tried again"),
            Column("version", "UInt64", "write version (the newest row wins)"),
        ),
        retention=Retention("next_attempt_at", 30, "TTL", ttl=True),
    ),
    Table(
        "webhook_attempts",
        "table",
        "Every attempt to deliver an event to an endpoint. Kept 30 days.",
        (
            Column("endpoint", "String", "<space>/<endpoint id>"),
            Column("event_id", "String", "the event"),
            Column("attempt", "UInt16", "1 for the first"),
            Column("status", "LowCardinality(String)", "delivered (a 2xx answer) or failed"),
            Column("http_status", "UInt16", "the receiver's status (0: no answer)"),
            Column(
                "error",
                "String",
                "why it failed ('' when delivered): the status line or the client's error",
            ),
            Column("attempted_at", "DateTime64(3, 'UTC')", "when it was sent"),
            Column("duration_ms", "UInt32", "how long until the answer or the error"),
        ),
        retention=Retention("attempted_at", 30, "TTL", ttl=True),
    ),
    Table(
        "claims_minute",
        "roll-up",
        "Claims per minute (SummingMergeTree: query with sum()). Fed from turn_claims.",
        (
            *DIMS,
            Column("category", "LowCardinality(String)", "claim category"),
            Column("class", "LowCardinality(String)", "number class"),
            Column("nature", "LowCardinality(String)", "quoted, computed or model"),
            Column("verdict", "LowCardinality(String)", "verdict"),
            Column("action", "LowCardinality(String)", "action taken"),
            Column("minute", "DateTime('UTC')", "the minute (UTC)"),
            Column("claims", "UInt64", "claims"),
            Column("evidenced", "UInt64", "claims that stand on evidence"),
        ),
    ),
    Table(
        "turns_minute",
        "roll-up",
        "Turns per minute (SummingMergeTree: query with sum()). Fed from turns.",
        (
            *DIMS,
            Column("contract_version", "String", "claim contract version"),
            Column("minute", "DateTime('UTC')", "the minute (UTC)"),
            Column("turns", "UInt64", "turns"),
            Column("guard_acted", "UInt64", "turns where the guard acted"),
            Column("guard_budget_exceeded", "UInt64", "turns where the guard ran out of time"),
            Column(
                "internal_text_found",
                "UInt64",
                "turns with at least one internal_text_found claim",
            ),
            Column("claims", "UInt64", "claims in those turns"),
        ),
    ),
    Table(
        "constraints_minute",
        "roll-up",
        "Constraint measurements per minute (SummingMergeTree: query with sum()).",
        (
            *DIMS,
            Column("tool", "LowCardinality(String)", "the tool"),
            Column("minute", "DateTime('UTC')", "the minute (UTC)"),
            Column("calls", "UInt64", "measured calls"),
            Column("sent", "UInt64", "hard constraints sent"),
            Column("results_checked", "UInt64", "results checked"),
            Column("violations", "UInt64", "results that broke a sent constraint"),
            Column("unverifiable", "UInt64", "results that lacked a constrained field"),
            Column("relaxed", "UInt64", "calls where the tool relaxed what it was asked"),
        ),
    ),
    Table(
        "context_use_claims",
        "view",
        "Per space, source, agent, category, verdict and day: claims and how many stand on "
        "evidence.",
        (
            *DIMS,
            Column("category", "LowCardinality(String)", "claim category"),
            Column("verdict", "LowCardinality(String)", "verdict"),
            Column("day", "Date", "the day (UTC)"),
            Column("claims", "UInt64", "claims"),
            Column("evidenced", "UInt64", "claims that stand on evidence"),
            Column("evidenced_rate", "Float64", "evidenced / claims"),
        ),
    ),
    Table(
        "context_use_constraints",
        "view",
        "Per space, source, agent, tool and day: sent, verifiable, violated.",
        (
            *DIMS,
            Column("tool", "LowCardinality(String)", "the tool"),
            Column("day", "Date", "the day (UTC)"),
            Column("calls", "UInt64", "measured calls"),
            Column("sent", "UInt64", "hard constraints sent"),
            Column("results_checked", "UInt64", "results checked"),
            Column("violations", "UInt64", "results that broke a sent constraint"),
            Column("unverifiable", "UInt64", "results that lacked a constrained field"),
            Column("relaxed", "UInt64", "calls where the tool relaxed what it was asked"),
            Column("verifiable", "Int64", "results_checked - unverifiable"),
            Column(
                "violation_rate",
                "Nullable(Float64)",
                "violations / verifiable, over every checked result, those of calls that sent "
                "no constraint included (NULL when nothing was verifiable): diluted where most "
                "calls send none; context_use_constraint_rates has the rate over calls that "
                "sent constraints and the share of calls that did",
            ),
        ),
    ),
    Table(
        "context_use_constraint_rates",
        "view",
        "Per space, source, agent, tool and day, from the raw measurements: how many calls sent"
        " any hard constraint, and how often the results of those calls broke one.",
        (
            *DIMS,
            Column("tool", "LowCardinality(String)", "the tool"),
            Column("day", "Date", "the day (UTC)"),
            Column("calls", "UInt64", "measured calls"),
            Column(
                "calls_with_constraints",
                "UInt64",
                "calls that sent at least one hard constraint",
            ),
            Column(
                "share_of_calls_with_constraints",
                "Float64",
                "calls_with_constraints / calls: how much of the traffic the violation rate "
                "speaks for",
            ),
            Column("violations", "UInt64", "results that broke a sent constraint"),
            Column(
                "verifiable_in_calls_with_constraints",
                "Int64",
                "results checked minus unverifiable, in calls that sent constraints",
            ),
            Column(
                "violation_rate_in_calls_with_constraints",
                "Nullable(Float64)",
                "violations / verifiable_in_calls_with_constraints (NULL when none was "
                "verifiable): the rate where constraints were sent, not diluted by calls that "
                "sent none",
            ),
        ),
    ),
    Table(
        "context_use_turns",
        "view",
        "Per space, source, agent and day: turns and what the claims guard did.",
        (
            *DIMS,
            Column("day", "Date", "the day (UTC)"),
            Column("turns", "UInt64", "turns"),
            Column("guard_acted", "UInt64", "turns where the guard acted"),
            Column("guard_budget_exceeded", "UInt64", "turns where the guard ran out of time"),
            Column(
                "internal_text_found",
                "UInt64",
                "turns with at least one internal_text_found claim",
            ),
            Column("claims", "UInt64", "claims in those turns"),
        ),
    ),
    Table(
        "contract_versions",
        "view",
        "Claim contract versions seen, per space, source and agent.",
        (
            *DIMS,
            Column("contract_version", "String", "the version ('' for turns that cite none)"),
            Column("turns", "UInt64", "turns citing it"),
            Column("first_seen", "DateTime('UTC')", "first minute seen (UTC)"),
            Column("last_seen", "DateTime('UTC')", "last minute seen (UTC)"),
        ),
    ),
    Table(
        "idempotency_keys",
        "table",
        "Every idempotency key taken, with the message that took it: how a copy is known as a "
        f"duplicate, live and in a replay ({KEY_KEEP_DAYS} days from `kept_from`: past the "
        "window in which its item is accepted, so a record sent again is never a second item)."
        " An item refused whole for what its sender "
        "can correct takes a digest of its bytes instead (`raw`…; `refused`… with their length "
        "for the store's refusals, `store_refused`), leaving its key free for the item "
        "corrected.",
        (
            Column(
                "dedup_key",
                "String",
                "the space and the item's idempotency key; the digest of the bytes of an "
                "invalid item (core/ingest.dedup_key_for)",
            ),
            Column("space_id", "LowCardinality(String)", "the space"),
            Column(
                "kept_from",
                "DateTime64(3, 'UTC')",
                "the later of the item's occurred_at and when the key was taken "
                "(core/time_edges.key_kept_from)",
            ),
            *SOURCE,
            INSERT,
        ),
        retention=Retention("kept_from", KEY_KEEP_DAYS, "TTL", ttl=True),
        internal=True,
    ),
    Table(
        "erase_subjects",
        "table",
        "The people an erasure is removing, while it runs; deleted when it ends (a TTL of 1 day"
        " removes what a crash left).",
        (
            Column("erase_id", "String", "the erasure"),
            Column("space_id", "String", "the space"),
            Column("subject", "String", "the person erased (profile id)"),
            Column("requested_at", "DateTime64(3, 'UTC')", "when the erasure was asked (UTC)"),
        ),
        retention=Retention("requested_at", 1, "deleted when the erasure ends; TTL", ttl=True),
        internal=True,
    ),
    Table(
        "schema_migrations",
        "table",
        "The migrations applied to this database, by version.",
        (
            Column("version", "UInt32", "the migration's number"),
            Column("name", "String", "its name"),
            Column("applied_at", "DateTime64(3, 'UTC')", "when it was applied (UTC)"),
        ),
        internal=True,
    ),
)

_BY_NAME = {t.name: t for t in TABLES}

#: Every table's promise, checked by ``turnstream retention check`` (jobs/retention.py)
#: against the oldest row the store holds. Per-person evidence is the raw window's
#: (``RAW_KEEP_DAYS``): the raw interactions, the pages shown with their values
#: (``exposure_items``) and the evidence a derivation state keeps (``signal_state``).
RETENTION: dict[str, Retention] = {t.name: t.retention for t in TABLES if t.retention}


def table(name: str) -> Table:
    """The declaration of ``name`` (KeyError naming it when none)."""
    return _BY_NAME[name]


def columns_ddl(name: str) -> str:
    """The column list of ``CREATE TABLE name (...)``, as declared here."""
    return ",\n".join(f"    {c.name} {c.type}" for c in table(name).columns)


def ttl_ddl(name: str) -> str:
    """The ``TTL`` clause of ``name``'s retention ('' when no TTL keeps it)."""
    r = table(name).retention
    if r is None or not r.ttl or r.dated_by is None:
        return ""
    [dated] = [c for c in table(name).columns if c.name == r.dated_by]
    at = f"toDateTime({r.dated_by})" if dated.type.startswith("DateTime") else r.dated_by
    return f"TTL {at} + INTERVAL {r.days} DAY"
