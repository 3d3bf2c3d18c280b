-- name: turns.constraints_version: the constraints block a turn cites
-- Issue 13: a turn names the version of the constraints block it cites (`cv_...`, the
-- answer of POST /v1/constraints), so an analyst can tell which block a turn's tool calls
-- were measured against. Rows written before read '' (none cited).

ALTER TABLE turns ADD COLUMN IF NOT EXISTS constraints_version String DEFAULT '' AFTER contract_version;
