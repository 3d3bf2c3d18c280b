-- name: per-person evidence within the raw window: exposure_items TTL, signal_state age
-- Issue 15 (item 3): per-person evidence kept as long as the raw interactions (45 days).
-- `exposure_items` (the pages shown, with their positions) gets the raw TTL beside the gift
-- rule of migration 13; `signal_state` says when its oldest evidence occurred, which the
-- retention check reads and the retention job folds by (rows written before read 1970:
-- unknown, so folded once). The TTL is not materialized at the upgrade: the retention job
-- deletes older rows.

ALTER TABLE exposure_items MODIFY TTL toDateTime(delivered_at) + INTERVAL 45 DAY, toDateTime(delivered_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' SETTINGS materialize_ttl_after_modify = 0;

ALTER TABLE signal_state ADD COLUMN IF NOT EXISTS evidence_from Nullable(DateTime64(3, 'UTC')) DEFAULT toDateTime64(0, 3, 'UTC');
