-- name: signal_state keyed by space and profile
-- A profile id is unique only within its space: migration 3 keyed signal_state by
-- profile_id alone, so one id in two spaces kept one state. Rebuilt, keyed by both.
-- Each statement can run again after a crash, except between DROP and RENAME.

CREATE TABLE IF NOT EXISTS signal_state_by_space (
    profile_id String,
    space_id LowCardinality(String),
    state String,
    version UInt64
) ENGINE = ReplacingMergeTree(version) ORDER BY (space_id, profile_id);

INSERT INTO signal_state_by_space SELECT profile_id, space_id, state, version FROM signal_state;

DROP TABLE signal_state;

RENAME TABLE signal_state_by_space TO signal_state;
