"""What analysts may query: every table and view, each column described.

`turnstream docs tables` renders this against the live schema into docs/tables.md; a
test fails when a column exists without a description or a description has no column.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import get_args

from turnstream.core.time_edges import ERASE_TOMBSTONE_DAYS
from turnstream.errors import StoreError
from turnstream.sinks.current_views import CURRENT_VIEWS

__all__ = [
    "AGGREGATES_AND_PEOPLE",
    "CATALOG",
    "INTERNAL",
    "RETENTION",
    "Entry",
    "Retention",
    "render_markdown",
]

_SOURCE = {
    "ingested_at": "when the worker wrote the row (UTC)",
    "_topic": "Kafka topic the row came from",
    "_partition": "Kafka partition the row came from",
    "_offset": "Kafka offset the row came from (with topic and partition: the row's identity)",
    "_insert": "the sink's insert that wrote the row (a hash of its insert token; 0 for rows "
    "written before migration 22)",
}
_ENVELOPE = {
    "space_id": "the space (tenant)",
    "profile_id": "the person: keyed hash of the handle, or the producer's profile id",
    "source": "channel or integration that sent the item",
    "conversation_id": "the conversation ('' when none)",
    "session_id": "the session: session_id, else conversation_id ('' when none)",
    "idempotency_key": "the producer's idempotency key",
    "occurred_at": "when it happened (event time, UTC)",
}
_DIMS = {
    "space_id": "the space",
    "source": "channel or integration",
    "agent": "the agent that produced the turn",
}


@dataclass(frozen=True)
class Retention:
    """What a table promises to keep: rows dated by ``dated_by`` at most ``days`` old
    (None: kept), and how the promise is kept."""

    dated_by: str | None
    days: int | None
    how: str


#: Every table's promise, checked by ``turnstream retention check`` (jobs/retention.py)
#: against the oldest row the store holds. Per-person evidence is the raw window's (45
#: days): the raw interactions, the pages shown with their values (``exposure_items``)
#: and the evidence a derivation state keeps (``signal_state``).
RETENTION: dict[str, Retention] = {
    "interactions": Retention("occurred_at", 45, "TTL; the retention job deletes what a "
                              "merge has not yet removed"),
    "exposure_items": Retention("delivered_at", 45, "not written past the person's raw "
                                "window; TTL and the retention job; gift rows 7 days"),
    "signal_state": Retention("evidence_from", 45, "the engine settles evidence older "
                              "than 45 days before the person's newest event into counts; "
                              "the retention job folds states the clock aged out"),
    "idempotency_keys": Retention("ingested_at", 30, "TTL"),
    "value_daily": Retention("day", 100, "TTL (aggregates: person keys, no person id)"),
    "ref_values_daily": Retention("day", 100, "TTL (aggregates: no person)"),
    "value_weekly": Retention("week", 107, "TTL: a week until its last day is 100 days old "
                              "(aggregates: person keys, no person id)"),
    "ref_values_weekly": Retention("week", 107, "TTL: a week until its last day is 100 "
                                   "days old (aggregates: no person)"),
    "sensitive_daily": Retention("day", 100, "TTL (aggregates: names and counts only)"),
    "interactions_daily": Retention("day", 400, "TTL (a ledger of row counts)"),
    "priors": Retention("window_end", 400, "TTL"),
    "sink_marks": Retention(None, None, "a row per raw table and source partition once "
                            "merged: offsets, no person"),
    "summary_repairs": Retention("at", 1, "TTL (a repair's spaces, days and insert ids)"),
    "erase_subjects": Retention("requested_at", 1, "deleted when the erasure ends; TTL"),
    "erase_tombstones": Retention("erased_through", ERASE_TOMBSTONE_DAYS, "an erased "
                                  "person's pseudonymous id and the erase's time, no more: "
                                  "what drops their late events; deleted by the retention "
                                  "job 52 days after the erase (45 days after it an item "
                                  "of theirs is refused as past_retention anyway; 7 for a "
                                  "backlog)"),
    "webhook_events": Retention("event_at", 30, "TTL"),
    "webhook_deliveries": Retention("next_attempt_at", 30, "TTL"),
    "webhook_attempts": Retention("attempted_at", 30, "TTL"),
    "stated": Retention(None, None, "what the person said (gift rows 7 days)"),
    "stated_sensitive": Retention(None, None, "the words of sensitive stated values, apart "
                                  "(gift rows 7 days); erased with the person; no analyst "
                                  "reads it"),
    "inferences": Retention(None, None, "the reviewable profile, with tombstones "
                            "(gift rows 7 days)"),
    "review_requests": Retention(None, None, "kept at least 395 days after resolution"),
    "turns": Retention(None, None, "counts and verdicts, no interaction content"),
    "turn_claims": Retention(None, None, "verdicts of claims"),
    "turn_constraints": Retention(None, None, "counts of constraint measurements"),
    "outcomes": Retention(None, None, "experiments read outcomes by person"),
    "commands": Retention(None, None, "the person's corrections and requests"),
    "dead_letters": Retention(None, None, "reason, field path, digest; no bytes"),
}  # fmt: skip


def _retention_section() -> list[str]:
    lines = [
        "## Retention",
        "",
        "What each table promises to keep; `turnstream retention check` compares it with "
        "the oldest row the store holds and exits 1 when a table holds rows past its "
        "window. The raw window of per-person evidence is 45 days: past it, what "
        "derivation needs lives in counts that cannot replay the evidence "
        '(docs/signals.md, "Retention").',
        "",
        "| table | dated by | kept | how |",
        "|---|---|---|---|",
    ]
    for table, r in RETENTION.items():
        kept = f"{r.days} days" if r.days is not None else "kept"
        lines.append(
            f"| `{table}` | {f'`{r.dated_by}`' if r.dated_by else ''} | {kept} | {r.how} |"
        )
    return [*lines, ""]


_PRIOR_COLUMNS = {
    "space_id": "the space",
    "attr": "type.field (type.ref for an object)",
    "value": "the value",
    "people": "distinct people who saw it in the window: exact below 64, an estimate "
    "(within ~25%) from 64 up",
    "events": "engagements on it in the window",
    "exposure": "effective exposure in the window",
    "signal": "weighted signal in the window",
    "prior": "signal / exposure: the rate lift is measured against",
    "window_start": "first day of the 90-day window",
    "window_end": "day after the window (the as-of day)",
    "version": "the as-of day as yyyymmdd",
}


#: What each aggregate that outlives the raw rows holds per value and day, and whether it
#: can identify a person (issue 20, issue 15 item 4).
_AGGREGATE_ROWS = (
    (
        "`value_daily`",
        "per level (8): up to 64 person keys (sipHash64 of the profile id); exposure, "
        "events, signal",
        "yes: a known person's key can be looked up. An erase records the key in "
        "`erased_people`; the next priors run rebuilds every state without it, then deletes "
        "the key (a test scans every table and view afterwards)",
    ),
    ("`ref_values_daily`", "per object: how often it showed the value", "no: no person in it"),
    (
        "`value_weekly`",
        "per ISO week (its Monday) and level: what `value_daily` holds for the week's days "
        "merged: up to 64 person keys (the capped union of the days' keys); exposure, "
        "events, signal summed",
        "yes, as `value_daily`: a key per person. An erase takes the key out of both at the "
        "next priors run (the same test scans every table and view afterwards)",
    ),
    (
        "`ref_values_weekly`",
        "per object and ISO week: how often it showed the value that week",
        "no: no person in it",
    ),
    (
        "`sensitive_daily`",
        "a sensitive type or field: items presented, engagements; never a value",
        "no",
    ),
    ("`interactions_daily`", "per kind: rows", "no"),
    ("`priors`", "counts and rates of values seen by 10 people or more", "no"),
)
AGGREGATES_AND_PEOPLE = "\n".join(
    [
        "## The daily aggregates and people",
        "",
        "| aggregate | per value and day it holds | can it identify a person? |",
        "|---|---|---|",
        *(f"| {a} | {held} | {who} |" for a, held, who in _AGGREGATE_ROWS),
        "",
        "A value seen by fewer than 64 people is counted exactly (every key is kept); from 64 up",
        "the levels are a sample, and the count an estimate within ~25%. So the floor (10 people,",
        "at most 64) is decided exactly, and no value and day holds more than 8 x 64 keys,",
        "whatever the traffic. The weekly roll-ups hold the same per value and week (a week's",
        "keys merged keep every person below 64 too), so the floor stays exact over weeks.",
        "",
    ]
)


@dataclass(frozen=True)
class Entry:
    kind: str  # "table", "roll-up" or "view"
    description: str
    columns: dict[str, str]


CATALOG: dict[str, Entry] = {
    "turns": Entry(
        "table",
        "One row per accepted turn record.",
        {
            **_ENVELOPE,
            "turn_id": "the turn",
            "agent": "the agent",
            "build": "the agent's build ('' when not given)",
            "contract_version": "the claim contract's version the turn cites",
            "constraints_version": "the constraints block's version the turn cites ('' when none)",
            "experiment_id": "experiment the turn ran under ('' when none)",
            "experiment_arm": "arm of that experiment",
            "guard_acted": "the claims guard changed or held the output",
            "guard_budget_exceeded": "the guard ran out of time and let the text go annotated",
            "internal_text_found": "claims with verdict internal_text_found in this turn",
            "interactions": "interactions accepted from this turn",
            "interactions_refused": "interactions refused (the space's signals feature is off)",
            "claims": "claims in the turn",
            "constraints": "constraint measurements (tool calls) in the turn",
            "language": "the language the output was read in: pt, en, es ('' when not given)",
            **_SOURCE,
        },
    ),
    "interactions": Entry(
        "table",
        "One row per interaction, from batch items and from turns. Kept 45 days.",
        {
            **_ENVELOPE,
            "for": "whose signal: self, beneficiary:<id> or gift",
            "turn_id": "the turn that carried it ('' for a batch item)",
            "item_index": "position in the turn's interactions (0 for a batch item)",
            "kind": "presented, seen, engaged, feedback, preference, attribute, watch, unwatch",
            "exposure_id": "the exposure (presented, seen, engaged)",
            "list_id": "the list (presented)",
            "ref": "the object (engaged, feedback)",
            "attr": "type.field (preference, attribute)",
            "payload": "the whole interaction as JSON",
            **_SOURCE,
        },
    ),
    "turn_claims": Entry(
        "table",
        "One row per claim of a turn, in spaces whose claims feature is on. Join to turns "
        "on (space_id, turn_id).",
        {
            **_DIMS,
            "turn_id": "the turn",
            "claim_index": "position in the turn's claims",
            "contract_version": "the claim contract's version",
            "category": "the claim category (price, deadline, ...)",
            "class": "money, percent, date, duration, quantity, count, dosage, label ('' if none)",
            "nature": "quoted, computed or model",
            "role": "the number's role ('' when none)",
            "verdict": "the verdict the SDK gave",
            "action": "the action taken: none, block, warn, count, rewrite, discard_anchor",
            "evidenced": "the claim stands on evidence (matched, quoted_found or anchored)",
            "value": "the normalized value",
            "evidence": "the evidence as JSON ('' when none)",
            "language": "the turn's language: pt, en, es ('' when not given)",
            "occurred_at": "when the turn happened",
            **_SOURCE,
        },
    ),
    "turn_constraints": Entry(
        "table",
        "One row per constraint measurement (a tool call measured against the hard "
        "constraints sent to it).",
        {
            **_DIMS,
            "turn_id": "the turn",
            "call_index": "position in the turn's measurements",
            "tool": "the tool called",
            "sent": "hard constraints sent to the tool",
            "results_checked": "results the SDK checked",
            "violations": "results that broke a sent constraint",
            "unverifiable": "results that broke none but lacked a constrained field",
            "relaxed": "the tool said it relaxed what it was asked",
            "occurred_at": "when the turn happened",
            **_SOURCE,
        },
    ),
    "outcomes": Entry(
        "table",
        "One row per lifecycle outcome.",
        {
            **_ENVELOPE,
            "outcome": "purchase, delivery, return or kept",
            "ref": "the object",
            "order_id": "the order",
            "exposure_token": "the token as the producer sent it ('' when none)",
            "exposure_id": "the exposure a valid token points at ('' unless token_status is valid)",
            "exposure_pos": "the position a valid token points at (0 unless valid)",
            "token_status": "valid, invalid (forged, altered, another space's: no key of the "
            "space verifies it), malformed, absent; unverified for rows written before "
            "signed tokens (migration 10)",
            "attrs": "attributes of the outcome (e.g. size)",
            "reason": "why (e.g. returned_for_size)",
            "for": "whose purchase it was: self, beneficiary:<id> or gift (self when the "
            "producer gave none; migration 13)",
            **_SOURCE,
        },
    ),
    "commands": Entry(
        "table",
        "One row per profile command.",
        {
            **_ENVELOPE,
            "command": "correct, delete, opt_out or erase",
            "inference_id": "the inference corrected or deleted",
            "replacement": "the stated replacement as JSON (correct)",
            **_SOURCE,
        },
    ),
    "dead_letters": Entry(
        "table",
        "One row per refused message. The original bytes stay on the dead-letter topic.",
        {
            "reason": "invalid, unknown_space, signals_disabled, turns_disabled, unknown_field, "
            "too_large, store_refused, turn_scope, past_retention (occurred_at older than the "
            "raw tables keep, 45 days), ahead_of_clock (occurred_at further ahead of the "
            "received time than worker.occurred_at_max_ahead), unsigned or bad_signature",
            "field_path": "the offending field, e.g. interaction.items[0].pos",
            "message": "what was wrong",
            "item_type": "the item's type, when readable",
            "space_id": "the item's space, when readable",
            "source": "the item's source, when readable",
            "idempotency_key": "the item's key, when readable",
            "raw_sha256": "SHA-256 of the original bytes",
            "raw_bytes": "size of the original bytes",
            **_SOURCE,
        },
    ),
    "exposure_items": Entry(
        "table",
        "One row per exposed item (ReplacingMergeTree: query with FINAL). Written by "
        "derivation; see docs/signals.md for when an item counts as exposed.",
        {
            "space_id": "the space",
            "profile_id": "the person",
            "for": "whose signal: self, beneficiary:<id> or gift",
            "exposure_id": "the exposure (UUIDv7)",
            "list_id": "the list",
            "page": "the page of the list",
            "pos": "position across pages",
            "ref": "the object",
            "weight": "1 / log2(pos + 1)",
            "method": "bridge, otel or tool_result",
            "delivered_at": "when the list reached the person",
            "version": "write version (the newest row wins)",
        },
    ),
    "effective_exposure": Entry(
        "view",
        "Per person, bucket and object: the sum of its exposure weights.",
        {
            "space_id": "the space",
            "profile_id": "the person",
            "for": "whose signal",
            "ref": "the object",
            "effective_exposure": "sum of weights",
            "exposures": "times exposed",
        },
    ),
    "already_presented": Entry(
        "view",
        "Per person, bucket and object: times presented (exposed or not), from the raw "
        "interactions (so over their 45 days).",
        {
            "space_id": "the space",
            "profile_id": "the person",
            "for": "whose signal",
            "ref": "the object",
            "times": "times presented",
            "last_delivered_at": "last delivery (UTC)",
        },
    ),
    "signal_state": Entry(
        "table",
        "One derivation state per person (ReplacingMergeTree by version: the newest row is "
        "current). Its evidence is kept 45 days: older evidence is settled into counts.",
        {
            "profile_id": "the person",
            "space_id": "the space",
            "state": "the state as JSON (core/derivation/state.py: buckets, counts, "
            "tombstones, opt-out, pages and signals of the raw window)",
            "version": "write version (the newest row wins)",
            "evidence_from": "when the oldest raw evidence the state holds occurred (NULL: "
            "none; 1970 for rows written before migration 15, until the retention job "
            "folds them)",
        },
    ),
    "inferences": Entry(
        "table",
        "One current row per inference (ReplacingMergeTree: query with FINAL).",
        {
            "id": "inf_ + digest of space, person, bucket, kind, attr and value",
            "space_id": "the space",
            "profile_id": "the person",
            "for": "whose signal",
            "kind": "affinity, implicit_negative, attribute or interest",
            "attr": "type.field (type.ref for an object)",
            "value": "the value (the object for implicit_negative and interest)",
            "polarity": "prefer or avoid ('' for an attribute)",
            "weight": "soft weight, 0 to 1 (0 when retracted)",
            "confidence": "1 - 1 / (1 + count)",
            "effective_exposure": "evidence: effective exposure",
            "weighted_signal": "evidence: weighted signal",
            "events": "evidence: events",
            "sessions": "evidence: distinct sessions",
            "lift": "evidence: (signal / exposure) / prior",
            "exposures": "evidence: times exposed (per object)",
            "origin_events": "idempotency keys of the latest contributing events",
            "purposes": "purposes of use",
            "applies": "always, or when_asked (an inferred size)",
            "status": "active, deleted (tombstone) or retracted",
            "created_at": "event time it first appeared",
            "updated_at": "event time it last changed",
            "version": "write version (the newest row wins)",
        },
    ),
    "value_daily": Entry(
        "roll-up",
        "Per space, attribute value, day and level: who saw it, exposure and engagements "
        "(AggregatingMergeTree, kept 100 days, partitioned by ISO week since migration "
        "21, so the days at a window's edges are read from two weeks' parts; fed from "
        "interactions by views, so it outlives the 45-day raw rows). What the priors job "
        "reads. Holds per value and day "
        "at most 64 person keys per level, 8 levels: every person below 64, a sample "
        "above. A key is sipHash64 of the profile id: it CAN tell whether a known person "
        "saw a value, so an erase takes the person's key out (at the next priors run, "
        "from erased_people). Sensitive types and fields never appear here.",
        {
            "space_id": "the space",
            "attr": "type.field, or type.ref for the object itself",
            "value": "the value (strings as they are, numbers as ClickHouse writes them)",
            "day": "the day (UTC)",
            "level": "0 to 7: the people whose key falls in 4^-level of the key space",
            "people": "up to 64 person keys of the level, a plain array (since migration "
            "17; were aggregate states): merge with groupUniqArrayArray(64)",
            "exposure_micro": "effective exposure (sum of 1 / log2(pos + 1)) in millionths",
            "events": "engagements on the object (type.ref rows)",
            "signal_micro": "weighted signal of those engagements in millionths",
        },
    ),
    "ref_values_daily": Entry(
        "roll-up",
        "Per space, field, object, value and day: how often the object showed the value "
        "(SummingMergeTree, kept 100 days; keyed by field first, so one field's priors "
        "run reads only its rows; partitioned by ISO week since migration 21); the job "
        "splits an object's engagements over the values it showed. No person in it. "
        "Sensitive types and fields never appear.",
        {
            "space_id": "the space",
            "attr": "type.field",
            "ref": "the object",
            "value": "the value shown",
            "day": "the day (UTC)",
            "presentations": "times the object was presented showing it",
        },
    ),
    "value_weekly": Entry(
        "roll-up",
        "value_daily per ISO week (migration 20): per space, attribute value, week and "
        "level, the week's days merged (AggregatingMergeTree, kept 107 days: a week until "
        "its last day is 100 days old). Filled by a view at every insert into value_daily, "
        "so a late event lands in its week too. The priors job reads the whole weeks "
        "inside its window here and the days at its edges from value_daily (2.2 to 2.5 "
        "times fewer rows at 2M to 30M presented items; at most 7). Holds per value and "
        "week at most 64 person keys per level, 8 levels: it CAN tell whether a known "
        "person saw a value that week, so an erase takes the key out here as in "
        "value_daily. Sensitive types and fields never appear here.",
        {
            "space_id": "the space",
            "attr": "type.field, or type.ref for the object itself",
            "value": "the value",
            "week": "the week's Monday (UTC)",
            "level": "0 to 7, as in value_daily",
            "people": "up to 64 person keys of the level over the week: the capped union "
            "of its days' keys; merge with groupUniqArrayArray(64)",
            "exposure_micro": "effective exposure over the week in millionths",
            "events": "engagements on the object over the week (type.ref rows)",
            "signal_micro": "weighted signal of those engagements in millionths",
        },
    ),
    "ref_values_weekly": Entry(
        "roll-up",
        "ref_values_daily per ISO week (migration 20): how often each object showed each "
        "value that week (SummingMergeTree, kept 107 days; filled by a view at every insert "
        "into ref_values_daily). The priors job reads its whole weeks here. No person in "
        "it. Sensitive types and fields never appear.",
        {
            "space_id": "the space",
            "attr": "type.field",
            "ref": "the object",
            "value": "the value shown",
            "week": "the week's Monday (UTC)",
            "presentations": "times the object was presented showing it that week",
        },
    ),
    "sensitive_daily": Entry(
        "roll-up",
        "Sensitive types and fields by name and count only (SummingMergeTree, kept 100 "
        "days): never a value, never a person.",
        {
            "space_id": "the space",
            "name": "the sensitive type, or type.field",
            "day": "the day (UTC)",
            "presented": "items of the type presented, or items that showed the field",
            "engaged": "engagements on objects of the type",
        },
    ),
    "interactions_daily": Entry(
        "roll-up",
        "Interactions per space, day and kind, kept 400 days: the retention check "
        "compares it with value_daily after the raw rows are gone. No person in it.",
        {
            "space_id": "the space",
            "day": "the day (UTC)",
            "kind": "interaction kind",
            "rows": "interactions",
        },
    ),
    "sensitive_names": Entry(
        "table",
        "The sensitive types and type.fields the views leave out, written from the "
        "configuration at every start and priors run.",
        {"name": "a type, or type.field"},
    ),
    "erase_tombstones": Entry(
        "table",
        "One row per erased person (ReplacingMergeTree: the latest erase wins; read the "
        "max): the ingest and derivation drivers drop any item of theirs that occurred at "
        "or before erased_through, whenever it arrives, so a late event from before the "
        "erase neither writes a row nor starts a new state. It holds the pseudonymous "
        "profile id every table already keys people by (a keyed hash of the handle, or "
        "the producer's own id) and the time of the erase: no handle, no evidence, nothing "
        "the person did. An erasure keeps it.",
        {
            "space_id": "the space",
            "profile_id": "the erased person (pseudonymous, as in every table)",
            "erased_through": "the occurred_at of their latest erase: what occurred at or "
            "before it is dropped",
            "recorded_at": "when the row was written",
        },
    ),
    "erased_people": Entry(
        "table",
        "Keys (sipHash64 of the profile id) of people erased since the last priors run, "
        "which takes them out of value_daily and then deletes them here.",
        {
            "space_id": "the space",
            "person": "the erased person's key",
            "requested_at": "when the erasure ran",
        },
    ),
    "sink_marks": Entry(
        "table",
        "The ingest sink's confirmed marks (AggregatingMergeTree: read the max): per raw "
        "table and source partition, the highest offset whose insert returned, the parts "
        "of the table's materialized views included. After a start the sink repairs the "
        "summaries where the rows above them fall (their days recomputed from the raw "
        "rows, docs/summaries.md), then confirms. No person in it.",
        {
            "table": "the raw table",
            "_topic": "Kafka topic",
            "_partition": "Kafka partition",
            "_offset": "the highest offset confirmed in the table and its views",
        },
    ),
    "summary_repairs": Entry(
        "table",
        "What a repair of the summaries recomputes (docs/summaries.md): per repair, the "
        "(space, day) pairs and insert ids of a raw table's rows above its confirmed "
        "marks. Kept a day (TTL). No person in it.",
        {
            "repair": "the repair's id",
            "source": "the raw table",
            "space_id": "the space",
            "day": "a day (UTC) the rows occurred on",
            "insert": "the insert id (`_insert`) of some of the rows",
            "at": "when the repair ran (UTC)",
        },
    ),
    "priors": Entry(
        "table",
        "Priors by version (one per as-of day): only values seen by at least 10 people.",
        _PRIOR_COLUMNS,
    ),
    "priors_latest": Entry(
        "view",
        "The latest version of each space's priors: what derivation uses.",
        _PRIOR_COLUMNS,
    ),
    "experiment_assignments": Entry(
        "table",
        "Who is in which arm (ReplacingMergeTree: query with FINAL).",
        {
            "experiment_id": "the experiment",
            "space_id": "its space",
            "profile_id": "the person",
            "arm": "the arm",
            "source": "the source the person came through",
            "method": "cited (a turn named the arm) or hashed (assigned here)",
            "assigned_at": "first turn or sighting in the experiment",
            "recorded_at": "when this row was written",
        },
    ),
    "experiment_results": Entry(
        "table",
        "Per experiment, arm and day: the daily comparison (query with FINAL).",
        {
            "experiment_id": "the experiment",
            "space_id": "its space",
            "arm": "the arm",
            "day": "the as-of day",
            "baseline": "the arm compared against (control, else the first)",
            "outcome": "the outcome that counts as success",
            "window_days": "days after assignment an outcome counts",
            "people": "people in the arm",
            "successes": "people with the outcome in the window",
            "rate": "successes / people",
            "rate_low": "95% Wilson interval, low",
            "rate_high": "95% Wilson interval, high",
            "diff": "rate - baseline rate",
            "diff_low": "95% Newcombe interval, low",
            "diff_high": "95% Newcombe interval, high",
            "lift": "rate / baseline rate - 1",
            "lift_low": "95% interval (delta method on the log ratio), low",
            "lift_high": "95% interval, high",
            "p_value": "two-sided pooled two-proportion z-test",
            "srm_p_value": "sample-ratio-mismatch chi-square p-value",
            "srm_flag": "srm_p_value < 0.001",
            "computed_at": "as of when",
            "p_holm": "p_value, Holm-adjusted across the arms against the baseline",
            "cuped_days": "CUPED covariate: the outcome in these days before assignment (0: off)",
            "cuped_theta": "CUPED slope of the outcome on the covariate (one for all arms)",
            "cuped_diff": "rate - baseline rate, adjusted for the covariate (regression)",
            "cuped_diff_low": "95% interval (HC1 errors), low",
            "cuped_diff_high": "95% interval (HC1 errors), high",
            "cuped_lift": "adjusted rate / adjusted baseline rate - 1",
            "cuped_lift_low": "95% interval (delta method on the log ratio), low",
            "cuped_lift_high": "95% interval, high",
            "cuped_p_value": "two-sided p-value of cuped_diff",
            "cuped_p_holm": "cuped_p_value, Holm-adjusted across the arms",
            "method": "the sequential method (Lan-DeMets O'Brien-Fleming spending)",
            "basis": "the statistic the sequential test reads: cuped or raw",
            "look": "the daily look (1 = the start day)",
            "horizon_days": "the planned number of daily looks",
            "boundary": "bound on the absolute z at this look (null: nothing may be acted on yet)",
            "seq_p_value": "repeated p-value: smallest level crossed at any look so far",
            "seq_p_holm": "seq_p_value, Holm-adjusted across the arms",
            "seq_diff_low": "repeated confidence interval of the tested difference, low",
            "seq_diff_high": "repeated confidence interval, high",
            "may_act": "an arm crossed its boundary (seq_p_holm <= alpha), or the horizon passed",
            "verdict": "what the look says, in words",
            "per_person": "outcomes per person within the window (mean of a count)",
            "per_person_diff": "per_person - baseline per_person",
            "per_person_diff_low": "95% Welch interval, low",
            "per_person_diff_high": "95% Welch interval, high",
            "per_person_p_value": "Welch's t-test (a secondary metric: not in Holm or the look)",
            "per_person_cuped_diff": "per_person_diff adjusted for the pre-period count (CUPED)",
            "per_person_cuped_diff_low": "95% interval (HC1 errors), low",
            "per_person_cuped_diff_high": "95% interval (HC1 errors), high",
            "per_person_cuped_p_value": "two-sided p-value of per_person_cuped_diff",
        },
    ),
    "stated": Entry(
        "table",
        "What each person said they want, refuse or are: preferences and attributes, from "
        "interactions and corrections, kept past the 45-day raw TTL (query with FINAL).",
        {
            "id": "the event key (#index inside a batch or turn)",
            "space_id": "the space",
            "profile_id": "the person",
            "for": "whose constraint (a correction: the corrected inference's bucket; "
            "rows written before migration 13 restated by migration 18)",
            "kind": "preference or attribute",
            "attr": "type.field",
            "payload": "the stated interaction as JSON",
            "session_id": "the session it was said in",
            "origin": "the turn or event where it was said",
            "occurred_at": "when it was said",
        },
    ),
    "review_requests": Entry(
        "table",
        "Requests to review an automated decision, by receipts; kept (no TTL) at least 395 "
        "days after resolution (query with FINAL).",
        {
            "id": "the request",
            "space_id": "the space",
            "profile_id": "the person",
            "status": "open or resolved",
            "reason": "the subject's reason",
            "receipts": "receipt ids the request is about",
            "decision": "upheld, overturned or amended",
            "explanation": "references (receipts, rules, versions): never personal content",
            "created_at": "when it was asked",
            "resolved_at": "when the decision was recorded",
            "version": "write version (the newest row wins)",
        },
    ),
    "webhook_events": Entry(
        "table",
        "One row per review-request event (`review_request.created`, `.resolved`), written "
        "by a view in the same insert as the request: the webhooks' outbox. Kept 30 days, "
        "also after an erase, as the requests are (query with FINAL).",
        {
            "event_id": "the event (evt_<request>.created or .resolved): the receiver's "
            "idempotency key",
            "type": "review_request.created or review_request.resolved",
            "space_id": "the space",
            "review_id": "the review request",
            "profile_id": "the person",
            "status": "the request's status in the event",
            "receipts": "receipt ids the request is about",
            "decision": "upheld, overturned or amended ('' while open)",
            "explanation": "references (receipts, rules, versions)",
            "created_at": "when the request was asked",
            "resolved_at": "when its decision was recorded",
            "event_at": "when the event happened",
        },
    ),
    "webhook_deliveries": Entry(
        "table",
        "Where each event stands with each endpoint (query with FINAL). Kept 30 days.",
        {
            "endpoint": "<space>/<endpoint id>",
            "event_id": "the event",
            "attempts": "attempts made",
            "status": "pending, delivered or gave_up (after 15 attempts)",
            "next_attempt_at": "when a pending one is tried again",
            "version": "write version (the newest row wins)",
        },
    ),
    "webhook_attempts": Entry(
        "table",
        "Every attempt to deliver an event to an endpoint. Kept 30 days.",
        {
            "endpoint": "<space>/<endpoint id>",
            "event_id": "the event",
            "attempt": "1 for the first",
            "status": "delivered (a 2xx answer) or failed",
            "http_status": "the receiver's status (0: no answer)",
            "error": "why it failed ('' when delivered): the status line or the client's error",
            "attempted_at": "when it was sent",
            "duration_ms": "how long until the answer or the error",
        },
    ),
    "claims_minute": Entry(
        "roll-up",
        "Claims per minute (SummingMergeTree: query with sum()). Fed from turn_claims.",
        {
            **_DIMS,
            "category": "claim category",
            "class": "number class",
            "nature": "quoted, computed or model",
            "verdict": "verdict",
            "action": "action taken",
            "minute": "the minute (UTC)",
            "claims": "claims",
            "evidenced": "claims that stand on evidence",
        },
    ),
    "turns_minute": Entry(
        "roll-up",
        "Turns per minute (SummingMergeTree: query with sum()). Fed from turns.",
        {
            **_DIMS,
            "contract_version": "claim contract version",
            "minute": "the minute (UTC)",
            "turns": "turns",
            "guard_acted": "turns where the guard acted",
            "guard_budget_exceeded": "turns where the guard ran out of time",
            "internal_text_found": "turns with at least one internal_text_found claim",
            "claims": "claims in those turns",
        },
    ),
    "constraints_minute": Entry(
        "roll-up",
        "Constraint measurements per minute (SummingMergeTree: query with sum()).",
        {
            **_DIMS,
            "tool": "the tool",
            "minute": "the minute (UTC)",
            "calls": "measured calls",
            "sent": "hard constraints sent",
            "results_checked": "results checked",
            "violations": "results that broke a sent constraint",
            "unverifiable": "results that lacked a constrained field",
            "relaxed": "calls where the tool relaxed what it was asked",
        },
    ),
    "context_use_claims": Entry(
        "view",
        "Per space, source, agent, category, verdict and day: claims and how many stand "
        "on evidence.",
        {
            **_DIMS,
            "category": "claim category",
            "verdict": "verdict",
            "day": "the day (UTC)",
            "claims": "claims",
            "evidenced": "claims that stand on evidence",
            "evidenced_rate": "evidenced / claims",
        },
    ),
    "context_use_constraints": Entry(
        "view",
        "Per space, source, agent, tool and day: sent, verifiable, violated.",
        {
            **_DIMS,
            "tool": "the tool",
            "day": "the day (UTC)",
            "calls": "measured calls",
            "sent": "hard constraints sent",
            "results_checked": "results checked",
            "violations": "results that broke a sent constraint",
            "unverifiable": "results that lacked a constrained field",
            "relaxed": "calls where the tool relaxed what it was asked",
            "verifiable": "results_checked - unverifiable",
            "violation_rate": "violations / verifiable, over every checked result, those of "
            "calls that sent no constraint included (NULL when nothing was verifiable): "
            "diluted where most calls send none; context_use_constraint_rates has the rate "
            "over calls that sent constraints and the share of calls that did",
        },
    ),
    "context_use_constraint_rates": Entry(
        "view",
        "Per space, source, agent, tool and day, from the raw measurements: how many calls "
        "sent any hard constraint, and how often the results of those calls broke one.",
        {
            **_DIMS,
            "tool": "the tool",
            "day": "the day (UTC)",
            "calls": "measured calls",
            "calls_with_constraints": "calls that sent at least one hard constraint",
            "share_of_calls_with_constraints": "calls_with_constraints / calls: how much of "
            "the traffic the violation rate speaks for",
            "violations": "results that broke a sent constraint",
            "verifiable_in_calls_with_constraints": "results checked minus unverifiable, in "
            "calls that sent constraints",
            "violation_rate_in_calls_with_constraints": "violations / "
            "verifiable_in_calls_with_constraints (NULL when none was verifiable): the rate "
            "where constraints were sent, not diluted by calls that sent none",
        },
    ),
    "context_use_turns": Entry(
        "view",
        "Per space, source, agent and day: turns and what the claims guard did.",
        {
            **_DIMS,
            "day": "the day (UTC)",
            "turns": "turns",
            "guard_acted": "turns where the guard acted",
            "guard_budget_exceeded": "turns where the guard ran out of time",
            "internal_text_found": "turns with at least one internal_text_found claim",
            "claims": "claims in those turns",
        },
    ),
    "contract_versions": Entry(
        "view",
        "Claim contract versions seen, per space, source and agent.",
        {
            **_DIMS,
            "contract_version": "the version ('' for turns that cite none)",
            "turns": "turns citing it",
            "first_seen": "first minute seen (UTC)",
            "last_seen": "last minute seen (UTC)",
        },
    ),
}


#: The objects analysts do not query, described: a table here or in :data:`CATALOG`, or a
#: materialized view or a Null table (described from the live schema), else the page
#: refuses to render. Materialized views and Null tables need no entry.
INTERNAL: dict[str, str] = {
    "idempotency_keys": "Every idempotency key taken, with the message that took it: how a "
    "copy is known as a duplicate, live and in a replay (30 days).",
    "erase_subjects": "The people an erasure is removing, while it runs; deleted when it "
    "ends (a TTL of 1 day removes what a crash left).",
    "schema_migrations": "The migrations applied to this database, by version.",
    "stated_sensitive": "The words of values stated on sensitive fields (a diet as the "
    "person said it), apart from `stated` and `interactions`, whose payload keeps only the "
    "field (`withheld`): the block serves what they mean (docs/signals.md). No analyst "
    "reads it (the SQL gate refuses it, no role or user is granted it); an erasure "
    "removes it with the person.",
}

_NULL = (
    "a Null table: it keeps nothing. Rows inserted into it only pass through to the "
    "materialized views that read it"
)
_MV_TO = re.compile(r"\bTO\s+`?(?:\w+`?\.`?)?(\w+)`?", re.I)


#: An object of the database: name, engine, create statement, the views that read it.
_Object = tuple[str, str, str, list[str]]


def _internal_section(objects: list[_Object]) -> tuple[list[str], list[str]]:
    """The section of internal objects (lines) and what lacks a description."""
    lines = [
        "## Internal objects",
        "",
        "What the store holds beside the tables and views above: how it is fed and kept. "
        "Not for queries: they change between versions. A materialized view runs at each "
        "insert into the table it reads and writes its rows into its target.",
        "",
        "| object | engine | what it is |",
        "|---|---|---|",
    ]
    current = [
        "## Current views",
        "",
        "Tables that hold one current row per identity (or one summed row per key) only after "
        "ClickHouse merges them each have a view `<table>_current` that reads them `FINAL` "
        "(migration 28, `sinks/current_views.py`): on a ClickHouse server analysts read these.",
        "",
        "| view | reads | one row per |",
        "|---|---|---|",
    ]
    missing = []
    reads: dict[str, list[str]] = {}
    for name, _, _, dependents in objects:
        for view in dependents:
            reads.setdefault(view, []).append(name)
    for name, engine, create, _ in objects:
        if name in CATALOG:
            continue
        table = name.removesuffix("_current")
        if name != table and table in CURRENT_VIEWS:
            current.append(f"| `{name}` | `{table}` FINAL | {CURRENT_VIEWS[table]} |")
            continue
        if engine == "MaterializedView":
            target = _MV_TO.search(create)
            sources = ", ".join(f"`{t}`" for t in sorted(reads.get(name, ()))) or "?"
            what = f"writes into `{target[1] if target else '?'}` each insert into {sources}"
        elif engine == "Null":
            what = _NULL
        elif name in INTERNAL:
            what = INTERNAL[name]
        else:
            missing.append(f"{name}: no description (catalog.INTERNAL)")
            continue
        lines.append(f"| `{name}` | {engine} | {what} |")
    return [*current, "", *lines, ""], missing


def _values(annotation: object) -> str:
    """The values of a ``Literal`` (or an enum class), in backticks."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        found = [str(m.value) for m in annotation]
    else:
        found = [str(v) for v in get_args(annotation)]
    return ", ".join(f"`{v}`" for v in found)


