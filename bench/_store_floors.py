"""The store's own floors for ``bench/throughput.py``: a bare consumer that hands each
batch's raw JSON to ClickHouse, with no validation and no fan-out.

Two shapes, each on a chDB store of its own (a database in a throw-away directory, in
the benchmark's process, as the embedded store is in the worker's):

* ``split``: every batch into a ``Null`` landing table whose materialized views split it
  at insert into the worker's raw tables (turns, interactions from items and from turns,
  claims, constraints, outcomes, commands, idempotency keys, dead letters for what is not
  JSON), on the worker's own migrations, so the downstream summaries and the priors'
  views run too: the parts a batch makes are the worker's;
* ``one``: every batch into one MergeTree table (source columns and the raw bytes):
  one part per batch.

The raw bytes go in as a ``String`` column of a Native block (clickhouse-connect's
insert), not as a ``JSONEachRow`` body: a truncated line cannot swallow its batch-mates,
and a line that is not JSON lands as a dead letter. The profile handle is hashed
(``sipHash64``) before it reaches a column. A floor, not a second implementation: no
rule of ``core/`` runs, fields are extracted only as far as the tables' sort keys and
views need. Not a benchmark itself (the leading underscore).
"""

from __future__ import annotations

from turnstream.adapters.clickhouse.schema import apply_migrations
from turnstream.adapters.clickhouse.store import Store

__all__ = ["FLOORS", "LANDING_COLUMNS", "open_floor"]

#: What each batch inserts: the message's source and its bytes.
LANDING_COLUMNS = ["_topic", "_partition", "_offset", "raw"]

_LANDING = """(
    _topic LowCardinality(String), _partition UInt16, _offset UInt64, raw String
)"""

_ITEM = "isValidJSON(raw)"
_TYPE = "JSONExtractString(raw, 'type')"
_AT = "parseDateTime64BestEffortOrZero(JSONExtractString(raw, 'occurred_at'), 3, 'UTC')"
_SOURCE = "now64(3) AS ingested_at, _topic, _partition, _offset"
_ENVELOPE = (
    "JSONExtractString(raw, 'space_id') AS space_id, "
    "hex(sipHash64(JSONExtractRaw(raw, 'profile'))) AS profile_id, "
    "JSONExtractString(raw, 'source') AS source, "
    "JSONExtractString(raw, 'conversation_id') AS conversation_id, "
    "JSONExtractString(raw, 'session') AS session_id, "
    "JSONExtractString(raw, 'idempotency_key') AS idempotency_key, "
    f"{_AT} AS occurred_at"
)
_TURN = (
    "JSONExtractString(raw, 'space_id') AS space_id, "
    "JSONExtractString(raw, 'source') AS source, "
    "JSONExtractString(raw, 'agent') AS agent, "
    "JSONExtractString(raw, 'turn_id') AS turn_id, "
    f"{_AT} AS occurred_at"
)


def _interaction(json: str) -> str:
    return (
        f"JSONExtractString({json}, 'kind') AS kind, "
        f"JSONExtractString({json}, 'exposure_id') AS exposure_id, "
        f"JSONExtractString({json}, 'list_id') AS list_id, "
        f"JSONExtractString({json}, 'ref') AS ref, "
        f"JSONExtractString({json}, 'attr') AS attr, "
        f"{json} AS payload"
    )


