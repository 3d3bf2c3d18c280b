-- name: signals: exposures, inferences and derivation state

CREATE TABLE IF NOT EXISTS exposure_items (
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
ORDER BY (space_id, profile_id, `for`, exposure_id, pos);

CREATE VIEW IF NOT EXISTS effective_exposure AS
SELECT space_id, profile_id, `for`, ref,
    round(sum(weight), 6) AS effective_exposure, count() AS exposures
FROM exposure_items FINAL
GROUP BY space_id, profile_id, `for`, ref;

CREATE VIEW IF NOT EXISTS already_presented AS
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
GROUP BY space_id, profile_id, `for`, ref;

CREATE TABLE IF NOT EXISTS inferences (
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
ORDER BY (space_id, profile_id, id);

CREATE TABLE IF NOT EXISTS signal_state (
    profile_id String,
    space_id LowCardinality(String),
    state String,
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY profile_id;
