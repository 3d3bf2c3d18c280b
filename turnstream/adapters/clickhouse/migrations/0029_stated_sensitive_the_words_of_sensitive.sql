-- name: stated_sensitive: the words of sensitive stated values, apart
-- Issue 36 (point 3): the words of a value stated on a sensitive field (a diet "celíaco
-- (doença celíaca)") are kept apart. The ingest sink writes them here (sinks/rows.py)
-- and the interaction's payload (so `stated` too) keeps only the field, `withheld`. No
-- analyst reads this table (not in the catalog, refused by the SQL gate, no grant); an
-- erasure reaches it (it has a profile id); the read side serves what the words mean.

CREATE TABLE IF NOT EXISTS stated_sensitive (
    id String,
    space_id LowCardinality(String),
    profile_id String,
    `for` LowCardinality(String),
    attr String,
    value String,
    occurred_at DateTime64(3, 'UTC'),
    ingested_at DateTime64(3, 'UTC'),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset UInt64,
    _insert UInt64 DEFAULT 0
) ENGINE = MergeTree ORDER BY (space_id, profile_id, id)
TTL toDateTime(occurred_at) + INTERVAL 7 DAY DELETE WHERE `for` = 'gift' SETTINGS non_replicated_deduplication_window = 1000;
