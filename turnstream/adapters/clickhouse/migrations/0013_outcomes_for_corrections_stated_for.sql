-- name: outcomes.for; corrections stated for their bucket; the gift bucket disposable
-- Issue 15 (item 5): whose it is. An outcome may say `for` (a dependent's purchase); a
-- correction is stated for the bucket of the inference it corrects (migration 6 wrote
-- every correction as `self`, so a beneficiary's correction became the buyer's own).

ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS `for` LowCardinality(String)
    DEFAULT 'self' AFTER reason;

DROP VIEW IF EXISTS stated_from_corrections;

CREATE MATERIALIZED VIEW IF NOT EXISTS stated_from_corrections TO stated AS
SELECT idempotency_key AS id, space_id, profile_id,
    if(JSONExtractString(replacement, 'for') != '', JSONExtractString(replacement, 'for'),
        'self') AS `for`,
    JSONExtractString(replacement, 'kind') AS kind,
    JSONExtractString(replacement, 'attr') AS attr, replacement AS payload, session_id,
    idempotency_key AS origin, occurred_at
FROM commands
WHERE command = 'correct' AND replacement != '';

-- The gift bucket is disposable (docs/signals.md): its rows go after 7 days, the
-- default of [signals] gift_days, after which the engine drops it from the state.
-- Not materialized now (that rewrites every part at the upgrade): rows already
-- there go at their parts' next merge, new parts as they are written.
ALTER TABLE exposure_items MODIFY TTL toDateTime(delivered_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE inferences MODIFY TTL toDateTime(updated_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE stated MODIFY TTL toDateTime(occurred_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0;
