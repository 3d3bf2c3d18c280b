-- name: sink marks: each raw row's insert id, and the offsets confirmed in the views
-- A crash between a raw table's part and its views' parts (ClickHouse commits them one
-- after the other) left the raw table holding an insert its summaries lacked, and the
-- sink's high-water mark, read from the raw table, skipped it for ever (twice in about
-- eight `make chaos` runs). Every raw row now carries the id of the insert that wrote it,
-- and `sink_marks` what the sink confirmed: per table and source partition, the highest
-- offset whose insert returned, its views' parts included. After a start the sink pushes
-- what lies above the confirmed marks through the views again with its own token
-- (sinks/writer.py). Seeded with what the tables hold now: the rows already there carry
-- no id (0) and cannot be pushed again. Rerunnable: a max of the same marks is the same.

ALTER TABLE turns ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE interactions ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE turn_claims ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE turn_constraints ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE commands ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE dead_letters ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

ALTER TABLE idempotency_keys ADD COLUMN IF NOT EXISTS _insert UInt64 DEFAULT 0;

CREATE TABLE IF NOT EXISTS sink_marks (
    table LowCardinality(String),
    _topic LowCardinality(String),
    _partition UInt16,
    _offset SimpleAggregateFunction(max, UInt64)
) ENGINE = AggregatingMergeTree ORDER BY (table, _topic, _partition);

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'turns', _topic, _partition, max(_offset) FROM turns GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'interactions', _topic, _partition, max(_offset) FROM interactions GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'turn_claims', _topic, _partition, max(_offset) FROM turn_claims GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'turn_constraints', _topic, _partition, max(_offset) FROM turn_constraints GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'outcomes', _topic, _partition, max(_offset) FROM outcomes GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'commands', _topic, _partition, max(_offset) FROM commands GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'dead_letters', _topic, _partition, max(_offset) FROM dead_letters GROUP BY _topic, _partition;

INSERT INTO sink_marks (table, _topic, _partition, _offset) SELECT 'idempotency_keys', _topic, _partition, max(_offset) FROM idempotency_keys GROUP BY _topic, _partition;
