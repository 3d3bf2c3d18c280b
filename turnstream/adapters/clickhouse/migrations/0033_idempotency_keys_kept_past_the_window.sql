-- name: idempotency keys kept past the window in which their item is accepted
-- A key was kept 30 days from when it was taken, while the gate accepts an item until 45
-- days after its occurred_at (and an item dated ahead longer): a signed record sent again
-- 31 to 45 days later landed a second time. Each key now keeps the later of its item's
-- occurred_at and when it was taken (`kept_from`, core/time_edges.key_kept_from) and is
-- deleted 46 days after it (KEY_KEEP_DAYS). Keys taken before keep `ingested_at`.

ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS kept_from DateTime64(3, 'UTC') DEFAULT ingested_at AFTER space_id;
ALTER TABLE idempotency_keys MODIFY TTL toDateTime(kept_from) + INTERVAL 46 DAY;
