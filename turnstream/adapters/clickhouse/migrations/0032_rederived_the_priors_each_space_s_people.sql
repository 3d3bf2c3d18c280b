-- name: rederived: the priors each space's people were last derived again with
-- The nightly priors job derives a space's people again when the priors derivation
-- reads for it (`priors_latest`, `field_priors_latest`) differ from those its people
-- were last derived again with (turnstream/jobs/rederive.py); the mark is written once
-- every person is done, so a run cut short does it again. One row per space once merged.

CREATE TABLE IF NOT EXISTS rederived (
    space_id LowCardinality(String),
    priors String,
    people UInt64,
    changed UInt64,
    done_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(done_at) ORDER BY space_id;
