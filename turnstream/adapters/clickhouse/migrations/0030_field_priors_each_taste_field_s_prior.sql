-- name: field_priors: each field's prior fitted across a space's people
-- Issue 36 (point 2): per space and field, the share of people with a favourite value
-- and the weights of the lift grid, fitted by the nightly priors job on the people's
-- folded states (turnstream/core/derivation/field_prior.py); versioned like `priors`
-- (one version per as-of day; rewriting a version replaces the space's rows).

CREATE TABLE IF NOT EXISTS field_priors (
    space_id LowCardinality(String),
    attr String,
    people UInt64,
    taste_prior Float64,
    lifts Array(Float64),
    weights Array(Float64),
    window_end Date,
    version UInt32
) ENGINE = ReplacingMergeTree ORDER BY (space_id, version, attr)
TTL window_end + INTERVAL 400 DAY;

CREATE VIEW IF NOT EXISTS field_priors_latest AS
SELECT space_id, attr, people, taste_prior, lifts, weights, window_end, version
FROM field_priors FINAL
WHERE (space_id, version) IN (SELECT space_id, max(version) FROM field_priors GROUP BY space_id);

CREATE VIEW IF NOT EXISTS field_priors_current AS SELECT * FROM field_priors FINAL;
