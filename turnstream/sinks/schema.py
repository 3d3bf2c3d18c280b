"""The ClickHouse schema as numbered migrations, applied at start-up and safe to re-apply.

Raw tables are not partitioned by time on purpose: an insert then becomes exactly one
part, which is what makes a batch's insert atomic and the sink's per-partition
high-water marks exact (see ``writer.py``). Every raw row keeps the Kafka topic,
partition and offset it came from.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from turnstream.sinks.current_views import current_view_statements
from turnstream.sinks.people_sets import (
    CAP,
    level_of,
    merged_people,
    people_keys,
    people_state,
    people_type,
    person_key,
    state_type,
)
from turnstream.sinks.store import Store

__all__ = ["MIGRATIONS", "RAW_TABLES", "Migration", "apply_migrations"]

log = logging.getLogger(__name__)

#: Insert deduplication needs a window on non-replicated MergeTree tables.
_DEDUP = "SETTINGS non_replicated_deduplication_window = 1000"
_SOURCE = """
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64"""
_ENVELOPE = """
    space_id LowCardinality(String),
    profile_id String,
    source LowCardinality(String),
    conversation_id String,
    session_id String,
    idempotency_key String,
    occurred_at DateTime64(3, 'UTC'),"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


#: Tables the ingest sink writes, each row with its Kafka source.
RAW_TABLES = (
    "turns",
    "interactions",
    "turn_claims",
    "turn_constraints",
    "outcomes",
    "commands",
    "dead_letters",
    "stated_sensitive",
    "idempotency_keys",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "raw tables",
        (
            f"""CREATE TABLE IF NOT EXISTS turns ({_ENVELOPE}
    turn_id String,
    agent LowCardinality(String),
    build String,
    contract_version String,
    experiment_id String,
    experiment_arm String,
    guard_acted Bool,
    guard_budget_exceeded Bool,
    internal_text_found UInt32,
    interactions UInt32,
    interactions_refused UInt32,
    claims UInt32,
    constraints UInt32,{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, source, agent, occurred_at, turn_id) {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS interactions ({_ENVELOPE}
    `for` LowCardinality(String),
    turn_id String,
    item_index UInt16,
    kind LowCardinality(String),
    exposure_id String,
    list_id String,
    ref String,
    attr String,
    payload String,{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at)
TTL toDateTime(occurred_at) + INTERVAL 45 DAY {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS turn_claims (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    turn_id String,
    claim_index UInt16,
    contract_version String,
    category LowCardinality(String),
    class LowCardinality(String),
    nature LowCardinality(String),
    role String,
    verdict LowCardinality(String),
    action LowCardinality(String),
    evidenced Bool,
    value String,
    evidence String,
    occurred_at DateTime64(3, 'UTC'),{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, source, agent, occurred_at, turn_id) {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS turn_constraints (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    turn_id String,
    call_index UInt16,
    tool LowCardinality(String),
    sent UInt32,
    results_checked UInt32,
    violations UInt32,
    unverifiable UInt32,
    relaxed Bool,
    occurred_at DateTime64(3, 'UTC'),{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, source, agent, tool, occurred_at) {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS outcomes ({_ENVELOPE}
    outcome LowCardinality(String),
    ref String,
    order_id String,
    exposure_token String,
    exposure_id String,
    exposure_pos UInt32,
    attrs Map(String, String),
    reason String,{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at) {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS commands ({_ENVELOPE}
    command LowCardinality(String),
    inference_id String,
    replacement String,{_SOURCE}
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at) {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS idempotency_keys (
    dedup_key String,
    space_id LowCardinality(String),{_SOURCE}
) ENGINE = MergeTree ORDER BY dedup_key
TTL toDateTime(ingested_at) + INTERVAL 30 DAY {_DEDUP}""",
            f"""CREATE TABLE IF NOT EXISTS dead_letters (
    reason LowCardinality(String),
    field_path String,
    message String,
    item_type LowCardinality(String),
    space_id String,
    source String,
    idempotency_key String,
    raw_sha256 String,
    raw_bytes UInt32,{_SOURCE}
) ENGINE = MergeTree ORDER BY (reason, ingested_at) {_DEDUP}""",
        ),
    ),
    Migration(
        2,
        "context use: claim verdicts and constraint measurements rolled up",
        (
            f"""CREATE TABLE IF NOT EXISTS claims_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    category LowCardinality(String),
    class LowCardinality(String),
    nature LowCardinality(String),
    verdict LowCardinality(String),
    action LowCardinality(String),
    minute DateTime('UTC'),
    claims UInt64,
    evidenced UInt64
) ENGINE = SummingMergeTree
ORDER BY (space_id, source, agent, category, class, nature, verdict, action, minute) {_DEDUP}""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS claims_minute_mv TO claims_minute AS
SELECT space_id, source, agent, category, class, nature, verdict, action,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS claims, countIf(evidenced) AS evidenced
FROM turn_claims
GROUP BY space_id, source, agent, category, class, nature, verdict, action, minute""",
            f"""CREATE TABLE IF NOT EXISTS turns_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    contract_version String,
    minute DateTime('UTC'),
    turns UInt64,
    guard_acted UInt64,
    guard_budget_exceeded UInt64,
    internal_text_found UInt64,
    claims UInt64
) ENGINE = SummingMergeTree
ORDER BY (space_id, source, agent, contract_version, minute) {_DEDUP}""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS turns_minute_mv TO turns_minute AS
SELECT space_id, source, agent, contract_version,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS turns, countIf(guard_acted) AS guard_acted,
    countIf(guard_budget_exceeded) AS guard_budget_exceeded,
    countIf(internal_text_found > 0) AS internal_text_found, sum(claims) AS claims
FROM turns
GROUP BY space_id, source, agent, contract_version, minute""",
            f"""CREATE TABLE IF NOT EXISTS constraints_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    tool LowCardinality(String),
    minute DateTime('UTC'),
    calls UInt64,
    sent UInt64,
    results_checked UInt64,
    violations UInt64,
    unverifiable UInt64,
    relaxed UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, source, agent, tool, minute) {_DEDUP}""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS constraints_minute_mv TO constraints_minute AS
SELECT space_id, source, agent, tool,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS calls, sum(sent) AS sent, sum(results_checked) AS results_checked,
    sum(violations) AS violations, sum(unverifiable) AS unverifiable,
    countIf(relaxed) AS relaxed
FROM turn_constraints
GROUP BY space_id, source, agent, tool, minute""",
            """CREATE VIEW IF NOT EXISTS context_use_claims AS
SELECT space_id, source, agent, category, verdict, day,
    n AS claims, e AS evidenced, round(e / n, 4) AS evidenced_rate
FROM (
    SELECT space_id, source, agent, category, verdict, toDate(minute) AS day,
        sum(claims) AS n, sum(evidenced) AS e
    FROM claims_minute
    GROUP BY space_id, source, agent, category, verdict, day
)""",
            """CREATE VIEW IF NOT EXISTS context_use_constraints AS
SELECT space_id, source, agent, tool, day,
    c AS calls, s AS sent, rc AS results_checked, v AS violations, u AS unverifiable,
    r AS relaxed, rc - u AS verifiable,
    if(rc > u, round(v / (rc - u), 4), NULL) AS violation_rate
FROM (
    SELECT space_id, source, agent, tool, toDate(minute) AS day,
        sum(calls) AS c, sum(sent) AS s, sum(results_checked) AS rc,
        sum(violations) AS v, sum(unverifiable) AS u, sum(relaxed) AS r
    FROM constraints_minute
    GROUP BY space_id, source, agent, tool, day
)""",
            """CREATE VIEW IF NOT EXISTS context_use_turns AS
SELECT space_id, source, agent, toDate(minute) AS day,
    sum(turns) AS turns, sum(guard_acted) AS guard_acted,
    sum(guard_budget_exceeded) AS guard_budget_exceeded,
    sum(internal_text_found) AS internal_text_found, sum(claims) AS claims
FROM turns_minute
GROUP BY space_id, source, agent, day""",
            """CREATE VIEW IF NOT EXISTS contract_versions AS
SELECT space_id, source, agent, contract_version,
    sum(turns) AS turns, min(minute) AS first_seen, max(minute) AS last_seen
FROM turns_minute
GROUP BY space_id, source, agent, contract_version""",
        ),
    ),
    Migration(
        3,
        "signals: exposures, inferences and derivation state",
        (
            """CREATE TABLE IF NOT EXISTS exposure_items (
    space_id LowCardinality(String),
    profile_id String,
    `for` LowCardinality(String),
    exposure_id String,
    list_id String,
    page UInt16,
    pos UInt32,
    ref String,
    weight Float64,
    method LowCardinality(String),
    delivered_at DateTime64(3, 'UTC'),
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (space_id, profile_id, `for`, exposure_id, pos)""",
            """CREATE VIEW IF NOT EXISTS effective_exposure AS
SELECT space_id, profile_id, `for`, ref,
    round(sum(weight), 6) AS effective_exposure, count() AS exposures
FROM exposure_items FINAL
GROUP BY space_id, profile_id, `for`, ref""",
            """CREATE VIEW IF NOT EXISTS already_presented AS
SELECT space_id, profile_id, `for`, JSONExtractString(item, 'ref') AS ref,
    count() AS times, max(delivered) AS last_delivered_at
FROM (
    SELECT space_id, profile_id, `for`,
        parseDateTime64BestEffort(JSONExtractString(payload, 'delivered_at'), 3, 'UTC')
            AS delivered,
        arrayJoin(JSONExtractArrayRaw(payload, 'items')) AS item
    FROM interactions
    WHERE kind = 'presented'
)
GROUP BY space_id, profile_id, `for`, ref""",
            """CREATE TABLE IF NOT EXISTS inferences (
    id String,
    space_id LowCardinality(String),
    profile_id String,
    `for` LowCardinality(String),
    kind LowCardinality(String),
    attr String,
    value String,
    polarity LowCardinality(String),
    weight Float64,
    confidence Float64,
    effective_exposure Float64,
    weighted_signal Float64,
    events UInt32,
    sessions UInt32,
    lift Float64,
    exposures UInt32,
    origin_events Array(String),
    purposes Array(String),
    applies LowCardinality(String),
    status LowCardinality(String),
    created_at DateTime64(3, 'UTC'),
    updated_at DateTime64(3, 'UTC'),
    version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (space_id, profile_id, id)""",
            """CREATE TABLE IF NOT EXISTS signal_state (
    profile_id String,
    space_id LowCardinality(String),
    state String,
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY profile_id""",
        ),
    ),
    # Priors: daily aggregates that outlive the 45-day raw TTL (kept 100 days, enough for
    # the 90-day window), fed at insert time by materialized views on `interactions`, and
    # the versioned table the nightly job writes. Design: turnstream/jobs/priors.py.
    Migration(
        4,
        "priors: daily value aggregates, the interactions ledger, versioned priors",
        (
            # Per space, attribute value and day. `people`: exact set of the people exposed
            # (uniqExact keeps a 128-bit hash per person, so merging days is exact at the
            # 10-person floor). Weights and signals in millionths: integer sums do not
            # depend on merge order, so a recompute gives the same figures.
            f"""CREATE TABLE IF NOT EXISTS value_daily (
    space_id LowCardinality(String),
    attr String,
    value String,
    day Date,
    people AggregateFunction(uniqExact, String),
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, day)
TTL day + INTERVAL 100 DAY {_DEDUP}""",
            # Exposed items of each `presented` page: one row per shown field
            # (`type.field`, the value spelled as a string or as ClickHouse writes the JSON
            # literal) and one for the object itself (`type.ref`). Exposed here means
            # visible on its page (pos - first pos of the page < visible_k): a `seen` event
            # cannot reach back to the page's items in a view, so items exposed only by
            # scrolling are not counted (an under-count of exposure, documented).
            """CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_presented_mv TO value_daily AS
SELECT space_id, pair.1 AS attr, pair.2 AS value, day,
    uniqExactState(profile_id) AS people, sum(weight_micro) AS exposure_micro
FROM (
    SELECT space_id, profile_id, day, weight_micro,
        arrayJoin(arrayPushFront(
            arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown'))),
            (concat(type, '.ref'), ref))) AS pair
    FROM (
        SELECT space_id, profile_id, toDate(occurred_at) AS day, item,
            JSONExtractString(item, 'ref') AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos,
            toUInt64(round(1 / log2(greatest(pos, 1) + 1) * 1000000)) AS weight_micro
        FROM (
            SELECT space_id, profile_id, occurred_at,
                JSONExtractUInt(payload, 'visible_k') AS visible_k,
                JSONExtractArrayRaw(payload, 'items') AS items,
                arrayMin(arrayMap(i -> JSONExtractUInt(i, 'pos'), items)) AS first_pos
            FROM interactions
            WHERE kind = 'presented'
        )
        ARRAY JOIN items AS item
        WHERE pos >= 1 AND pos - first_pos < visible_k
    )
)
GROUP BY space_id, attr, value, day""",
            # Engagements credit the engaged object (`type.ref`): click, detail, mention,
            # compare, share 1, cart 2. `people` and exposure stay empty on these rows.
            """CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS
SELECT space_id, concat(splitByChar(':', ref)[1], '.ref') AS attr, ref AS value,
    toDate(occurred_at) AS day, count() AS events,
    sum(if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)) AS signal_micro
FROM interactions
WHERE kind = 'engaged' AND ref != ''
GROUP BY space_id, attr, value, day""",
            # Which values each object showed, and how often (every presented item, exposed
            # or not): the job splits an object's engagements over the values it showed.
            f"""CREATE TABLE IF NOT EXISTS ref_values_daily (
    space_id LowCardinality(String),
    ref String,
    attr String,
    value String,
    day Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, ref, attr, value, day)
TTL day + INTERVAL 100 DAY {_DEDUP}""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS
SELECT space_id, ref, pair.1 AS attr, pair.2 AS value, day, count() AS presentations
FROM (
    SELECT space_id, toDate(occurred_at) AS day,
        JSONExtractString(item, 'ref') AS ref,
        arrayJoin(arrayMap(
            kv -> (concat(splitByChar(':', ref)[1], '.', kv.1),
                if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
            arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown'))))
            AS pair
    FROM interactions
    ARRAY JOIN JSONExtractArrayRaw(payload, 'items') AS item
    WHERE kind = 'presented'
)
GROUP BY space_id, ref, attr, value, day""",
            # What the raw table held, per space, day and kind, for a year: the retention
            # check compares it with value_daily after the raw rows are gone.
            f"""CREATE TABLE IF NOT EXISTS interactions_daily (
    space_id LowCardinality(String),
    day Date,
    kind LowCardinality(String),
    rows UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, day, kind)
TTL day + INTERVAL 400 DAY {_DEDUP}""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS interactions_daily_mv TO interactions_daily AS
SELECT space_id, toDate(occurred_at) AS day, kind, count() AS rows
FROM interactions
GROUP BY space_id, day, kind""",
            # One row per space, value and version (as-of date as yyyymmdd); rewriting a
            # version replaces it whole (see turnstream/jobs/priors.py).
            """CREATE TABLE IF NOT EXISTS priors (
    space_id LowCardinality(String),
    attr String,
    value String,
    people UInt64,
    events UInt64,
    exposure Float64,
    signal Float64,
    prior Float64,
    window_start Date,
    window_end Date,
    version UInt32
) ENGINE = ReplacingMergeTree ORDER BY (space_id, version, attr, value)
TTL window_end + INTERVAL 400 DAY""",
            """CREATE VIEW IF NOT EXISTS priors_latest AS
SELECT space_id, attr, value, people, events, exposure, signal, prior,
    window_start, window_end, version
FROM priors FINAL
WHERE (space_id, version) IN (SELECT space_id, max(version) FROM priors GROUP BY space_id)""",
        ),
    ),
    Migration(
        5,
        "experiments: assignments and results",
        (
            """CREATE TABLE IF NOT EXISTS experiment_assignments (
    experiment_id String,
    space_id LowCardinality(String),
    profile_id String,
    arm LowCardinality(String),
    source LowCardinality(String),
    method LowCardinality(String),
    assigned_at DateTime64(3, 'UTC'),
    recorded_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY (experiment_id, profile_id)""",
            f"""CREATE TABLE IF NOT EXISTS experiment_results (
    experiment_id String,
    space_id LowCardinality(String),
    arm LowCardinality(String),
    day Date,
    baseline String,
    outcome LowCardinality(String),
    window_days UInt16,
    people UInt64,
    successes UInt64,
    rate Nullable(Float64),
    rate_low Nullable(Float64),
    rate_high Nullable(Float64),
    diff Nullable(Float64),
    diff_low Nullable(Float64),
    diff_high Nullable(Float64),
    lift Nullable(Float64),
    lift_low Nullable(Float64),
    lift_high Nullable(Float64),
    p_value Nullable(Float64),
    srm_p_value Float64,
    srm_flag Bool,
    computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at) ORDER BY (experiment_id, arm, day) {_DEDUP}""",
        ),
    ),
    Migration(
        6,
        "read side: stated constraints and review requests",
        (
            """CREATE TABLE IF NOT EXISTS stated (
    id String,
    space_id LowCardinality(String),
    profile_id String,
    `for` LowCardinality(String),
    kind LowCardinality(String),
    attr String,
    payload String,
    session_id String,
    origin String,
    occurred_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY (space_id, profile_id, id)""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_interactions TO stated AS
SELECT concat(idempotency_key, '#', toString(item_index)) AS id, space_id, profile_id,
    `for`, kind, attr, payload, session_id,
    if(turn_id != '', turn_id, idempotency_key) AS origin, occurred_at
FROM interactions
WHERE kind IN ('preference', 'attribute')""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_corrections TO stated AS
SELECT idempotency_key AS id, space_id, profile_id, 'self' AS `for`,
    JSONExtractString(replacement, 'kind') AS kind,
    JSONExtractString(replacement, 'attr') AS attr, replacement AS payload, session_id,
    idempotency_key AS origin, occurred_at
FROM commands
WHERE command = 'correct' AND replacement != ''""",
            """CREATE TABLE IF NOT EXISTS review_requests (
    id String,
    space_id LowCardinality(String),
    profile_id String,
    status LowCardinality(String),
    reason String,
    receipts Array(String),
    decision String,
    explanation Array(String),
    created_at DateTime64(3, 'UTC'),
    resolved_at Nullable(DateTime64(3, 'UTC')),
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (space_id, profile_id, id)""",
        ),
    ),
    # A profile id is unique only within its space: migration 3 keyed signal_state by
    # profile_id alone, so one id in two spaces kept one state. Rebuilt, keyed by both.
    # Each statement can run again after a crash, except between DROP and RENAME.
    Migration(
        7,
        "signal_state keyed by space and profile",
        (
            """CREATE TABLE IF NOT EXISTS signal_state_by_space (
    profile_id String,
    space_id LowCardinality(String),
    state String,
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (space_id, profile_id)""",
            "INSERT INTO signal_state_by_space SELECT profile_id, space_id, state, version "
            "FROM signal_state",
            "DROP TABLE signal_state",
            "RENAME TABLE signal_state_by_space TO signal_state",
        ),
    ),
    # Issue 16: the daily comparison adds CUPED-adjusted figures, Holm across arms, the
    # group-sequential look and outcomes per person (a continuous metric beside the rate).
    # Added columns only, so rows written before keep their meaning.
    Migration(
        8,
        "experiment_results: CUPED, Holm, the sequential look, outcomes per person",
        (
            """ALTER TABLE experiment_results
    ADD COLUMN IF NOT EXISTS p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_days UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cuped_theta Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS method LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS basis LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS look UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS horizon_days UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS boundary Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS may_act Bool DEFAULT false,
    ADD COLUMN IF NOT EXISTS verdict String DEFAULT '',
    ADD COLUMN IF NOT EXISTS per_person Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_p_value Nullable(Float64)""",
        ),
    ),
    # An erasure's subjects, while it runs (sinks/erasure.py): its mutations read them
    # from here, so that no subject is written into a statement's text. Deleted when the
    # erasure ends; the TTL removes what a crash left.
    # (9, not 8: main's migration 8 adds issue 16's experiment_results columns.)
    Migration(
        9,
        "the subjects of erasures in progress",
        (
            """CREATE TABLE IF NOT EXISTS erase_subjects (
    erase_id String,
    space_id String,
    subject String,
    requested_at DateTime64(3, 'UTC')
) ENGINE = MergeTree ORDER BY erase_id
TTL toDateTime(requested_at) + INTERVAL 1 DAY""",
        ),
    ),
    # Issue 13: exposure tokens are signed; the ingest rule verifies each outcome's token
    # and fills exposure_id/exposure_pos only when it is valid. Rows written before this
    # migration were never verified: they read 'unverified' (or 'absent' without a token),
    # and nothing attributes through them (experiments read token_status = 'valid').
    Migration(
        10,
        "outcomes.token_status",
        (
            """ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS token_status LowCardinality(String)
    DEFAULT if(exposure_token = '', 'absent', 'unverified') AFTER exposure_pos""",
        ),
    ),
)


