-- name: read side: stated constraints and review requests

CREATE TABLE IF NOT EXISTS stated (
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
) ENGINE = ReplacingMergeTree ORDER BY (space_id, profile_id, id);

CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_interactions TO stated AS
SELECT concat(idempotency_key, '#', toString(item_index)) AS id, space_id, profile_id,
    `for`, kind, attr, payload, session_id,
    if(turn_id != '', turn_id, idempotency_key) AS origin, occurred_at
FROM interactions
WHERE kind IN ('preference', 'attribute');

CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_corrections TO stated AS
SELECT idempotency_key AS id, space_id, profile_id, 'self' AS `for`,
    JSONExtractString(replacement, 'kind') AS kind,
    JSONExtractString(replacement, 'attr') AS attr, replacement AS payload, session_id,
    idempotency_key AS origin, occurred_at
FROM commands
WHERE command = 'correct' AND replacement != '';

CREATE TABLE IF NOT EXISTS review_requests (
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
) ENGINE = ReplacingMergeTree(version) ORDER BY (space_id, profile_id, id);
