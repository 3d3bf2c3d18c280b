-- name: priors: bounded, erasable daily value aggregates; sensitive names by count only
-- Issue 20 and issue 15 (item 4): the daily value aggregates bounded, erasable and blind
-- to sensitive names. `value_daily` kept an exact set (uniqExact) of every person per
-- value and day: 28 GB and 30-50 GiB of job memory projected at 1B presented items over
-- 90 days, and no way to take one person out. Its people are now capped sets of person
-- keys in levels (turnstream/sinks/people_sets.py; a row per value, day and level):
-- exact below 64 people, an estimate above, at most 8 x 64 keys per value and day, and
-- an erasure rebuilds them without the erased keys. Types and fields named sensitive
-- (the `sensitive_names` table, written from the configuration by
-- turnstream/sinks/sensitivity.py) never reach a by-value
-- aggregate: `sensitive_daily` counts them by name only.
-- (11, not 10: main's migration 10 adds outcomes.token_status, issue 13.)

-- The old views first, so nothing feeds the old table while it is moved.
DROP VIEW IF EXISTS value_daily_presented_mv;

DROP VIEW IF EXISTS value_daily_engaged_mv;

DROP VIEW IF EXISTS ref_values_daily_mv;

CREATE TABLE IF NOT EXISTS sensitive_names (
    name String
) ENGINE = MergeTree ORDER BY name;

CREATE TABLE IF NOT EXISTS value_daily_next (
    space_id LowCardinality(String),
    attr String,
    value String,
    day Date,
    level UInt8,
    people AggregateFunction(groupUniqArray(64), UInt64),
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, day, level)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

-- Rebuilt from what the raw table still holds (45 days) ...
TRUNCATE TABLE value_daily_next;

INSERT INTO value_daily_next (space_id, attr, value, day, level, people, exposure_micro) WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    groupUniqArrayState(64)(person) AS people, sum(weight_micro) AS exposure_micro
FROM (
    SELECT space_id, person, toUInt8(multiIf(person >= 4611686018427387904, 0, person >= 1152921504606846976, 1, person >= 288230376151711744, 2, person >= 72057594037927936, 3, person >= 18014398509481984, 4, person >= 4503599627370496, 5, person >= 1125899906842624, 6, 7)) AS level, day, weight_micro,
        arrayJoin(arrayPushFront(
            arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref))) AS pair
    FROM (
        SELECT space_id, sipHash64(profile_id) AS person, toDate(occurred_at) AS day, item,
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
GROUP BY space_id, attr, value, day, level;

INSERT INTO value_daily_next (space_id, attr, value, day, events, signal_micro) WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, concat(splitByChar(':', ref)[1], '.ref') AS attr, ref AS value,
    toDate(occurred_at) AS day, count() AS events,
    sum(if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)) AS signal_micro
FROM interactions
WHERE kind = 'engaged' AND ref != '' AND NOT has(hidden, splitByChar(':', ref)[1])
GROUP BY space_id, attr, value, day;

-- ... and the older days' sums carried over without people: uniqExact keeps
-- no key that can be read back, so those days count no one (a value then
-- needs its floor within the raw days until they age out: fewer priors for
-- 45 days, never one on fewer people).
INSERT INTO value_daily_next (space_id, attr, value, day, exposure_micro, events,
    signal_micro)
SELECT space_id, attr, value, day, sum(exposure_micro), sum(events), sum(signal_micro)
FROM value_daily
WHERE (space_id, day) NOT IN (SELECT DISTINCT space_id, toDate(occurred_at) FROM interactions)
GROUP BY space_id, attr, value, day;

-- Rerunnable after a crash, except between DROP and RENAME (as migration 7).
DROP TABLE value_daily;

RENAME TABLE value_daily_next TO value_daily;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_exposed_mv TO value_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    groupUniqArrayState(64)(person) AS people, sum(weight_micro) AS exposure_micro
FROM (
    SELECT space_id, person, toUInt8(multiIf(person >= 4611686018427387904, 0, person >= 1152921504606846976, 1, person >= 288230376151711744, 2, person >= 72057594037927936, 3, person >= 18014398509481984, 4, person >= 4503599627370496, 5, person >= 1125899906842624, 6, 7)) AS level, day, weight_micro,
        arrayJoin(arrayPushFront(
            arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref))) AS pair
    FROM (
        SELECT space_id, sipHash64(profile_id) AS person, toDate(occurred_at) AS day, item,
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
GROUP BY space_id, attr, value, day, level;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_engaged_mv TO value_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, concat(splitByChar(':', ref)[1], '.ref') AS attr, ref AS value,
    toDate(occurred_at) AS day, count() AS events,
    sum(if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)) AS signal_micro
FROM interactions
WHERE kind = 'engaged' AND ref != '' AND NOT has(hidden, splitByChar(':', ref)[1])
GROUP BY space_id, attr, value, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
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
GROUP BY space_id, ref, attr, value, day;

CREATE TABLE IF NOT EXISTS sensitive_daily (
    space_id LowCardinality(String),
    name String,
    day Date,
    presented UInt64,
    engaged UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, name, day)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_presented_mv TO sensitive_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
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
GROUP BY space_id, name, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_engaged_mv TO sensitive_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, splitByChar(':', ref)[1] AS name, toDate(occurred_at) AS day,
    toUInt64(0) AS presented, count() AS engaged
FROM interactions
WHERE kind = 'engaged' AND ref != '' AND has(hidden, splitByChar(':', ref)[1])
GROUP BY space_id, name, day;

-- The person keys of erased people, until the priors job has taken them out
-- of the aggregates (turnstream/sinks/erasure.py).
CREATE TABLE IF NOT EXISTS erased_people (
    space_id String,
    person UInt64,
    requested_at DateTime64(3, 'UTC')
) ENGINE = MergeTree ORDER BY (space_id, person);
