"""The ClickHouse schema: the numbered migrations (one SQL file each, under
``adapters/clickhouse/migrations/``), applied at start-up and safe to re-apply.

Raw tables are not partitioned by time on purpose: an insert then becomes exactly one
part, which is what makes a batch's insert atomic and the sink's per-partition
high-water marks exact (see ``writer.py``). Every raw row keeps the Kafka topic,
partition and offset it came from. The tables as the migrations leave them are declared
in ``tables.py``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from turnstream.adapters.clickhouse.exposure_weight import weight_micro_sql
from turnstream.adapters.clickhouse.migrations import Migration, load_migrations
from turnstream.adapters.clickhouse.people_sets import CAP, level_of, merged_people, person_key
from turnstream.adapters.clickhouse.store import Store

__all__ = ["MIGRATIONS", "RAW_TABLES", "Migration", "apply_migrations"]

log = logging.getLogger(__name__)

#: Tables the ingest sink writes, each row with its Kafka source.
RAW_TABLES = (
    "turns",
    "interactions",
    "turn_claims",
    "turn_constraints",
    "outcomes",
    "commands",
    "dead_letters",
    "stated_sensitive",
    "idempotency_keys",
)

#: Every migration, by version (adapters/clickhouse/migrations/NNNN_*.sql).
MIGRATIONS: tuple[Migration, ...] = load_migrations()


def apply_migrations(store: Store, until: int | None = None) -> list[int]:
    """Apply every migration not yet recorded (up to version ``until``, for tests of a
    migration); returns the versions applied now."""
    store.command(
        """CREATE TABLE IF NOT EXISTS schema_migrations (
    version UInt32, name String, applied_at DateTime64(3, 'UTC')
) ENGINE = ReplacingMergeTree ORDER BY version"""
    )
    done = {row[0] for row in store.query("SELECT version FROM schema_migrations").rows}
    applied: list[int] = []
    for migration in MIGRATIONS:
        if migration.version in done or (until is not None and migration.version > until):
            continue
        for statement in migration.statements:
            store.command(statement)
        store.insert(
            "schema_migrations",
            [(migration.version, migration.name, datetime.now(UTC))],
            ["version", "name", "applied_at"],
        )
        log.info("applied migration %d (%s)", migration.version, migration.name)
        applied.append(migration.version)
    return applied


# The SQL of the views that fill the summaries, as migrations 20 and 24 made them, for
# their recomputation (turnstream/adapters/clickhouse/summaries.py; a test finds each text in its
# migration's file).

#: The names (types and type.fields) the views leave out, as an array.
_HIDDEN = "WITH (SELECT groupArray(name) FROM sensitive_names) AS hidden"

#: Per presented item of a type not sensitive: one row per shown field not null (a
#: sensitive one with no value) and one for the object; per item of a sensitive type,
#: one row naming the type; per engagement, one row for its object (or its sensitive
#: type). Rows of items outside the visible window only where ref_values_daily or
#: sensitive_daily count them (fields, sensitive names).
_SPLIT_VALUES = f"""{_HIDDEN}
SELECT space_id, person, day, exposed, visible, ref, pair.1 AS attr, pair.2 AS value,
    pair.3 AS field, pair.4 AS sensitive, weight_micro, signal_micro
FROM (
    SELECT space_id, person, day, exposed, signal_micro, ref,
        exposed AND pos >= 1 AND pos - first_pos < visible_k AS visible,
        {weight_micro_sql("pos")} AS weight_micro,
        arrayJoin(if(has(hidden, type), [(type, '', false, true)], arrayPushFront(
            arrayMap(
                kv -> (kv.1, if(has(hidden, kv.1), '', kv.2), true, has(hidden, kv.1)),
                arrayMap(
                    kv -> (concat(type, '.', kv.1),
                        if(startsWith(kv.2, '"'), JSONExtractString(kv.2), kv.2)),
                    arrayFilter(kv -> kv.2 != 'null',
                        JSONExtractKeysAndValuesRaw(item, 'shown')))),
            (concat(type, '.ref'), ref, false, false)))) AS pair
    FROM (
        SELECT space_id, person, day, exposed, signal_micro, visible_k, first_pos, item,
            if(exposed, JSONExtractString(item, 'ref'), engaged_ref) AS ref,
            splitByChar(':', ref)[1] AS type,
            JSONExtractUInt(item, 'pos') AS pos
        FROM (
            SELECT space_id, {person_key("profile_id")} AS person, toDate(occurred_at) AS day,
                kind = 'presented' AS exposed, ref AS engaged_ref,
                if(JSONExtractString(payload, 'action') = 'cart', 2000000, 1000000)
                    AS signal_micro,
                JSONExtractUInt(payload, 'visible_k') AS visible_k,
                if(exposed, JSONExtractArrayRaw(payload, 'items'), []) AS items,
                arrayMin(arrayMap(i -> JSONExtractUInt(i, 'pos'), items)) AS first_pos
            FROM interactions
            WHERE kind = 'presented' OR (kind = 'engaged' AND ref != '')
        )
        LEFT ARRAY JOIN items AS item
    )
)
WHERE field OR sensitive OR visible OR NOT exposed"""

_VALUES_FROM_STAGE = f"""SELECT space_id, attr, value, day,
    if(exposed, {level_of("person")}, 0) AS level,
    groupUniqArrayIf({CAP})(person, exposed) AS people,
    sumIf(weight_micro, exposed) AS exposure_micro,
    countIf(NOT exposed) AS events,
    sumIf(signal_micro, NOT exposed) AS signal_micro
FROM interaction_values
WHERE NOT sensitive AND (visible OR NOT exposed)
GROUP BY space_id, attr, value, day, level"""

_REF_VALUES_FROM_STAGE = """SELECT space_id, ref, attr, value, day, count() AS presentations
FROM interaction_values
WHERE exposed AND field AND NOT sensitive
GROUP BY space_id, ref, attr, value, day"""

_SENSITIVE_FROM_STAGE = """SELECT space_id, attr AS name, day,
    countIf(exposed) AS presented, countIf(NOT exposed) AS engaged
FROM interaction_values
WHERE sensitive
GROUP BY space_id, name, day"""

_VALUE_WEEKS = f"""SELECT space_id, attr, value, toMonday(day) AS week, level,
    {merged_people("people")} AS people, sum(exposure_micro) AS exposure_micro,
    sum(events) AS events, sum(signal_micro) AS signal_micro
FROM value_daily
GROUP BY space_id, attr, value, week, level"""
_REF_VALUES_WEEKS = """SELECT space_id, attr, ref, value, toMonday(day) AS week,
    sum(presentations) AS presentations
FROM ref_values_daily
GROUP BY space_id, attr, ref, value, week"""

SPLIT_VALUES = _SPLIT_VALUES
VALUES_FROM_STAGE = _VALUES_FROM_STAGE
REF_VALUES_FROM_STAGE = _REF_VALUES_FROM_STAGE
SENSITIVE_FROM_STAGE = _SENSITIVE_FROM_STAGE
VALUE_WEEKS = _VALUE_WEEKS
REF_VALUES_WEEKS = _REF_VALUES_WEEKS