# --------------------------------------------------------------------------- migration 11
# Issue 20 and issue 15 (item 4): the daily value aggregates bounded, erasable and blind
# to sensitive names. `value_daily` kept an exact set (uniqExact) of every person per
# value and day: 28 GB and 30-50 GiB of job memory projected at 1B presented items over
# 90 days, and no way to take one person out. Its people are now capped sets of person
# keys in levels (turnstream/sinks/people_sets.py; a row per value, day and level):
# exact below 64 people, an estimate above, at most 8 x 64 keys per value and day, and
# an erasure rebuilds them without the erased keys. Types and fields named sensitive
# (the `sensitive_names` table, written from the configuration by
# turnstream/sinks/sensitivity.py) never reach a by-value
# aggregate: `sensitive_daily` counts them by name only.

#: The names (types and type.fields) the views leave out, as an array.
_HIDDEN = "WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden"

#: Each visible item of each `presented` page as (space, person key and its level, day,
#: weight, attr, value): one row per shown field not sensitive (`type.field`, the value spelled as a
#: string or as ClickHouse writes the JSON literal) and one for the object (`type.ref`);
#: objects of a sensitive type give none. Visible: pos - first pos of the page < visible_k.
_EXPOSED_SELECT = f"""{_HIDDEN}
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    PEOPLE AS people, sum(weight_micro) AS exposure_micro
FROM (
    SELECT space_id, person, {level_of("person")} AS level, day, weight_micro,
        arrayJoin(arrayPushFront(
            arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref))) AS pair
    FROM (
        SELECT space_id, {person_key("profile_id")} AS person, toDate(occurred_at) AS day, item,
            JSONExtractString(item, 'ref') AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos,
            toUInt64(round(1 / log2(greatest(pos, 1) + 1) * 1000000)) AS weight_micro
        FROM (
            SELECT space_id, profile_id, occurred_at,
                JSONExtractUInt(payload, 'visible_k') AS visible_k,
                JSONExtractArrayRaw(payload, 'items') AS items,
                arrayMin(arrayMap(i -> JSONExtractUInt(i, 'pos'), items)) AS first_pos
            FROM interactions
            WHERE kind = 'presented'
        )
        ARRAY JOIN items AS item
        WHERE pos >= 1 AND pos - first_pos < visible_k AND NOT has(hidden, type)
    )
)
GROUP BY space_id, attr, value, day, level"""
#: Migration 11's: the people as aggregate states (17 makes them arrays).
_EXPOSED_VALUES = _EXPOSED_SELECT.replace("PEOPLE", people_state("person"))

