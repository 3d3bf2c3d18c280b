-- name: priors: value_daily written by one view (presented pages and engagements)
-- Issue 14, round six: value_daily written by one view, not two. The exposed view
-- (presented pages) and the engaged view (engagements) each wrote a part into
-- value_daily at every interactions insert, and each such part fired value_weekly_mv, so
-- a batch made four parts where two hold the same rows: a part costs the store ~6-9 ms
-- of CPU whatever its size (docs/performance.md, round six). One scan of the batch now
-- gives both: an engagement passes through the same LEFT ARRAY JOIN as a page (its
-- payload has no items, so one row, item ''), then per row one entry per shown value
-- (a page's visible item) or its object (an engagement); a page's people and weight, an
-- engagement's count and signal, each summed only from its own kind. The same rows once
-- merged (the engine merges value_daily by its key anyway: people as the capped union of
-- keys, the rest summed): a page's row and an engagement's for the same value, day and
-- level 0 now come as one row (tests/integration/sinks/test_value_daily_view.py compares
-- the two on a mixed batch). The old views are dropped and the new one made in one
-- migration, so no insert lands in between unseen (the worker runs migrations before it
-- consumes); nothing stored changes.

DROP VIEW IF EXISTS value_daily_exposed_mv;

DROP VIEW IF EXISTS value_daily_engaged_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_daily_mv TO value_daily AS WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden
SELECT space_id, pair.1 AS attr, pair.2 AS value, day, level,
    groupUniqArrayIf(64)(person, exposed) AS people,
    sumIf(weight_micro, exposed) AS exposure_micro,
    countIf(NOT exposed) AS events,
    sumIf(signal_micro, NOT exposed) AS signal_micro
FROM (
    SELECT space_id, person, if(exposed, toUInt8(multiIf(person >= 4611686018427387904, 0, person >= 1152921504606846976, 1, person >= 288230376151711744, 2, person >= 72057594037927936, 3, person >= 18014398509481984, 4, person >= 4503599627370496, 5, person >= 1125899906842624, 6, 7)), 0) AS level, day, exposed,
        weight_micro, signal_micro,
        arrayJoin(if(exposed, arrayPushFront(
            arrayFilter(kv -> NOT has(hidden, kv.1), arrayMap(
                kv -> (concat(type, '.', kv.1),
                    if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                arrayFilter(kv -> kv.2 != 'null', JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref)), [(concat(type, '.ref'), ref)])) AS pair
    FROM (
        SELECT space_id, person, day, exposed, signal_micro, item,
            if(exposed, JSONExtractString(item, 'ref'), engaged_ref) AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos,
            toUInt64(round(1 / log2(greatest(pos, 1) + 1) * 1000000)) AS weight_micro
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
        WHERE NOT has(hidden, type)
            AND (NOT exposed OR (pos >= 1 AND pos - first_pos < visible_k))
    )
)
GROUP BY space_id, attr, value, day, level;
