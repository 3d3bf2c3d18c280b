-- name: priors: ref_values_daily keyed by attribute first
-- Issue 20, second round: `ref_values_daily` keyed attribute first. Keyed object first,
-- a per-attribute priors run (a space past `jobs.priors_split_rows`) read the space's
-- whole table to find its attribute: at 60M presented items, 35M rows read 5 times per
-- space, most of the job's 58 s of CPU. Keyed (space, attr, ref, value, day), a run
-- reads only its attribute's rows, in the order it groups them by. The table holds no
-- person, so its rows are copied as they are (no rebuild from the raw days, nothing
-- lost); the view is dropped first and made again after, so no insert lands in between
-- unseen (the worker runs migrations before it consumes).

DROP VIEW IF EXISTS ref_values_daily_mv;

CREATE TABLE IF NOT EXISTS ref_values_daily_next (
    space_id LowCardinality(String),
    attr String,
    ref String,
    value String,
    day Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, attr, ref, value, day)
TTL day + INTERVAL 100 DAY SETTINGS non_replicated_deduplication_window = 1000;

TRUNCATE TABLE ref_values_daily_next;

INSERT INTO ref_values_daily_next (space_id, attr, ref, value, day, presentations) SELECT space_id, attr, ref, value, day, sum(presentations) FROM ref_values_daily GROUP BY space_id, attr, ref, value, day;

-- Rerunnable after a crash, except between DROP and RENAME (as migration 11).
DROP TABLE ref_values_daily;

RENAME TABLE ref_values_daily_next TO ref_values_daily;

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
