-- name: outcomes.token_status
-- Issue 13: exposure tokens are signed; the ingest rule verifies each outcome's token
-- and fills exposure_id/exposure_pos only when it is valid. Rows written before this
-- migration were never verified: they read 'unverified' (or 'absent' without a token),
-- and nothing attributes through them (experiments read token_status = 'valid').

ALTER TABLE outcomes ADD COLUMN IF NOT EXISTS token_status LowCardinality(String)
    DEFAULT if(exposure_token = '', 'absent', 'unverified') AFTER exposure_pos;
