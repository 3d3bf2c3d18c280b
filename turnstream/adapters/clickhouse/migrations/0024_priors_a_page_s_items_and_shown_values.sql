-- name: priors: a page's items and shown values parsed once for value_daily and ref_values_daily
-- Issue 14, round seven: a presented page's items and shown values parsed once, not three
-- times, and by fewer views. value_daily_mv, ref_values_daily_mv and the two
-- sensitive_daily views each took the pages of an interactions insert apart
-- (JSONExtractArrayRaw of the items, JSONExtractKeysAndValuesRaw of each item's `shown`)
-- or scanned it, and a view costs the store ~5-10 ms of CPU per insert even when it
-- writes nothing (bench/view_costs.py; docs/performance.md, round seven). One view,
-- `interaction_values_mv`, now does it once per insert into `interaction_values`, a Null
-- table (nothing stored, no part: its rows only pass to the views on it): per presented
-- item of a type not sensitive, one row per shown field not null and one for the object
-- (`type.ref`), with whether the item is visible on its page and its weight; per item of
-- a sensitive type, one row naming the type; per engagement, one row for its object (or
-- its sensitive type), with its signal. A sensitive field's row carries its name, never
-- its value. value_daily_mv, ref_values_daily_mv and one sensitive_daily_mv (for the
-- two) read those rows and write what the old views wrote
-- (tests/integration/sinks/test_values_stage.py compares every aggregate, the weekly
-- roll-ups included, with migration 23's views on the same batches). The weekly views
-- read the daily tables as before. The old views are dropped and the new ones made in
-- one migration, the stage's view last, so no insert lands in between unseen (the worker
-- runs migrations before it consumes); no stored row changes. An insert's token reaches
-- the tables behind the Null one as a chained view's: value_daily, ref_values_daily and
-- sensitive_daily drop a repeated block by their own deduplication window.

DROP VIEW IF EXISTS value_daily_mv;

DROP VIEW IF EXISTS ref_values_daily_mv;

DROP VIEW IF EXISTS sensitive_daily_presented_mv;

DROP VIEW IF EXISTS sensitive_daily_engaged_mv;

CREATE TABLE IF NOT EXISTS interaction_values (
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
) ENGINE = Null;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_mv TO value_daily AS SELECT space_id, attr, value, day,
    if(exposed, toUInt8(multiIf(person >= 4611686018427387904, 0, person >= 1152921504606846976, 1, person >= 288230376151711744, 2, person >= 72057594037927936, 3, person >= 18014398509481984, 4, person >= 4503599627370496, 5, person >= 1125899906842624, 6, 7)), 0) AS level,
    groupUniqArrayIf(64)(person, exposed) AS people,
    sumIf(weight_micro, exposed) AS exposure_micro,
    countIf(NOT exposed) AS events,
    sumIf(signal_micro, NOT exposed) AS signal_micro
FROM interaction_values
WHERE NOT sensitive AND (visible OR NOT exposed)
GROUP BY space_id, attr, value, day, level;

CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_daily_mv TO ref_values_daily AS SELECT space_id, ref, attr, value, day, count() AS presentations
FROM interaction_values
WHERE exposed AND field AND NOT sensitive
GROUP BY space_id, ref, attr, value, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS sensitive_daily_mv TO sensitive_daily AS SELECT space_id, attr AS name, day,
    countIf(exposed) AS presented, countIf(NOT exposed) AS engaged
FROM interaction_values
WHERE sensitive
GROUP BY space_id, name, day;

CREATE MATERIALIZED VIEW IF NOT EXISTS interaction_values_mv TO interaction_values AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
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
            SELECT space_id, sipHash64(profile_id) AS person, toDate(occurred_at) AS day,
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
WHERE field OR sensitive OR visible OR NOT exposed;
