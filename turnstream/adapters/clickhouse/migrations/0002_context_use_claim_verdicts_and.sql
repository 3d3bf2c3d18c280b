-- name: context use: claim verdicts and constraint measurements rolled up

CREATE TABLE IF NOT EXISTS claims_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    category LowCardinality(String),
    class LowCardinality(String),
    nature LowCardinality(String),
    verdict LowCardinality(String),
    action LowCardinality(String),
    minute DateTime('UTC'),
    claims UInt64,
    evidenced UInt64
) ENGINE = SummingMergeTree
ORDER BY (space_id, source, agent, category, class, nature, verdict, action, minute) SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS claims_minute_mv TO claims_minute AS
SELECT space_id, source, agent, category, class, nature, verdict, action,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS claims, countIf(evidenced) AS evidenced
FROM turn_claims
GROUP BY space_id, source, agent, category, class, nature, verdict, action, minute;

CREATE TABLE IF NOT EXISTS turns_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    contract_version String,
    minute DateTime('UTC'),
    turns UInt64,
    guard_acted UInt64,
    guard_budget_exceeded UInt64,
    internal_text_found UInt64,
    claims UInt64
) ENGINE = SummingMergeTree
ORDER BY (space_id, source, agent, contract_version, minute) SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS turns_minute_mv TO turns_minute AS
SELECT space_id, source, agent, contract_version,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS turns, countIf(guard_acted) AS guard_acted,
    countIf(guard_budget_exceeded) AS guard_budget_exceeded,
    countIf(internal_text_found > 0) AS internal_text_found, sum(claims) AS claims
FROM turns
GROUP BY space_id, source, agent, contract_version, minute;

CREATE TABLE IF NOT EXISTS constraints_minute (
    space_id LowCardinality(String),
    source LowCardinality(String),
    agent LowCardinality(String),
    tool LowCardinality(String),
    minute DateTime('UTC'),
    calls UInt64,
    sent UInt64,
    results_checked UInt64,
    violations UInt64,
    unverifiable UInt64,
    relaxed UInt64
) ENGINE = SummingMergeTree ORDER BY (space_id, source, agent, tool, minute) SETTINGS non_replicated_deduplication_window = 1000;

CREATE MATERIALIZED VIEW IF NOT EXISTS constraints_minute_mv TO constraints_minute AS
SELECT space_id, source, agent, tool,
    toStartOfMinute(toDateTime(occurred_at, 'UTC')) AS minute,
    count() AS calls, sum(sent) AS sent, sum(results_checked) AS results_checked,
    sum(violations) AS violations, sum(unverifiable) AS unverifiable,
    countIf(relaxed) AS relaxed
FROM turn_constraints
GROUP BY space_id, source, agent, tool, minute;

CREATE VIEW IF NOT EXISTS context_use_claims AS
SELECT space_id, source, agent, category, verdict, day,
    n AS claims, e AS evidenced, round(e / n, 4) AS evidenced_rate
FROM (
    SELECT space_id, source, agent, category, verdict, toDate(minute) AS day,
        sum(claims) AS n, sum(evidenced) AS e
    FROM claims_minute
    GROUP BY space_id, source, agent, category, verdict, day
);

CREATE VIEW IF NOT EXISTS context_use_constraints AS
SELECT space_id, source, agent, tool, day,
    c AS calls, s AS sent, rc AS results_checked, v AS violations, u AS unverifiable,
    r AS relaxed, rc - u AS verifiable,
    if(rc > u, round(v / (rc - u), 4), NULL) AS violation_rate
FROM (
    SELECT space_id, source, agent, tool, toDate(minute) AS day,
        sum(calls) AS c, sum(sent) AS s, sum(results_checked) AS rc,
        sum(violations) AS v, sum(unverifiable) AS u, sum(relaxed) AS r
    FROM constraints_minute
    GROUP BY space_id, source, agent, tool, day
);

CREATE VIEW IF NOT EXISTS context_use_turns AS
SELECT space_id, source, agent, toDate(minute) AS day,
    sum(turns) AS turns, sum(guard_acted) AS guard_acted,
    sum(guard_budget_exceeded) AS guard_budget_exceeded,
    sum(internal_text_found) AS internal_text_found, sum(claims) AS claims
FROM turns_minute
GROUP BY space_id, source, agent, day;

CREATE VIEW IF NOT EXISTS contract_versions AS
SELECT space_id, source, agent, contract_version,
    sum(turns) AS turns, min(minute) AS first_seen, max(minute) AS last_seen
FROM turns_minute
GROUP BY space_id, source, agent, contract_version;
