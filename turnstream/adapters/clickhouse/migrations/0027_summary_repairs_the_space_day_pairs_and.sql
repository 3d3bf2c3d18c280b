-- name: summary repairs: the (space, day) pairs and inserts a repair recomputes
-- Issue 35: summaries a repeat cannot change. After a crash the sink no longer pushes an
-- unconfirmed insert through the views again (that rested on each target's deduplication
-- log, which a SIGKILL can lose: a summary counted the insert twice); it replaces what the
-- insert can have touched, per summary and (space, day), with its recomputation from the
-- raw rows (turnstream/sinks/summaries.py). `summary_repairs` holds a repair's (space,
-- day) pairs and insert ids as data, so none goes into SQL text; a day is enough to
-- forget what a crash left.

CREATE TABLE IF NOT EXISTS summary_repairs (
    repair String,
    source LowCardinality(String),
    space_id String,
    day Date,
    insert UInt64,
    at DateTime('UTC') DEFAULT now()
) ENGINE = MergeTree ORDER BY (repair, space_id, day)
TTL at + INTERVAL 1 DAY;
