-- name: turns and turn_claims: language
-- Issue 37 (item 6): the language a turn's output was read in, on the turn and on each of
-- its claims (additive: '' for the rows written before).

ALTER TABLE turns ADD COLUMN IF NOT EXISTS language LowCardinality(String) DEFAULT '';

ALTER TABLE turn_claims ADD COLUMN IF NOT EXISTS language LowCardinality(String) DEFAULT '';