#: Engagements credit the engaged object (`type.ref`): click, detail, mention, compare,
#: share 1, cart 2; none for an object of a sensitive type.
_ENGAGED_VALUES = f"""{_HIDDEN}
SELECT space_id, concat(splitByChar(':', ref)[1], '.ref') AS attr, ref AS value,
    toDate(occurred_at) AS day, count() AS events,
    sum(if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)) AS signal_micro
FROM interactions
WHERE kind = 'engaged' AND ref != '' AND NOT has(hidden, splitByChar(':', ref)[1])
GROUP BY space_id, attr, value, day"""

#: Which values each object showed, how often (every presented item), sensitive left out.
_REF_VALUES = f"""{_HIDDEN}
SELECT space_id, ref, pair.1 AS attr, pair.2 AS value, day, count() AS presentations
FROM (
    SELECT space_id, toDate(occurred_at) AS day,
        JSONExtractString(item, 'ref') AS ref,
        arrayJoin(arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
            kv -> (concat(splitByChar(':', ref)[1], '.', kv.1),
                if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
            arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))))
            AS pair
    FROM interactions
    ARRAY JOIN JSONExtractArrayRaw(payload, 'items') AS item
    WHERE kind = 'presented' AND NOT has(hidden, splitByChar(':', ref)[1])
)
GROUP BY space_id, ref, attr, value, day"""

