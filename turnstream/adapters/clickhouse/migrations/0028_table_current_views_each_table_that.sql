-- name: <table>_current views: each table that needs FINAL, read FINAL (sinks/current_views.py)
-- (the statements of sinks/current_views.current_view_statements(), as run)

CREATE VIEW IF NOT EXISTS inferences_current AS SELECT * FROM inferences FINAL;

CREATE VIEW IF NOT EXISTS exposure_items_current AS SELECT * FROM exposure_items FINAL;

CREATE VIEW IF NOT EXISTS signal_state_current AS SELECT * FROM signal_state FINAL;

CREATE VIEW IF NOT EXISTS stated_current AS SELECT * FROM stated FINAL;

CREATE VIEW IF NOT EXISTS review_requests_current AS SELECT * FROM review_requests FINAL;

CREATE VIEW IF NOT EXISTS experiment_assignments_current AS SELECT * FROM experiment_assignments FINAL;

CREATE VIEW IF NOT EXISTS experiment_results_current AS SELECT * FROM experiment_results FINAL;

CREATE VIEW IF NOT EXISTS priors_current AS SELECT * FROM priors FINAL;

CREATE VIEW IF NOT EXISTS erase_tombstones_current AS SELECT * FROM erase_tombstones FINAL;

CREATE VIEW IF NOT EXISTS webhook_events_current AS SELECT * FROM webhook_events FINAL;

CREATE VIEW IF NOT EXISTS claims_minute_current AS SELECT * FROM claims_minute FINAL;

CREATE VIEW IF NOT EXISTS constraints_minute_current AS SELECT * FROM constraints_minute FINAL;

CREATE VIEW IF NOT EXISTS turns_minute_current AS SELECT * FROM turns_minute FINAL;

CREATE VIEW IF NOT EXISTS interactions_daily_current AS SELECT * FROM interactions_daily FINAL;

CREATE VIEW IF NOT EXISTS ref_values_daily_current AS SELECT * FROM ref_values_daily FINAL;

CREATE VIEW IF NOT EXISTS ref_values_weekly_current AS SELECT * FROM ref_values_weekly FINAL;

CREATE VIEW IF NOT EXISTS sensitive_daily_current AS SELECT * FROM sensitive_daily FINAL;
