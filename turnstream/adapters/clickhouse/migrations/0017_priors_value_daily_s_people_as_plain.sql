-- name: priors: value_daily's people as plain arrays of keys
-- Issue 20, third round: `value_daily.people` as plain arrays of person keys that merge
-- as groupUniqArrayArray(64) (turnstream/sinks/people_sets.py), no longer aggregate
-- states. The same keys and the same capped union per value, day and level; but a state
-- is rebuilt into a hash set per row on every read, and the priors job reads each row of
-- the window: at 10M presented items, merging a space's 0.92M rows over 90 days took
-- 0.68 s of CPU as states and 0.35 s as arrays, with the same result; the job's whole
-- people side 3.70 to 2.79 s at 10M, 4.88 to 4.40 s at 30M (bench/priors.py
-- --compare-people, both on one store). Existing rows: their keys read out of
-- the states (finalizeAggregation: every key, nothing rebuilt from the raw days, nothing
-- lost; the rows migration 11 carried over without people stay without). The views are
-- dropped first and made again after, as in migration 11: the exposed view writes
-- arrays now; the engaged view is the same statement.

DROP VIEW IF EXISTS value_daily_exposed_mv;

DROP VIEW IF EXISTS value_daily_engaged_mv;

CREATE TABLE IF NOT EXISTS value_daily_next (
    space_id LowCardinality(String),
    attr String,
    value String,
    day Date,
    level UInt8,
    people SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64)),
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, day, level)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

TRUNCATE TABLE value_daily_next;

INSERT INTO value_daily_next (space_id, attr, value, day, level, people, exposure_micro, events, signal_micro) SELECT space_id, attr, value, day, level, finalizeAggregation(people), exposure_micro, events, signal_micro FROM value_daily;

-- Rerunnable after a crash, except between DROP and RENAME (as migration 11).
DROP TABLE value_daily;

RENAME TABLE value_daily_next TO value_daily;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_exposed_mv TO value_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    groupUniqArray(64)(person) AS people, sum(weight_micro) AS exposure_micro
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
