-- name: webhooks: review-request events, deliveries and attempts
-- Issue 15 (item 6): webhooks of review requests. The events are written by a
-- materialized view in the same insert as the request (a transactional outbox: no event
-- lost between two writes); the worker's sender (turnstream/streams/webhooks.py) keeps
-- where each event stands with each endpoint and records every attempt. Kept 30 days.

CREATE TABLE IF NOT EXISTS webhook_events (
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
TTL toDateTime(event_at) + INTERVAL 30 DAY;

CREATE MATERIALIZED VIEW IF NOT EXISTS webhook_events_mv TO webhook_events AS
SELECT concat('evt_', id, if(status = 'open', '.created', '.resolved')) AS event_id,
    if(status = 'open', 'review_request.created', 'review_request.resolved') AS type,
    space_id, id AS review_id, profile_id, status, receipts, decision, explanation,
    created_at, resolved_at, ifNull(resolved_at, created_at) AS event_at
FROM review_requests;

CREATE TABLE IF NOT EXISTS webhook_deliveries (
    endpoint String,
    event_id String,
    attempts UInt16,
    status LowCardinality(String),
    next_attempt_at DateTime64(3, 'UTC'),
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (endpoint, event_id)
TTL toDateTime(next_attempt_at) + INTERVAL 30 DAY;

CREATE TABLE IF NOT EXISTS webhook_attempts (
    endpoint String,
    event_id String,
    attempt UInt16,
    status LowCardinality(String),
    http_status UInt16,
    error String,
    attempted_at DateTime64(3, 'UTC'),
    duration_ms UInt32
) ENGINE = MergeTree ORDER BY (endpoint, event_id, attempt)
TTL toDateTime(attempted_at) + INTERVAL 30 DAY;