#: Sensitive names by count only: each presented item of a sensitive type (its type),
#: each sensitive field an item showed (`type.field`), each engagement on an object of
#: a sensitive type.
_SENSITIVE_PRESENTED = f"""{_HIDDEN}
SELECT space_id, name, day, count() AS presented, toUInt64(0) AS engaged
FROM (
    SELECT space_id, toDate(occurred_at) AS day,
        splitByChar(':', JSONExtractString(item, 'ref'))[1] AS type,
        arrayJoin(if(has(hidden, type), [type], arrayFilter(a -> has(hidden, a), arrayMap(
            kv -> concat(type, '.', kv.1),
            arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown'))))))
            AS name
    FROM (
        SELECT space_id, occurred_at, payload FROM interactions
        WHERE kind = 'presented' AND length(hidden) > 0
    )
    ARRAY JOIN JSONExtractArrayRaw(payload, 'items') AS item
)
GROUP BY space_id, name, day"""
_SENSITIVE_ENGAGED = f"""{_HIDDEN}
SELECT space_id, splitByChar(':', ref)[1] AS name, toDate(occurred_at) AS day,
    toUInt64(0) AS presented, count() AS engaged
FROM interactions
WHERE kind = 'engaged' AND ref != '' AND has(hidden, splitByChar(':', ref)[1])
GROUP BY space_id, name, day"""

_VALUE_DAILY = f""" (
    space_id LowCardinality(String),
    attr String,
    value String,
    day Date,
    level UInt8,
    people PEOPLE_TYPE,
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, day, level)
TTL day + INTERVAL 100 DAY {_DEDUP}"""

# (11, not 10: main's migration 10 adds outcomes.token_status, issue 13.)
MIGRATIONS += (
    Migration(
        11,
        "priors: bounded, erasable daily value aggregates; sensitive names by count only",
        (
            # The old views first, so nothing feeds the old table while it is moved.
            "DROP VIEW IF EXISTS value_daily_presented_mv",
            "DROP VIEW IF EXISTS value_daily_engaged_mv",
            "DROP VIEW IF EXISTS ref_values_daily_mv",
            """CREATE TABLE IF NOT EXISTS sensitive_names (
    name String
) ENGINE = MergeTree ORDER BY name""",
            "CREATE TABLE IF NOT EXISTS value_daily_next"
            + _VALUE_DAILY.replace("PEOPLE_TYPE", state_type()),
            # Rebuilt from what the raw table still holds (45 days) ...
            "TRUNCATE TABLE value_daily_next",
            "INSERT INTO value_daily_next (space_id, attr, value, day, level, people, "
            f"exposure_micro) {_EXPOSED_VALUES}",
            "INSERT INTO value_daily_next (space_id, attr, value, day, events, signal_micro) "
            f"{_ENGAGED_VALUES}",
            # ... and the older days' sums carried over without people: uniqExact keeps
            # no key that can be read back, so those days count no one (a value then
            # needs its floor within the raw days until they age out: fewer priors for
            # 45 days, never one on fewer people).
            """INSERT INTO value_daily_next (space_id, attr, value, day, exposure_micro, events,
    signal_micro)
SELECT space_id, attr, value, day, sum(exposure_micro), sum(events), sum(signal_micro)
FROM value_daily
WHERE (space_id, day) NOT IN (SELECT DISTINCT space_id, toDate(occurred_at) FROM interactions)
GROUP BY space_id, attr, value, day""",
            # Rerunnable after a crash, except between DROP and RENAME (as migration 7).
            "DROP TABLE value_daily",
            "RENAME TABLE value_daily_next TO value_daily",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_exposed_mv TO value_daily AS "
            f"{_EXPOSED_VALUES}",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS "
            f"{_ENGAGED_VALUES}",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS "
            f"{_REF_VALUES}",
            f"""CREATE TABLE IF NOT EXISTS sensitive_daily (
    space_id LowCardinality(String),
    name String,
    day Date,
    presented UInt64,
    engaged UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, name, day)
TTL day + INTERVAL 100 DAY {_DEDUP}""",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_presented_mv "
            f"TO sensitive_daily AS {_SENSITIVE_PRESENTED}",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_engaged_mv "
            f"TO sensitive_daily AS {_SENSITIVE_ENGAGED}",
            # The person keys of erased people, until the priors job has taken them out
            # of the aggregates (turnstream/sinks/erasure.py).
            """CREATE TABLE IF NOT EXISTS erased_people (
    space_id String,
    person UInt64,
    requested_at DateTime64(3, 'UTC')
) ENGINE = MergeTree ORDER BY (space_id, person)""",
        ),
    ),
)


# --------------------------------------------------------------------------- migration 12
# Issue 20, second round: `ref_values_daily` keyed attribute first. Keyed object first,
# a per-attribute priors run (a space past `jobs.priors_split_rows`) read the space's
# whole table to find its attribute: at 60M presented items, 35M rows read 5 times per
# space, most of the job's 58 s of CPU. Keyed (space, attr, ref, value, day), a run
# reads only its attribute's rows, in the order it groups them by. The table holds no
# person, so its rows are copied as they are (no rebuild from the raw days, nothing
# lost); the view is dropped first and made again after, so no insert lands in between
# unseen (the worker runs migrations before it consumes).

_REF_VALUES_DAILY = f""" (
    space_id LowCardinality(String),
    attr String,
    ref String,
    value String,
    day Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, attr, ref, value, day)
TTL day + INTERVAL 100 DAY {_DEDUP}"""

