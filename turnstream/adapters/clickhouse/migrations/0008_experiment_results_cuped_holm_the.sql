-- name: experiment_results: CUPED, Holm, the sequential look, outcomes per person
-- Issue 16: the daily comparison adds CUPED-adjusted figures, Holm across arms, the
-- group-sequential look and outcomes per person (a continuous metric beside the rate).
-- Added columns only, so rows written before keep their meaning.

ALTER TABLE experiment_results
    ADD COLUMN IF NOT EXISTS p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_days UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS cuped_theta Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_lift_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS cuped_p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS method LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS basis LowCardinality(String) DEFAULT '',
    ADD COLUMN IF NOT EXISTS look UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS horizon_days UInt16 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS boundary Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_p_holm Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS seq_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS may_act Bool DEFAULT false,
    ADD COLUMN IF NOT EXISTS verdict String DEFAULT '',
    ADD COLUMN IF NOT EXISTS per_person Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_p_value Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff_low Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_diff_high Nullable(Float64),
    ADD COLUMN IF NOT EXISTS per_person_cuped_p_value Nullable(Float64);
