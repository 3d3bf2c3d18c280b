-- name: erase tombstones: who was erased, through when
-- Erase tombstones (sinks/erase_tombstones.py): the subject and the time of their latest
-- erase, so that an event of theirs that occurred before the erase but arrives after it is
-- dropped, by the ingest and the derivation drivers alike, also after a restart. Micro-
-- seconds, as event times are parsed: at milliseconds an event 0.4 ms before an erase
-- would read as after it once the tombstone is read back.

CREATE TABLE IF NOT EXISTS erase_tombstones (
    space_id LowCardinality(String),
    profile_id String,
    erased_through DateTime64(6, 'UTC'),
    recorded_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(erased_through) ORDER BY (space_id, profile_id);