def _value_sets_section() -> list[str]:
    """Every closed set of values a column takes, from the models and rules that define it."""
    from turnstream.core.derivation.inference import InferenceKind
    from turnstream.core.experiment_warnings import CODES
    from turnstream.core.ingest import Reason
    from turnstream.models import (
        EVIDENCED_VERDICTS,
        Claim,
        Verdict,
        commands,
        interactions,
        outcomes,
        turns,
    )

    def field(model: type, name: str) -> object:
        return model.model_fields[name].annotation  # type: ignore[attr-defined]

    kinds = sorted(interactions.INTERACTION_KINDS)
    rows = [
        ("`turn_claims.verdict`, `claims_minute.verdict`", _values(Verdict),
         "meanings in docs/claims.md; "
         + ", ".join(f"`{v}`" for v in sorted(EVIDENCED_VERDICTS))
         + " stand on evidence (`evidenced`)"),
        ("`turn_claims.action`", _values(field(Claim, "action")),
         "what the SDK's guard did with the claim"),
        ("`turn_claims.nature`", _values(field(Claim, "nature")), ""),
        ("`turn_claims.class`", _values(turns.ClaimClass), "empty when not given"),
        ("`interactions.kind`", ", ".join(f"`{k}`" for k in kinds), ""),
        ("`engaged` actions (`payload`)", _values(field(interactions.Engaged, "action")), ""),
        ("`feedback` polarity (`payload`)", _values(field(interactions.Feedback, "polarity")),
         ""),
        ("`presented` method (`payload`)", _values(field(interactions.Presented, "method")),
         ""),
        ("preference scope", _values(field(interactions.Preference, "scope")),
         "`turn` never reaches the store"),
        ("preference source", _values(field(interactions.Preference, "source")), ""),
        ("attribute source", _values(field(interactions.Attribute, "source")), ""),
        ("`outcomes.outcome`", _values(field(outcomes.Outcome, "outcome")), ""),
        ("`commands.command`", _values(field(commands.Command, "command")), ""),
        ("`inferences.kind`", _values(InferenceKind), ""),
        ("`inferences.status`", "`active`, `deleted`, `retracted`",
         "docs/signals.md"),
        ("`dead_letters.reason`", _values(Reason), "docs/limits.md"),
        ("`for`", "`self`, `gift`, `beneficiary:<id>`",
         "a keyword of SQL: write it as `` `for` `` in a query"),
        ("`experiment_results.verdict`", "starts with `wait:`, `act:` or `final:`",
         "then says why (docs/experiments.md)"),
        ("experiment warnings (`code`)", ", ".join(f"`{c}`" for c in CODES),
         "docs/experiments.md"),
    ]  # fmt: skip
    lines = [
        "## Value sets",
        "",
        "The closed sets of values columns take, read from the models and rules that define them.",
        "",
        "| where | values | note |",
        "|---|---|---|",
    ]
    lines += [f"| {where} | {values} | {note} |" for where, values, note in rows]
    return [*lines, ""]