#: (view, target table, SELECT ... FROM landing WHERE ...): the worker's raw tables.
_SPLIT = (
    ("f_turns", "turns",
     f"SELECT {_ENVELOPE}, JSONExtractString(raw, 'turn_id') AS turn_id, "
     "JSONExtractString(raw, 'agent') AS agent, "
     "JSONLength(raw, 'interactions') AS interactions, JSONLength(raw, 'claims') AS claims, "
     f"JSONLength(raw, 'constraints') AS constraints, {_SOURCE} "
     f"FROM landing WHERE {_ITEM} AND {_TYPE} = 'turn'"),
    ("f_interactions", "interactions",
     f"SELECT {_ENVELOPE}, {_interaction('JSONExtractRaw(raw, ' + repr('interaction') + ')')}, "
     f"{_SOURCE} FROM landing WHERE {_ITEM} AND {_TYPE} = 'interaction'"),
    ("f_turn_interactions", "interactions",
     f"SELECT {_ENVELOPE}, JSONExtractString(raw, 'turn_id') AS turn_id, {_interaction('i')}, "
     f"{_SOURCE} FROM landing ARRAY JOIN JSONExtractArrayRaw(raw, 'interactions') AS i "
     f"WHERE {_ITEM} AND {_TYPE} = 'turn'"),
    ("f_claims", "turn_claims",
     f"SELECT {_TURN}, JSONExtractString(c, 'category') AS category, "
     "JSONExtractString(c, 'verdict') AS verdict, JSONExtractString(c, 'action') AS action, "
     f"JSONExtractString(c, 'value') AS value, {_SOURCE} "
     "FROM landing ARRAY JOIN JSONExtractArrayRaw(raw, 'claims') AS c "
     f"WHERE {_ITEM} AND {_TYPE} = 'turn'"),
    ("f_constraints", "turn_constraints",
     f"SELECT {_TURN}, JSONExtractString(c, 'tool') AS tool, "
     "JSONExtractUInt(c, 'sent') AS sent, JSONExtractUInt(c, 'violations') AS violations, "
     f"{_SOURCE} FROM landing ARRAY JOIN JSONExtractArrayRaw(raw, 'constraints') AS c "
     f"WHERE {_ITEM} AND {_TYPE} = 'turn'"),
    ("f_outcomes", "outcomes",
     f"SELECT {_ENVELOPE}, JSONExtractString(raw, 'outcome') AS outcome, "
     "JSONExtractString(raw, 'ref') AS ref, JSONExtractString(raw, 'order_id') AS order_id, "
     f"{_SOURCE} FROM landing WHERE {_ITEM} AND {_TYPE} = 'outcome'"),
    ("f_commands", "commands",
     f"SELECT {_ENVELOPE}, JSONExtractString(raw, 'command') AS command, {_SOURCE} "
     f"FROM landing WHERE {_ITEM} AND {_TYPE} = 'command'"),
    ("f_keys", "idempotency_keys",
     "SELECT concat(JSONExtractString(raw, 'space_id'), '\\x1f', "
     "JSONExtractString(raw, 'idempotency_key')) AS dedup_key, "
     f"JSONExtractString(raw, 'space_id') AS space_id, {_SOURCE} FROM landing"),
    ("f_dead_letters", "dead_letters",
     "SELECT 'invalid' AS reason, hex(SHA256(raw)) AS raw_sha256, length(raw) AS raw_bytes, "
     f"{_SOURCE} FROM landing WHERE NOT {_ITEM}"),
)  # fmt: skip

#: The floors by name: what each prints, and the statements that make its store.
FLOORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "split": (
        "raw JSON split into the raw tables by materialized views at insert",
        (
            f"CREATE TABLE IF NOT EXISTS landing {_LANDING} ENGINE = Null",
            *(
                f"CREATE MATERIALIZED VIEW IF NOT EXISTS {view} TO {table} AS {select}"
                for view, table, select in _SPLIT
            ),
        ),
    ),
    "one": (
        "raw JSON landed in one table",
        (f"CREATE TABLE IF NOT EXISTS landing {_LANDING} ENGINE = MergeTree ORDER BY tuple()",),
    ),
}


def open_floor(path: str, name: str) -> Store:
    """A migrated chDB store at ``path``, database ``floor_<name>``, ready for inserts
    into ``landing`` (:data:`LANDING_COLUMNS`)."""
    store = Store(f"chdb://{path}", f"floor_{name}")
    if name == "split":
        apply_migrations(store)
    for statement in FLOORS[name][1]:
        store.command(statement)
    return store
