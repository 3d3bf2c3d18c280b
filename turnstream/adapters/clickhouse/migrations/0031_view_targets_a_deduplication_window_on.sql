-- name: view_targets: a deduplication window on every view's target
-- Issue 35 ("nothing counted twice"): an insert sent again with its token (a retry after
-- a lost answer, a second writer on a server) was dropped by the raw table and by the
-- daily summaries, but the weekly roll-ups (chained on value_daily and ref_values_daily)
-- and `stated` took its rows again: a non-replicated MergeTree deduplicates only with a
-- window. Every table a view writes now keeps one, as the raw tables do (migration 1).
-- A repair's INSERT ... SELECT carries no token and is not deduplicated
-- (adapters/clickhouse/summaries.py).

ALTER TABLE value_weekly MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE ref_values_weekly MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE stated MODIFY SETTING non_replicated_deduplication_window = 1000;

ALTER TABLE webhook_events MODIFY SETTING non_replicated_deduplication_window = 1000;