def render_markdown(
    describe: Callable[[str], list[tuple[str, str]]],
    objects: Callable[[], list[_Object]],
) -> str:
    """The tables page, with each column's type read from the live schema.

    ``describe(name)`` returns ``(column, type)`` pairs; ``objects()`` every object of the
    database as ``(name, engine, create statement, the views that read it)``. Raises
    StoreError when the catalog and the schema disagree (a column or an internal object
    without a description).
    """
    lines = [
        "# Tables and views",
        "",
        "Generated by `turnstream docs tables` from the live schema; a test keeps it in step.",
        "",
        *_retention_section(),
        AGGREGATES_AND_PEOPLE,
        *_value_sets_section(),
    ]
    internal, problems = _internal_section(objects())
    for name, entry in CATALOG.items():
        live = describe(name)
        live_names = [c for c, _ in live]
        problems += [f"{name}.{c}: no description" for c in live_names if c not in entry.columns]
        problems += [f"{name}.{c}: not in the schema" for c in entry.columns if c not in live_names]
        lines += [f"## `{name}` ({entry.kind})", "", entry.description, ""]
        lines += ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c}` | `{t}` | {entry.columns.get(c, '')} |" for c, t in live]
        lines.append("")
    lines += internal
    if problems:
        raise StoreError("the catalog and the schema disagree: " + "; ".join(problems))
    return "\n".join(lines)
