-- name: constraint rates: over calls that sent constraints, and the share that did
-- Issue 39 (item 5): `context_use_constraints.violation_rate` divides by every checked
-- result, those of calls that sent no constraint included (acme's search_products: 2/801,
-- while 590 of its 665 calls sent none; over the calls that sent some it is 6x higher).
-- Two figures named apart, read from the raw measurements (a plain view: no summary).

CREATE VIEW IF NOT EXISTS context_use_constraint_rates AS
SELECT space_id, source, agent, tool, day, calls, calls_with_constraints,
    round(calls_with_constraints / calls, 4) AS share_of_calls_with_constraints,
    violations, verifiable_in_calls_with_constraints,
    if(verifiable_in_calls_with_constraints > 0,
        round(violations / verifiable_in_calls_with_constraints, 4), NULL)
        AS violation_rate_in_calls_with_constraints
FROM (
    SELECT space_id, source, agent, tool, toDate(occurred_at, 'UTC') AS day,
        count() AS calls, countIf(sent > 0) AS calls_with_constraints,
        sumIf(violations, sent > 0) AS violations,
        sumIf(toInt64(results_checked) - toInt64(unverifiable), sent > 0)
            AS verifiable_in_calls_with_constraints
    FROM turn_constraints
    GROUP BY space_id, source, agent, tool, day
);
