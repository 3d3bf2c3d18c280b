-- name: the subjects of erasures in progress
-- An erasure's subjects, while it runs (sinks/erasure.py): its mutations read them
-- from here, so that no subject is written into a statement's text. Deleted when the
-- erasure ends; the TTL removes what a crash left.
-- (9, not 8: main's migration 8 adds issue 16's experiment_results columns.)

CREATE TABLE IF NOT EXISTS erase_subjects (
    erase_id String,
    space_id String,
    subject String,
    requested_at DateTime64(3, 'UTC')
) ENGINE = MergeTree ORDER BY erase_id
TTL toDateTime(requested_at) + INTERVAL 1 DAY;
