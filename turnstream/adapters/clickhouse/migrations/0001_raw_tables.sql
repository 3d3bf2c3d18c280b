-- name: raw tables

CREATE TABLE IF NOT EXISTS turns (
    space_id LowCardinality(String),
    profile_id String,
    source LowCardinality(String),
    conversation_id String,
    session_id String,
    idempotency_key String,
    occurred_at DateTime64(3, 'UTC'),
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
    constraints UInt32,
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, source, agent, occurred_at, turn_id) SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS interactions (
    space_id LowCardinality(String),
    profile_id String,
    source LowCardinality(String),
    conversation_id String,
    session_id String,
    idempotency_key String,
    occurred_at DateTime64(3, 'UTC'),
    `for` LowCardinality(String),
    turn_id String,
    item_index UInt16,
    kind LowCardinality(String),
    exposure_id String,
    list_id String,
    ref String,
    attr String,
    payload String,
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at)
TTL toDateTime(occurred_at) + INTERVAL 45 DAY SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS turn_claims (
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
    occurred_at DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, source, agent, occurred_at, turn_id) SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS turn_constraints (
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
    occurred_at DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, source, agent, tool, occurred_at) SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS outcomes (
    space_id LowCardinality(String),
    profile_id String,
    source LowCardinality(String),
    conversation_id String,
    session_id String,
    idempotency_key String,
    occurred_at DateTime64(3, 'UTC'),
    outcome LowCardinality(String),
    ref String,
    order_id String,
    exposure_token String,
    exposure_id String,
    exposure_pos UInt32,
    attrs Map(String, String),
    reason String,
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at) SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS commands (
    space_id LowCardinality(String),
    profile_id String,
    source LowCardinality(String),
    conversation_id String,
    session_id String,
    idempotency_key String,
    occurred_at DateTime64(3, 'UTC'),
    command LowCardinality(String),
    inference_id String,
    replacement String,
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (space_id, profile_id, occurred_at) SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS idempotency_keys (
    dedup_key String,
    space_id LowCardinality(String),
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY dedup_key
TTL toDateTime(ingested_at) + INTERVAL 30 DAY SETTINGS non_replicated_deduplication_window = 1000;

CREATE TABLE IF NOT EXISTS dead_letters (
    reason LowCardinality(String),
    field_path String,
    message String,
    item_type LowCardinality(String),
    space_id String,
    source String,
    idempotency_key String,
    raw_sha256 String,
    raw_bytes UInt32,
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64
) ENGINE = MergeTree ORDER BY (reason, ingested_at) SETTINGS non_replicated_deduplication_window = 1000;