MIGRATIONS += (
    Migration(
        12,
        "priors: ref_values_daily keyed by attribute first",
        (
            "DROP VIEW IF EXISTS ref_values_daily_mv",
            f"CREATE TABLE IF NOT EXISTS ref_values_daily_next{_REF_VALUES_DAILY}",
            "TRUNCATE TABLE ref_values_daily_next",
            "INSERT INTO ref_values_daily_next (space_id, attr, ref, value, day, presentations) "
            "SELECT space_id, attr, ref, value, day, sum(presentations) FROM ref_values_daily "
            "GROUP BY space_id, attr, ref, value, day",
            # Rerunnable after a crash, except between DROP and RENAME (as migration 11).
            "DROP TABLE ref_values_daily",
            "RENAME TABLE ref_values_daily_next TO ref_values_daily",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS "
            f"{_REF_VALUES}",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 13
# Issue 15 (item 5): whose it is. An outcome may say `for` (a dependent's purchase); a
# correction is stated for the bucket of the inference it corrects (migration 6 wrote
# every correction as `self`, so a beneficiary's correction became the buyer's own).
MIGRATIONS += (
    Migration(
        13,
        "outcomes.for; corrections stated for their bucket; the gift bucket disposable",
        (
            """ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS `for` LowCardinality(String)
    DEFAULT 'self' AFTER reason""",
            "DROP VIEW IF EXISTS stated_from_corrections",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_corrections TO stated AS
SELECT idempotency_key AS id, space_id, profile_id,
    if(JSONExtractString(replacement, 'for') != '', JSONExtractString(replacement, 'for'),
        'self') AS `for`,
    JSONExtractString(replacement, 'kind') AS kind,
    JSONExtractString(replacement, 'attr') AS attr, replacement AS payload, session_id,
    idempotency_key AS origin, occurred_at
FROM commands
WHERE command = 'correct' AND replacement != ''""",
            # The gift bucket is disposable (docs/signals.md): its rows go after 7 days, the
            # default of [signals] gift_days, after which the engine drops it from the state.
            # Not materialized now (that rewrites every part at the upgrade): rows already
            # there go at their parts' next merge, new parts as they are written.
            "ALTER TABLE exposure_items MODIFY TTL toDateTime(delivered_at) + INTERVAL 7 DAY "
            "DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0",
            "ALTER TABLE inferences MODIFY TTL toDateTime(updated_at) + INTERVAL 7 DAY "
            "DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0",
            "ALTER TABLE stated MODIFY TTL toDateTime(occurred_at) + INTERVAL 7 DAY "
            "DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 14
# Issue 15 (item 6): webhooks of review requests. The events are written by a
# materialized view in the same insert as the request (a transactional outbox: no event
# lost between two writes); the worker's sender (turnstream/streams/webhooks.py) keeps
# where each event stands with each endpoint and records every attempt. Kept 30 days.
MIGRATIONS += (
    Migration(
        14,
        "webhooks: review-request events, deliveries and attempts",
        (
            """CREATE TABLE IF NOT EXISTS webhook_events (
    event_id String,
    type LowCardinality(String),
    space_id LowCardinality(String),
    review_id String,
    profile_id String,
    status LowCardinality(String),
    receipts Array(String),
    decision String,
    explanation Array(String),
    created_at DateTime64(3, 'UTC'),
    resolved_at Nullable(DateTime64(3, 'UTC')),
    event_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY (space_id, event_id)
TTL toDateTime(event_at) + INTERVAL 30 DAY""",
            """CREATE MATERIALIZED VIEW IF NOT EXISTS webhook_events_mv TO webhook_events AS
SELECT concat('evt_', id, if(status = 'open', '.created', '.resolved')) AS event_id,
    if(status = 'open', 'review_request.created', 'review_request.resolved') AS type,
    space_id, id AS review_id, profile_id, status, receipts, decision, explanation,
    created_at, resolved_at, ifNull(resolved_at, created_at) AS event_at
FROM review_requests""",
            """CREATE TABLE IF NOT EXISTS webhook_deliveries (
    endpoint String,
    event_id String,
    attempts UInt16,
    status LowCardinality(String),
    next_attempt_at DateTime64(3, 'UTC'),
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (endpoint, event_id)
TTL toDateTime(next_attempt_at) + INTERVAL 30 DAY""",
            """CREATE TABLE IF NOT EXISTS webhook_attempts (
    endpoint String,
    event_id String,
    attempt UInt16,
    status LowCardinality(String),
    http_status UInt16,
    error String,
    attempted_at DateTime64(3, 'UTC'),
    duration_ms UInt32
) ENGINE = MergeTree ORDER BY (endpoint, event_id, attempt)
TTL toDateTime(attempted_at) + INTERVAL 30 DAY""",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 15
# Issue 15 (item 3): per-person evidence kept as long as the raw interactions (45 days).
# `exposure_items` (the pages shown, with their positions) gets the raw TTL beside the gift
# rule of migration 13; `signal_state` says when its oldest evidence occurred, which the
# retention check reads and the retention job folds by (rows written before read 1970:
# unknown, so folded once). The TTL is not materialized at the upgrade: the retention job
# deletes older rows.
MIGRATIONS += (
    Migration(
        15,
        "per-person evidence within the raw window: exposure_items TTL, signal_state age",
        (
            "ALTER TABLE exposure_items MODIFY TTL toDateTime(delivered_at) + INTERVAL 45 DAY, "
            "toDateTime(delivered_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' "
            "SETTINGS materialize_ttl_after_modify = 0",
            "ALTER TABLE signal_state ADD COLUMN IF NOT EXISTS evidence_from "
            "Nullable(DateTime64(3, 'UTC')) DEFAULT toDateTime64(0, 3, 'UTC')",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 16
# Issue 13: a turn names the version of the constraints block it cites (`cv_...`, the
# answer of POST /v1/constraints), so an analyst can tell which block a turn's tool calls
# were measured against. Rows written before read '' (none cited).
MIGRATIONS += (
    Migration(
        16,
        "turns.constraints_version: the constraints block a turn cites",
        (
            "ALTER TABLE turns ADD COLUMN IF NOT EXISTS constraints_version String "
            "DEFAULT '' AFTER contract_version",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 17
# Issue 20, third round: `value_daily.people` as plain arrays of person keys that merge
# as groupUniqArrayArray(64) (turnstream/sinks/people_sets.py), no longer aggregate
# states. The same keys and the same capped union per value, day and level; but a state
# is rebuilt into a hash set per row on every read, and the priors job reads each row of
# the window: at 10M presented items, merging a space's 0.92M rows over 90 days took
# 0.68 s of CPU as states and 0.35 s as arrays, with the same result; the job's whole
# people side 3.70 to 2.79 s at 10M, 4.88 to 4.40 s at 30M (bench/priors.py
# --compare-people, both on one store). Existing rows: their keys read out of
# the states (finalizeAggregation: every key, nothing rebuilt from the raw days, nothing
# lost; the rows migration 11 carried over without people stay without). The views are
# dropped first and made again after, as in migration 11: the exposed view writes
# arrays now; the engaged view is the same statement.
MIGRATIONS += (
    Migration(
        17,
        "priors: value_daily's people as plain arrays of keys",
        (
            "DROP VIEW IF EXISTS value_daily_exposed_mv",
            "DROP VIEW IF EXISTS value_daily_engaged_mv",
            "CREATE TABLE IF NOT EXISTS value_daily_next"
            + _VALUE_DAILY.replace("PEOPLE_TYPE", people_type()),
            "TRUNCATE TABLE value_daily_next",
            "INSERT INTO value_daily_next (space_id, attr, value, day, level, people, "
            "exposure_micro, events, signal_micro) "
            "SELECT space_id, attr, value, day, level, finalizeAggregation(people), "
            "exposure_micro, events, signal_micro FROM value_daily",
            # Rerunnable after a crash, except between DROP and RENAME (as migration 11).
            "DROP TABLE value_daily",
            "RENAME TABLE value_daily_next TO value_daily",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_exposed_mv TO value_daily AS "
            + _EXPOSED_SELECT.replace("PEOPLE", people_keys("person")),
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS "
            f"{_ENGAGED_VALUES}",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 18
# Correction rows written before migration 13 say `self` whatever they corrected (the
# view of migration 6 wrote every correction as `self`, and the read side left the
# replacement's `for` out). Restated in the corrected inference's bucket, by migration
# 13's rule for new rows: the replacement's own `for` when it has one, else the bucket
# of the inference it corrects (core/corrections.correction_for), else `self`. `stated`
# is a ReplacingMergeTree read with FINAL, so the restated row, inserted later, wins;
# only rows whose bucket changes are inserted, so running it twice changes nothing.
# (The raw `commands` rows stay as they were sent.)
MIGRATIONS += (
    Migration(
        18,
        "correction rows before migration 13 restated in the corrected inference's bucket",
        (
            """INSERT INTO stated (id, space_id, profile_id, `for`, kind, attr, payload,
    session_id, origin, occurred_at)
SELECT s.id, s.space_id, s.profile_id, c.restated, s.kind, s.attr, s.payload, s.session_id,
    s.origin, s.occurred_at
FROM (SELECT * FROM stated FINAL) AS s
INNER JOIN (
    SELECT c.space_id AS space_id, c.profile_id AS profile_id, c.idempotency_key AS id,
        multiIf(JSONExtractString(c.replacement, 'for') != '',
                JSONExtractString(c.replacement, 'for'),
            i.bucket != '', i.bucket, 'self') AS restated
    FROM commands AS c
    LEFT JOIN (
        SELECT space_id, profile_id, id, `for` AS bucket FROM inferences FINAL
    ) AS i ON i.space_id = c.space_id AND i.profile_id = c.profile_id AND i.id = c.inference_id
    WHERE c.command = 'correct' AND c.replacement != ''
) AS c ON c.space_id = s.space_id AND c.profile_id = s.profile_id AND c.id = s.id
WHERE s.`for` != c.restated""",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 19
# Erase tombstones (sinks/erase_tombstones.py): the subject and the time of their latest
# erase, so that an event of theirs that occurred before the erase but arrives after it is
# dropped, by the ingest and the derivation drivers alike, also after a restart. Micro-
# seconds, as event times are parsed: at milliseconds an event 0.4 ms before an erase
# would read as after it once the tombstone is read back.
MIGRATIONS += (
    Migration(
        19,
        "erase tombstones: who was erased, through when",
        (
            """CREATE TABLE IF NOT EXISTS erase_tombstones (
    space_id LowCardinality(String),
    profile_id String,
    erased_through DateTime64(6, 'UTC'),
    recorded_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(erased_through) ORDER BY (space_id, profile_id)""",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 20
# Issue 20, fourth round: weekly roll-ups of the two daily aggregates the priors job
# reads. Over a 90-day window the job read ~90 daily rows per value and level (people
# side) and per object, field value (shares side), where keys change little from day to
# day: at 30M presented items 5.5M value_daily rows and 24.2M ref_values_daily rows.
# `value_weekly` and `ref_values_weekly` hold the same columns per ISO week (the week's
# Monday): a week's capped key arrays merged (groupUniqArrayArray(64), the same capped
# union as merging its days), its sums summed. The job reads the whole weeks inside its
# window from them and only the days at the window's edges from the daily tables
# (jobs/priors.window_parameters), so the floor stays exact at the first and last day.
# Filled by views on the daily tables (a view chained on a view's target runs at every
# insert into it, whether the raw rows came by INSERT ... VALUES or INSERT ... SELECT),
# so a late event lands in its week as in its day, with nothing to close or catch up;
# the views add no dedup window: a block the daily table drops as a repeat never reaches
# them. Existing stores: the roll-ups are built from the stored daily rows (nothing
# rebuilt from raw, nothing lost, the rows migration 11 carried over without people stay
# without), then the views are made, as in migration 11 (the worker runs migrations
# before it consumes). Kept 107 days: a week's rows until its last day is past the 100
# days a window may reach. Erasure takes keys out of value_weekly as out of value_daily
# (sinks/erasure.PERSON_AGGREGATES); sensitive names are deleted from both roll-ups.

_VALUE_WEEKLY = f""" (
    space_id LowCardinality(String),
    attr String,
    value String,
    week Date,
    level UInt8,
    people {people_type()},
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, week, level)
TTL week + INTERVAL 107 DAY"""
_VALUE_WEEKS = f"""SELECT space_id, attr, value, toMonday(day) AS week, level,
    {merged_people("people")} AS people, sum(exposure_micro) AS exposure_micro,
    sum(events) AS events, sum(signal_micro) AS signal_micro
FROM value_daily
GROUP BY space_id, attr, value, week, level"""
_REF_VALUES_WEEKLY = """ (
    space_id LowCardinality(String),
    attr String,
    ref String,
    value String,
    week Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, attr, ref, value, week)
TTL week + INTERVAL 107 DAY"""
_REF_VALUES_WEEKS = """SELECT space_id, attr, ref, value, toMonday(day) AS week,
    sum(presentations) AS presentations
FROM ref_values_daily
GROUP BY space_id, attr, ref, value, week"""

MIGRATIONS += (
    Migration(
        20,
        "priors: weekly roll-ups of value_daily and ref_values_daily",
        (
            "DROP VIEW IF EXISTS value_weekly_mv",
            "DROP VIEW IF EXISTS ref_values_weekly_mv",
            f"CREATE TABLE IF NOT EXISTS value_weekly{_VALUE_WEEKLY}",
            f"CREATE TABLE IF NOT EXISTS ref_values_weekly{_REF_VALUES_WEEKLY}",
            # Rerunnable after a crash: emptied, then built whole from the daily rows.
            "TRUNCATE TABLE value_weekly",
            "TRUNCATE TABLE ref_values_weekly",
            "INSERT INTO value_weekly (space_id, attr, value, week, level, people, "
            f"exposure_micro, events, signal_micro) {_VALUE_WEEKS}",
            "INSERT INTO ref_values_weekly (space_id, attr, ref, value, week, presentations) "
            f"{_REF_VALUES_WEEKS}",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_weekly_mv TO value_weekly AS "
            f"{_VALUE_WEEKS}",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_weekly_mv TO ref_values_weekly "
            f"AS {_REF_VALUES_WEEKS}",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 21
# Issue 20, fifth round: the daily aggregates partitioned by ISO week (toMonday(day)),
# so that the priors job reads the days at its window's edges from two partitions. Both
# tables are keyed value first (so a run reads its attribute's rows); unpartitioned, the
# edge days filtered every daily row of the space, and reading the weeks cost 1.3 to 1.5
# times the CPU of reading every day at 10M and 30M presented items (migration 20,
# docs/performance.md, fourth round). Partitioned, a query's day condition selects only
# the partitions (parts) whose days it can hold (ClickHouse's min-max index of the
# partition key's column), checked by tests/integration/jobs/test_priors_partitions.py.
# The rows are copied as they are (nothing rebuilt from raw, nothing lost: no person
# leaves or enters a row; the rows migration 11 carried over without people stay
# without); every view that writes or reads the two tables is dropped first and made
# again after, the same statements, so no insert lands in between unseen (the worker
# runs migrations before it consumes). The roll-ups are not rebuilt: they already hold
# these rows' weeks. At most ~15 partitions per table (the TTL keeps 100 days); an
# ingest block spanning more weeks than `max_partitions_per_insert_block` would be
# refused, so the store's inserts lift that limit (sinks/store.Store.insert).

_BY_WEEK = "PARTITION BY toMonday(day) ORDER BY"
_COPY = "SETTINGS max_partitions_per_insert_block = 0"

MIGRATIONS += (
    Migration(
        21,
        "priors: value_daily and ref_values_daily partitioned by ISO week",
        (
            "DROP VIEW IF EXISTS value_weekly_mv",
            "DROP VIEW IF EXISTS ref_values_weekly_mv",
            "DROP VIEW IF EXISTS value_daily_exposed_mv",
            "DROP VIEW IF EXISTS value_daily_engaged_mv",
            "DROP VIEW IF EXISTS ref_values_daily_mv",
            "CREATE TABLE IF NOT EXISTS value_daily_next"
            + _VALUE_DAILY.replace("PEOPLE_TYPE", people_type()).replace("ORDER BY", _BY_WEEK),
            "TRUNCATE TABLE value_daily_next",
            "INSERT INTO value_daily_next (space_id, attr, value, day, level, people, "
            "exposure_micro, events, signal_micro) SELECT space_id, attr, value, day, level, "
            f"people, exposure_micro, events, signal_micro FROM value_daily {_COPY}",
            # Rerunnable after a crash, except between DROP and RENAME (as migration 11).
            "DROP TABLE value_daily",
            "RENAME TABLE value_daily_next TO value_daily",
            "CREATE TABLE IF NOT EXISTS ref_values_daily_next"
            + _REF_VALUES_DAILY.replace("ORDER BY", _BY_WEEK),
            "TRUNCATE TABLE ref_values_daily_next",
            "INSERT INTO ref_values_daily_next (space_id, attr, ref, value, day, presentations) "
            f"SELECT space_id, attr, ref, value, day, presentations FROM ref_values_daily {_COPY}",
            "DROP TABLE ref_values_daily",
            "RENAME TABLE ref_values_daily_next TO ref_values_daily",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_exposed_mv TO value_daily AS "
            + _EXPOSED_SELECT.replace("PEOPLE", people_keys("person")),
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS "
            f"{_ENGAGED_VALUES}",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS "
            f"{_REF_VALUES}",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_weekly_mv TO value_weekly AS "
            f"{_VALUE_WEEKS}",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_weekly_mv TO ref_values_weekly "
            f"AS {_REF_VALUES_WEEKS}",
        ),
    ),
)

# ------------------------------------------------------------------------ migration 22
# A crash between a raw table's part and its views' parts (ClickHouse commits them one
# after the other) left the raw table holding an insert its summaries lacked, and the
# sink's high-water mark, read from the raw table, skipped it for ever (twice in about
# eight `make chaos` runs). Every raw row now carries the id of the insert that wrote it,
# and `sink_marks` what the sink confirmed: per table and source partition, the highest
# offset whose insert returned, its views' parts included. After a start the sink pushes
# what lies above the confirmed marks through the views again with its own token
# (sinks/writer.py). Seeded with what the tables hold now: the rows already there carry
# no id (0) and cannot be pushed again. Rerunnable: a max of the same marks is the same.
#: The raw tables migration 22 knew (a later raw table is made with its `_insert`).
_RAW_TABLES_22 = tuple(t for t in RAW_TABLES if t != "stated_sensitive")
MIGRATIONS += (
    Migration(
        22,
        "sink marks: each raw row's insert id, and the offsets confirmed in the views",
        (
            *(
                f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0"
                for table in _RAW_TABLES_22
            ),
            """CREATE TABLE IF NOT EXISTS sink_marks (
    table LowCardinality(String),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset SimpleAggregateFunction(max, UInt64)
) ENGINE = AggregatingMergeTree ORDER BY (table, _topic, _partition)""",
            *(
                f"INSERT INTO sink_marks (table, _topic, _partition, _offset) "
                f"SELECT '{table}', _topic, _partition, max(_offset) FROM {table} "
                "GROUP BY _topic, _partition"
                for table in _RAW_TABLES_22
            ),
        ),
    ),
)

# ------------------------------------------------------------------------ migration 23
# Issue 14, round six: value_daily written by one view, not two. The exposed view
# (presented pages) and the engaged view (engagements) each wrote a part into
# value_daily at every interactions insert, and each such part fired value_weekly_mv, so
# a batch made four parts where two hold the same rows: a part costs the store ~6-9 ms
# of CPU whatever its size (docs/performance.md, round six). One scan of the batch now
# gives both: an engagement passes through the same LEFT ARRAY JOIN as a page (its
# payload has no items, so one row, item ''), then per row one entry per shown value
# (a page's visible item) or its object (an engagement); a page's people and weight, an
# engagement's count and signal, each summed only from its own kind. The same rows once
# merged (the engine merges value_daily by its key anyway: people as the capped union of
# keys, the rest summed): a page's row and an engagement's for the same value, day and
# level 0 now come as one row (tests/integration/sinks/test_value_daily_view.py compares
# the two on a mixed batch). The old views are dropped and the new one made in one
# migration, so no insert lands in between unseen (the worker runs migrations before it
# consumes); nothing stored changes.

_VALUES_DAILY = f"""{_HIDDEN}
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    groupUniqArrayIf({CAP})(person, exposed) AS people,
    sumIf(weight_micro, exposed) AS exposure_micro,
    countIf(NOT exposed) AS events,
    sumIf(signal_micro, NOT exposed) AS signal_micro
FROM (
    SELECT space_id, person, if(exposed, {level_of("person")}, 0) AS level, day, exposed,
        weight_micro, signal_micro,
        arrayJoin(if(exposed, arrayPushFront(
            arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref)), [(concat(type, '.ref'), ref)])) AS pair
    FROM (
        SELECT space_id, person, day, exposed, signal_micro, item,
            if(exposed, JSONExtractString(item, 'ref'), engaged_ref) AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos,
            toUInt64(round(1 / log2(greatest(pos, 1) + 1) * 1000000)) AS weight_micro
        FROM (
            SELECT space_id, {person_key("profile_id")} AS person, toDate(occurred_at) AS day,
                kind = 'presented' AS exposed, ref AS engaged_ref,
                if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)
                    AS signal_micro,
                JSONExtractUInt(payload, 'visible_k') AS visible_k,
                if(exposed, JSONExtractArrayRaw(payload, 'items'), []) AS items,
                arrayMin(arrayMap(i -> JSONExtractUInt(i, 'pos'), items)) AS first_pos
            FROM interactions
            WHERE kind = 'presented' OR (kind = 'engaged' AND ref != '')
        )
        LEFT ARRAY JOIN items AS item
        WHERE NOT has(hidden, type)
            AND (NOT exposed OR (pos >= 1 AND pos - first_pos < visible_k))
    )
)
GROUP BY space_id, attr, value, day, level"""

MIGRATIONS += (
    Migration(
        23,
        "priors: value_daily written by one view (presented pages and engagements)",
        (
            "DROP VIEW IF EXISTS value_daily_exposed_mv",
            "DROP VIEW IF EXISTS value_daily_engaged_mv",
            f"CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_mv TO value_daily AS "
            f"{_VALUES_DAILY}",
        ),
    ),
)


# ------------------------------------------------------------------------ migration 24
# Issue 14, round seven: a presented page's items and shown values parsed once, not three
# times, and by fewer views. value_daily_mv, ref_values_daily_mv and the two
# sensitive_daily views each took the pages of an interactions insert apart
# (JSONExtractArrayRaw of the items, JSONExtractKeysAndValuesRaw of each item's `shown`)
# or scanned it, and a view costs the store ~5-10 ms of CPU per insert even when it
# writes nothing (bench/view_costs.py; docs/performance.md, round seven). One view,
# `interaction_values_mv`, now does it once per insert into `interaction_values`, a Null
# table (nothing stored, no part: its rows only pass to the views on it): per presented
# item of a type not sensitive, one row per shown field not null and one for the object
# (`type.ref`), with whether the item is visible on its page and its weight; per item of
# a sensitive type, one row naming the type; per engagement, one row for its object (or
# its sensitive type), with its signal. A sensitive field's row carries its name, never
# its value. value_daily_mv, ref_values_daily_mv and one sensitive_daily_mv (for the
# two) read those rows and write what the old views wrote
# (tests/integration/sinks/test_values_stage.py compares every aggregate, the weekly
# roll-ups included, with migration 23's views on the same batches). The weekly views
# read the daily tables as before. The old views are dropped and the new ones made in
# one migration, the stage's view last, so no insert lands in between unseen (the worker
# runs migrations before it consumes); no stored row changes. An insert's token reaches
# the tables behind the Null one as a chained view's: value_daily, ref_values_daily and
# sensitive_daily drop a repeated block by their own deduplication window.

_INTERACTION_VALUES = """ (
    space_id LowCardinality(String),
    person UInt64,
    day Date,
    exposed Bool,
    visible Bool,
    ref String,
    attr String,
    value String,
    field Bool,
    sensitive Bool,
    weight_micro UInt64,
    signal_micro Int64
) ENGINE = Null"""

#: Per presented item of a type not sensitive: one row per shown field not null (a
#: sensitive one with no value) and one for the object; per item of a sensitive type,
#: one row naming the type; per engagement, one row for its object (or its sensitive
#: type). Rows of items outside the visible window only where ref_values_daily or
#: sensitive_daily count them (fields, sensitive names).
_SPLIT_VALUES = f"""{_HIDDEN}
SELECT space_id, person, day, exposed, visible, ref, pair.1 AS attr, pair.2 AS value,
    pair.3 AS field, pair.4 AS sensitive, weight_micro, signal_micro
FROM (
    SELECT space_id, person, day, exposed, signal_micro, ref,
        exposed AND pos >= 1 AND pos - first_pos < visible_k AS visible,
        toUInt64(round(1 / log2(greatest(pos, 1) + 1) * 1000000)) AS weight_micro,
        arrayJoin(if(has(hidden, type), [(type, '', false, true)], arrayPushFront(
            arrayMap(
                kv -> (kv.1, if(has(hidden, kv.1), '', kv.2), true, has(hidden, kv.1)),
                arrayMap(
                    kv -> (concat(type, '.', kv.1),
                        if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                    arrayFilter(kv -> kv.2 != 'null',
                        JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref, false, false)))) AS pair
    FROM (
        SELECT space_id, person, day, exposed, signal_micro, visible_k, first_pos, item,
            if(exposed, JSONExtractString(item, 'ref'), engaged_ref) AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos
        FROM (
            SELECT space_id, {person_key("profile_id")} AS person, toDate(occurred_at) AS day,
                kind = 'presented' AS exposed, ref AS engaged_ref,
                if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)
                    AS signal_micro,
                JSONExtractUInt(payload, 'visible_k') AS visible_k,
                if(exposed, JSONExtractArrayRaw(payload, 'items'), []) AS items,
                arrayMin(arrayMap(i -> JSONExtractUInt(i, 'pos'), items)) AS first_pos
            FROM interactions
            WHERE kind = 'presented' OR (kind = 'engaged' AND ref != '')
        )
        LEFT ARRAY JOIN items AS item
    )
)
WHERE field OR sensitive OR visible OR NOT exposed"""

_VALUES_FROM_STAGE = f"""SELECT space_id, attr, value, day,
    if(exposed, {level_of("person")}, 0) AS level,
    groupUniqArrayIf({CAP})(person, exposed) AS people,
    sumIf(weight_micro, exposed) AS exposure_micro,
    countIf(NOT exposed) AS events,
    sumIf(signal_micro, NOT exposed) AS signal_micro
FROM interaction_values
WHERE NOT sensitive AND (visible OR NOT exposed)
GROUP BY space_id, attr, value, day, level"""

_REF_VALUES_FROM_STAGE = """SELECT space_id, ref, attr, value, day, count() AS presentations
FROM interaction_values
WHERE exposed AND field AND NOT sensitive
GROUP BY space_id, ref, attr, value, day"""

_SENSITIVE_FROM_STAGE = """SELECT space_id, attr AS name, day,
    countIf(exposed) AS presented, countIf(NOT exposed) AS engaged
FROM interaction_values
WHERE sensitive
GROUP BY space_id, name, day"""

MIGRATIONS += (
    Migration(
        24,
        "priors: a page's items and shown values parsed once for value_daily and ref_values_daily",
        (
            "DROP VIEW IF EXISTS value_daily_mv",
            "DROP VIEW IF EXISTS ref_values_daily_mv",
            "DROP VIEW IF EXISTS sensitive_daily_presented_mv",
            "DROP VIEW IF EXISTS sensitive_daily_engaged_mv",
            f"CREATE TABLE IF NOT EXISTS interaction_values{_INTERACTION_VALUES}",
            "CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_mv TO value_daily AS "
            + _VALUES_FROM_STAGE,
            "CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS "
            + _REF_VALUES_FROM_STAGE,
            "CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_mv TO sensitive_daily AS "
            + _SENSITIVE_FROM_STAGE,
            "CREATE MATERIALIZED VIEW IF NOT EXISTS interaction_values_mv TO interaction_values "
            f"AS {_SPLIT_VALUES}",
        ),
    ),
)


# ------------------------------------------------------------------------ migration 25
# Issue 39 (item 5): `context_use_constraints.violation_rate` divides by every checked
# result, those of calls that sent no constraint included (acme's search_products: 2/801,
# while 590 of its 665 calls sent none; over the calls that sent some it is 6x higher).
# Two figures named apart, read from the raw measurements (a plain view: no summary).
MIGRATIONS += (
    Migration(
        25,
        "constraint rates: over calls that sent constraints, and the share that did",
        (
            """CREATE VIEW IF NOT EXISTS context_use_constraint_rates AS
SELECT space_id, source, agent, tool, day, calls, calls_with_constraints,
    round(calls_with_constraints / calls, 4) AS share_of_calls_with_constraints,
    violations, verifiable_in_calls_with_constraints,
    if(verifiable_in_calls_with_constraints > 0,
        round(violations / verifiable_in_calls_with_constraints, 4), NULL)
        AS violation_rate_in_calls_with_constraints
FROM (
    SELECT space_id, source, agent, tool, toDate(occurred_at, 'UTC') AS day,
        count() AS calls, countIf(sent > 0) AS calls_with_constraints,
        sumIf(violations, sent > 0) AS violations,
        sumIf(toInt64(results_checked) - toInt64(unverifiable), sent > 0)
            AS verifiable_in_calls_with_constraints
    FROM turn_constraints
    GROUP BY space_id, source, agent, tool, day
)""",
        ),
    ),
)


def apply_migrations(store: Store, until: int | None = None) -> list[int]:
    """Apply every migration not yet recorded (up to version ``until``, for tests of a
    migration); returns the versions applied now."""
    store.command(
        """CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY version"""
    )
    done = {row[0] for row in store.query("SELECT version FROM schema_migrations").rows}
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.version in done or (until is not None and migration.version > until):
            continue
        for statement in migration.statements:
            store.command(statement)
        store.insert(
            "schema_migrations",
            [(migration.version, migration.name, datetime.now(UTC))],
            ["version", "name", "applied_at"],
        )
        log.info("applied migration %d (%s)", migration.version, migration.name)
        applied.append(migration.version)
    return applied


# ------------------------------------------------------------------------ migration 26
# Issue 37 (item 6): the language a turn's output was read in, on the turn and on each of
# its claims (additive: '' for the rows written before).
MIGRATIONS += (
    Migration(
        26,
        "turns and turn_claims: language",
        (
            "ALTER TABLE turns ADD COLUMN IF NOT EXISTS language LowCardinality(String) DEFAULT ''",
            "ALTER TABLE turn_claims ADD COLUMN IF NOT EXISTS language LowCardinality(String) "
            "DEFAULT ''",
        ),
    ),
)


# ------------------------------------------------------------------------ migration 27
# Issue 35: summaries a repeat cannot change. After a crash the sink no longer pushes an
# unconfirmed insert through the views again (that rested on each target's deduplication
# log, which a SIGKILL can lose: a summary counted the insert twice); it replaces what the
# insert can have touched, per summary and (space, day), with its recomputation from the
# raw rows (turnstream/sinks/summaries.py). `summary_repairs` holds a repair's (space,
# day) pairs and insert ids as data, so none goes into SQL text; a day is enough to
# forget what a crash left.
MIGRATIONS += (
    Migration(
        27,
        "summary repairs: the (space, day) pairs and inserts a repair recomputes",
        (
            """CREATE TABLE IF NOT EXISTS summary_repairs (
    repair String,
    source LowCardinality(String),
    space_id String,
    day Date,
    insert UInt64,
    at DateTime('UTC') DEFAULT now()
) ENGINE = MergeTree ORDER BY (repair, space_id, day)
TTL at + INTERVAL 1 DAY""",
        ),
    ),
)

#: The SQL of the views that fill the summaries, for their recomputation
#: (turnstream/sinks/summaries.py).
SPLIT_VALUES = _SPLIT_VALUES
VALUES_FROM_STAGE = _VALUES_FROM_STAGE
REF_VALUES_FROM_STAGE = _REF_VALUES_FROM_STAGE
SENSITIVE_FROM_STAGE = _SENSITIVE_FROM_STAGE
VALUE_WEEKS = _VALUE_WEEKS
REF_VALUES_WEEKS = _REF_VALUES_WEEKS


# ------------------------------------------------------------------------ migration 28
MIGRATIONS += (
    Migration(
        28,
        "<table>_current views: each table that needs FINAL, read FINAL (sinks/current_views.py)",
        current_view_statements(),
    ),
)


# ------------------------------------------------------------------------ migration 29
# Issue 36 (point 3): the words of a value stated on a sensitive field (a diet "celíaco
# (doença celíaca)") are kept apart. The ingest sink writes them here (sinks/rows.py)
# and the interaction's payload (so `stated` too) keeps only the field, `withheld`. No
# analyst reads this table (not in the catalog, refused by the SQL gate, no grant); an
# erasure reaches it (it has a profile id); the read side serves what the words mean.
MIGRATIONS += (
    Migration(
        29,
        "stated_sensitive: the words of sensitive stated values, apart",
        (
            f"""CREATE TABLE IF NOT EXISTS stated_sensitive (
    id String,
    space_id LowCardinality(String),
    profile_id String,
    `for` LowCardinality(String),
    attr String,
    value String,
    occurred_at DateTime64(3, 'UTC'),{_SOURCE},
    _insert UInt64 DEFAULT 0
) ENGINE = MergeTree ORDER BY (space_id, profile_id, id)
TTL toDateTime(occurred_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' {_DEDUP}""",
        ),
    ),
)
