-- name: priors: value_daily and ref_values_daily partitioned by ISO week
-- Issue 20, fifth round: the daily aggregates partitioned by ISO week (toMonday(day)),
-- so that the priors job reads the days at its window's edges from two partitions. Both
-- tables are keyed value first (so a run reads its attribute's rows); unpartitioned, the
-- edge days filtered every daily row of the space, and reading the weeks cost 1.3 to 1.5
-- times the CPU of reading every day at 10M and 30M presented items (migration 20,
-- docs/performance.md, fourth round). Partitioned, a query's day condition selects only
-- the partitions (parts) whose days it can hold (ClickHouse's min-max index of the
-- partition key's column), checked by tests/integration/jobs/test_priors_partitions.py.
-- The rows are copied as they are (nothing rebuilt from raw, nothing lost: no person
-- leaves or enters a row; the rows migration 11 carried over without people stay
-- without); every view that writes or reads the two tables is dropped first and made
-- again after, the same statements, so no insert lands in between unseen (the worker
-- runs migrations before it consumes). The roll-ups are not rebuilt: they already hold
-- these rows' weeks. At most ~15 partitions per table (the TTL keeps 100 days); an
-- ingest block spanning more weeks than `max_partitions_per_insert_block` would be
-- refused, so the store's inserts lift that limit (sinks/store.Store.insert).

DROP VIEW IF EXISTS value_weekly_mv;

DROP VIEW IF EXISTS ref_values_weekly_mv;

DROP VIEW IF EXISTS value_daily_exposed_mv;

DROP VIEW IF EXISTS value_daily_engaged_mv;

DROP VIEW IF EXISTS ref_values_daily_mv;

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
) ENGINE = AggregatingMergeTree PARTITION BY toMonday(day) ORDER BY (space_id, attr, value, day, level)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

TRUNCATE TABLE value_daily_next;

INSERT INTO value_daily_next (space_id, attr, value, day, level, people, exposure_micro, events, signal_micro) SELECT space_id, attr, value, day, level, people, exposure_micro, events, signal_micro FROM value_daily SETTINGS max_partitions_per_insert_block = 0;

-- Rerunnable after a crash, except between DROP and RENAME (as migration 11).
DROP TABLE value_daily;

RENAME TABLE value_daily_next TO value_daily;

CREATE TABLE IF NOT EXISTS ref_values_daily_next (
    space_id LowCardinality(String),
    attr String,
    ref String,
    value String,
    day Date,
    presentations UInt64
) ENGINE = SummingMergeTree PARTITION BY toMonday(day) ORDER BY (space_id, attr, ref, value, day)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

TRUNCATE TABLE ref_values_daily_next;

INSERT INTO ref_values_daily_next (space_id, attr, ref, value, day, presentations) SELECT space_id, attr, ref, value, day, presentations FROM ref_values_daily SETTINGS max_partitions_per_insert_block = 0;

DROP TABLE ref_values_daily;

RENAME TABLE ref_values_daily_next TO ref_values_daily;

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

CREATE MATERIALIZED VIEW IF NOT EXISTS value_weekly_mv TO value_weekly AS SELECT space_id, attr, value, toMonday(day) AS week, level,
    groupUniqArrayArray(64)(people) AS people, sum(exposure_micro) AS exposure_micro,
    sum(events) AS events, sum(signal_micro) AS signal_micro
FROM value_daily
GROUP BY space_id, attr, value, week, level;

CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_weekly_mv TO ref_values_weekly AS SELECT space_id, attr, ref, value, toMonday(day) AS week,
    sum(presentations) AS presentations
FROM ref_values_daily
GROUP BY space_id, attr, ref, value, week;
