-- name: correction rows before migration 13 restated in the corrected inference's bucket
-- Correction rows written before migration 13 say `self` whatever they corrected (the
-- view of migration 6 wrote every correction as `self`, and the read side left the
-- replacement's `for` out). Restated in the corrected inference's bucket, by migration
-- 13's rule for new rows: the replacement's own `for` when it has one, else the bucket
-- of the inference it corrects (core/corrections.correction_for), else `self`. `stated`
-- is a ReplacingMergeTree read with FINAL, so the restated row, inserted later, wins;
-- only rows whose bucket changes are inserted, so running it twice changes nothing.
-- (The raw `commands` rows stay as they were sent.)

INSERT INTO stated (id, space_id, profile_id, `for`, kind, attr, payload,
    session_id, origin, occurred_at)
SELECT s.id, s.space_id, s.profile_id, c.restated, s.kind, s.attr, s.payload, s.session_id,
    s.origin, s.occurred_at
FROM (SELECT * FROM stated FINAL) AS s
INNER JOIN (
    SELECT c.space_id AS space_id, c.profile_id AS profile_id, c.idempotency_key AS id,
        multiIf(JSONExtractString(c.replacement, 'for') != '',
                JSONExtractString(c.replacement, 'for'),
            i.bucket != '', i.bucket, 'self') AS restated
    FROM commands AS c
    LEFT JOIN (
        SELECT space_id, profile_id, id, `for` AS bucket FROM inferences FINAL
    ) AS i ON i.space_id = c.space_id AND i.profile_id = c.profile_id AND i.id = c.inference_id
    WHERE c.command = 'correct' AND c.replacement != ''
) AS c ON c.space_id = s.space_id AND c.profile_id = s.profile_id AND c.id = s.id
WHERE s.`for` != c.restated;
