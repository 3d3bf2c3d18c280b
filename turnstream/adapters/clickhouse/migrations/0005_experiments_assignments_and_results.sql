-- name: experiments: assignments and results

CREATE TABLE IF NOT EXISTS experiment_assignments (
    experiment_id String,
    space_id LowCardinality(String),
    profile_id String,
    arm LowCardinality(String),
    source LowCardinality(String),
    method LowCardinality(String),
    assigned_at DateTime64(3, 'UTC'),
    recorded_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY (experiment_id, profile_id);

CREATE TABLE IF NOT EXISTS experiment_results (
    experiment_id String,
    space_id LowCardinality(String),
    arm LowCardinality(String),
    day Date,
    baseline String,
    outcome LowCardinality(String),
    window_days UInt16,
    people UInt64,
    successes UInt64,
    rate Nullable(Float64),
    rate_low Nullable(Float64),
    rate_high Nullable(Float64),
    diff Nullable(Float64),
    diff_low Nullable(Float64),
    diff_high Nullable(Float64),
    lift Nullable(Float64),
    lift_low Nullable(Float64),
    lift_high Nullable(Float64),
    p_value Nullable(Float64),
    srm_p_value Float64,
    srm_flag Bool,
    computed_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree(computed_at) ORDER BY (experiment_id, arm, day) SETTINGS non_replicated_deduplication_window = 1000;
