-- name: priors: daily value aggregates, the interactions ledger, versioned priors
-- Priors: daily aggregates that outlive the 45-day raw TTL (kept 100 days, enough for
-- the 90-day window), fed at insert time by materialized views on `interactions`, and
-- the versioned table the nightly job writes. Design: turnstream/jobs/priors.py.

-- Per space, attribute value and day. `people`: exact set of the people exposed
-- (uniqExact keeps a 128-bit hash per person, so merging days is exact at the
-- 10-person floor). Weights and signals in millionths: integer sums do not
-- depend on merge order, so a recompute gives the same figures.
CREATE TABLE IF NOT EXISTS value_daily (
    space_id LowCardinality(String),
    attr String,
    value String,
    day Date,
    people AggregateFunction(uniqExact, String),
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, day)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

-- Exposed items of each `presented` page: one row per shown field
-- (`type.field`, the value spelled as a string or as ClickHouse writes the JSON
-- literal) and one for the object itself (`type.ref`). Exposed here means
-- visible on its page (pos - first pos of the page < visible_k): a `seen` event
-- cannot reach back to the page's items in a view, so items exposed only by
-- scrolling are not counted (an under-count of exposure, documented).
CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_presented_mv TO value_daily AS
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
GROUP BY space_id, attr, value, day;

-- Engagements credit the engaged object (`type.ref`): click, detail, mention,
-- compare, share 1, cart 2. `people` and exposure stay empty on these rows.
CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS
SELECT space_id, concat(splitByChar(':', ref)[1], '.ref') AS attr, ref AS value,
    toDate(occurred_at) AS day, count() AS events,
    sum(if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)) AS signal_micro
FROM interactions
WHERE kind = 'engaged' AND ref != ''
GROUP BY space_id, attr, value, day;

-- Which values each object showed, and how often (every presented item, exposed
-- or not): the job splits an object's engagements over the values it showed.
CREATE TABLE IF NOT EXISTS ref_values_daily (
    space_id LowCardinality(String),
    ref String,
    attr String,
    value String,
    day Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, ref, attr, value, day)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS
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
GROUP BY space_id, ref, attr, value, day;

-- What the raw table held, per space, day and kind, for a year: the retention
-- check compares it with value_daily after the raw rows are gone.
CREATE TABLE IF NOT EXISTS interactions_daily (
    space_id LowCardinality(String),
    day Date,
    kind LowCardinality(String),
    rows UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, day, kind)
TTL day + INTERVAL 400 DAY SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS interactions_daily_mv TO interactions_daily AS
SELECT space_id, toDate(occurred_at) AS day, kind, count() AS rows
FROM interactions
GROUP BY space_id, day, kind;

-- One row per space, value and version (as-of date as yyyymmdd); rewriting a
-- version replaces it whole (see turnstream/jobs/priors.py).
CREATE TABLE IF NOT EXISTS priors (
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
TTL window_end + INTERVAL 400 DAY;

CREATE VIEW IF NOT EXISTS priors_latest AS
SELECT space_id, attr, value, people, events, exposure, signal, prior,
    window_start, window_end, version
FROM priors FINAL
WHERE (space_id, version) IN (SELECT space_id, max(version) FROM priors GROUP BY space_id);
