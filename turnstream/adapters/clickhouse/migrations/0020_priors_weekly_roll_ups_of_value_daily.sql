-- name: priors: weekly roll-ups of value_daily and ref_values_daily
-- Issue 20, fourth round: weekly roll-ups of the two daily aggregates the priors job
-- reads. Over a 90-day window the job read ~90 daily rows per value and level (people
-- side) and per object, field value (shares side), where keys change little from day to
-- day: at 30M presented items 5.5M value_daily rows and 24.2M ref_values_daily rows.
-- `value_weekly` and `ref_values_weekly` hold the same columns per ISO week (the week's
-- Monday): a week's capped key arrays merged (groupUniqArrayArray(64), the same capped
-- union as merging its days), its sums summed. The job reads the whole weeks inside its
-- window from them and only the days at the window's edges from the daily tables
-- (jobs/priors.window_parameters), so the floor stays exact at the first and last day.
-- Filled by views on the daily tables (a view chained on a view's target runs at every
-- insert into it, whether the raw rows came by INSERT ... VALUES or INSERT ... SELECT),
-- so a late event lands in its week as in its day, with nothing to close or catch up;
-- the views add no dedup window: a block the daily table drops as a repeat never reaches
-- them. Existing stores: the roll-ups are built from the stored daily rows (nothing
-- rebuilt from raw, nothing lost, the rows migration 11 carried over without people stay
-- without), then the views are made, as in migration 11 (the worker runs migrations
-- before it consumes). Kept 107 days: a week's rows until its last day is past the 100
-- days a window may reach. Erasure takes keys out of value_weekly as out of value_daily
-- (sinks/erasure.PERSON_AGGREGATES); sensitive names are deleted from both roll-ups.

DROP VIEW IF EXISTS value_weekly_mv;

DROP VIEW IF EXISTS ref_values_weekly_mv;

CREATE TABLE IF NOT EXISTS value_weekly (
    space_id LowCardinality(String),
    attr String,
    value String,
    week Date,
    level UInt8,
    people SimpleAggregateFunction(groupUniqArrayArray(64), Array(UInt64)),
    exposure_micro SimpleAggregateFunction(sum, UInt64),
    events SimpleAggregateFunction(sum, UInt64),
    signal_micro SimpleAggregateFunction(sum, Int64)
) ENGINE = AggregatingMergeTree ORDER BY (space_id, attr, value, week, level)
TTL week + INTERVAL 107 DAY;

CREATE TABLE IF NOT EXISTS ref_values_weekly (
    space_id LowCardinality(String),
    attr String,
    ref String,
    value String,
    week Date,
    presentations UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, attr, ref, value, week)
TTL week + INTERVAL 107 DAY;

-- Rerunnable after a crash: emptied, then built whole from the daily rows.
TRUNCATE TABLE value_weekly;

TRUNCATE TABLE ref_values_weekly;

INSERT INTO value_weekly (space_id, attr, value, week, level, people, exposure_micro, events, signal_micro) SELECT space_id, attr, value, toMonday(day) AS week, level,
    groupUniqArrayArray(64)(people) AS people, sum(exposure_micro) AS exposure_micro,
    sum(events) AS events, sum(signal_micro) AS signal_micro
FROM value_daily
GROUP BY space_id, attr, value, week, level;

INSERT INTO ref_values_weekly (space_id, attr, ref, value, week, presentations) SELECT space_id, attr, ref, value, toMonday(day) AS week,
    sum(presentations) AS presentations
FROM ref_values_daily
GROUP BY space_id, attr, ref, value, week;

CREATE MATERIALIZED VIEW IF NOT EXISTS value_weekly_mv TO value_weekly AS SELECT space_id, attr, value, toMonday(day) AS week, level,
    groupUniqArrayArray(64)(people) AS people, sum(exposure_micro) AS exposure_micro,
    sum(events) AS events, sum(signal_micro) AS signal_micro
FROM value_daily
GROUP BY space_id, attr, value, week, level;

CREATE MATERIALIZED VIEW IF NOT EXISTS ref_values_weekly_mv TO ref_values_weekly AS SELECT space_id, attr, ref, value, toMonday(day) AS week,
    sum(presentations) AS presentations
FROM ref_values_daily
GROUP BY space_id, attr, ref, value, week;
