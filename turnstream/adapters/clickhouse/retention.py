"""Keeping the retention promise of ``tables.RETENTION`` in the store: fold the
derivation states whose evidence aged out, then delete what any table holds past its
window (TTL removes it at a merge; this does not wait for one). Blocking."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from turnstream.adapters.clickhouse.erase_tombstones import unless_erased
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.events import format_time
from turnstream.core.derivation.evidence import to_micro
from turnstream.core.derivation.state import ProfileState
from turnstream.core.derivation.window import evidence_from, expire
from turnstream.core.tables import RETENTION
from turnstream.models.object_types import ObjectTypes

__all__ = ["Folded", "enforce_retention", "fold_states"]

#: States folded per page (one pass of the statements in the store, or one read and one
#: insert in Python): one person's state is ~1-70 kB of JSON.
_BATCH = 1000


@dataclass
class Folded:
    """What :func:`enforce_retention` did."""

    states: int = 0
    signals: int = 0
    pages: int = 0
    deleted: dict[str, int] = field(default_factory=dict)
    #: Pages of people the fold read and wrote (``fold_states``' ``page`` each).
    pages_read: int = 0
    #: States settled by ``expire`` (all of them unless ``in_store``; else those ``_ODD`` names).
    in_python: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"states": self.states, "signals": self.signals, "pages": self.pages,
                "deleted": dict(self.deleted)}  # fmt: skip


def _cut(now: datetime, days: int) -> datetime:
    return now - timedelta(days=days)


def _states(store: Store, keys: list[Any]) -> list[Any]:
    """The newest state and version of each ``(space_id, profile_id)`` of ``keys``."""
    by_space: dict[str, list[str]] = {}
    for space_id, profile_id in keys:
        by_space.setdefault(space_id, []).append(profile_id)
    out: list[Any] = []
    for space_id, ids in by_space.items():
        out += store.query(
            "SELECT space_id, profile_id, argMax(state, version), max(version) "
            "FROM signal_state WHERE space_id = {space:String} "
            "AND profile_id IN {ids:Array(String)} GROUP BY space_id, profile_id",
            {"space": space_id, "ids": ids},
        ).rows
    return out


def fold_states(
    store: Store,
    now: datetime,
    config: SignalsConfig,
    folded: Folded,
    page: int = _BATCH,
    *,
    in_store: bool = True,
    types_for: Callable[[str], ObjectTypes | None] = lambda _space: None,
) -> None:
    """Settle and drop the evidence older than the raw window (by ``now``) of every state
    that holds some, ``page`` people at a time, writing each again with the next version,
    then delete the rows that held it. A state the engine rewrites meanwhile has a newer
    version and stays.

    ``in_store``: settled by SQL in the store (``_FOLD_SQL``), but for the states ``_ODD``,
    ``_ODD_SIZE`` and :func:`_odd_states` name; else every state read and settled by
    ``expire`` (the reference). Each space's states are settled by ``config`` with the
    space's types document (``types_for``) added, as derivation counts them
    (``SignalsConfig.for_space``)."""
    cut = _cut(now, config.raw_window_days)
    # The keys first (ids only), then the states a page of people at a time through the
    # primary key: a million idle people held ~70 GB of JSON at once.
    keys = store.query(
        "SELECT DISTINCT space_id, profile_id FROM signal_state "
        "WHERE evidence_from < {cut:DateTime64(3, 'UTC')} ORDER BY space_id, profile_id",
        {"cut": cut},
    ).rows
    if not keys:
        return
    newest = 0
    configs: dict[str, SignalsConfig] = {}
    for start in range(0, len(keys), page):
        by_space: dict[str, list[Any]] = {}
        for key in keys[start : start + page]:
            by_space.setdefault(key[0], []).append(key)
        for space_id, some in by_space.items():
            if space_id not in configs:
                configs[space_id] = config.for_space(types_for(space_id))
            space_config = configs[space_id]
            if in_store:
                newest = max(newest, _fold_in_store(store, some, cut, space_config, folded))
            else:
                states = _states(store, some)
                newest = max(newest, _fold_in_python(store, states, cut, space_config, folded))
        folded.pages_read += 1
    # The session's tables hold the last page until emptied.
    for name, columns in _STAGES.items() if in_store else [(_WRITTEN, _STAGES[_WRITTEN])]:
        store.stage(name, columns, [])
    # Only rows read here (versions up to the newest read) and past the cut: the folded
    # rows are newer and hold nothing past it.
    _delete(store, "signal_state", "evidence_from < {cut:DateTime64(3, 'UTC')} "
            "AND version <= {newest:UInt64}", {"cut": cut, "newest": newest}, folded)  # fmt: skip


def _fold_in_python(
    store: Store, states: list[Any], cut: datetime, config: SignalsConfig, folded: Folded
) -> int:
    """Settle ``states`` (space, profile, JSON, version) with ``expire`` and write them;
    the newest version read."""
    rows, newest = [], 0
    for space_id, profile_id, text, version in states:
        state = ProfileState.from_dict(json.loads(text))
        done = expire(state, cut, config)
        folded.signals += done.signals
        folded.pages += done.pages
        body = json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)
        rows.append([profile_id, space_id, body, version + 1, evidence_from(state)])
        newest = max(newest, version)
    if rows:
        store.stage(_WRITTEN, _STAGES[_WRITTEN], rows)
        store.command(
            f"INSERT INTO signal_state ({', '.join(_STATE_COLUMNS)}) "
            + _unless_erased(f"SELECT * FROM {_WRITTEN}"),
            _SETTINGS,
        )
    folded.states += len(rows)
    folded.in_python += len(rows)
    return newest


def _fold_in_store(
    store: Store, keys: list[Any], cut: datetime, config: SignalsConfig, folded: Folded
) -> int:
    """Settle the states of ``keys`` (one space's, ``config`` its config) in the store
    (``_FOLD_SQL``) and write them; those :func:`_odd_states` names by ``expire``. The
    newest version read."""
    for name, columns in _STAGES.items():
        store.stage(name, columns, keys if name == "_fold_keys" else [])
    parameters = {
        "cut": format_time(cut),
        "odd": _odd_states(config),
        "sensitive": sorted(config.sensitive),
        "size_names": _size_names(config),
        "size_fields": sorted(config.size_fields),
        "actions": list(config.engagement_weights),
        "engaged": [to_micro(w) for w in config.engagement_weights.values()],
        "like": to_micro(config.like_weight),
        "dislike": to_micro(config.dislike_weight),
        "outcomes": list(config.outcome_weights),
        "outcome": [to_micro(w) for w in config.outcome_weights.values()],
        "n": config.max_origin_events,
    }
    for sql in (*_FOLD_SQL, *_STATS_SQL, _WRITE_SQL):
        used = {k: v for k, v in parameters.items() if "{" + k + ":" in sql}
        store.command(sql, _SETTINGS, used)
    states, newest, signals, pages = store.query(
        "SELECT countIf(py = 0), max(v), (SELECT count() FROM _fold_signals), "
        "(SELECT count() FROM _fold_pages WHERE occurred < {cut:String}) FROM _fold_states",
        {"cut": parameters["cut"]},
    ).rows[0]
    folded.states += int(states)
    folded.signals += int(signals)
    folded.pages += int(pages)
    odd = store.query("SELECT sp, pid, s, v FROM _fold_states WHERE py = 1").rows
    _fold_in_python(store, odd, cut, config, folded)
    return int(newest or 0)


def _delete(
    store: Store, table: str, where: str, parameters: dict[str, Any], folded: Folded
) -> None:
    count = int(store.scalar(f"SELECT count() FROM `{table}` WHERE {where}", parameters) or 0)
    if count:
        store.command(f"ALTER TABLE `{table}` DELETE WHERE {where}", {"mutations_sync": 2},
                      parameters)  # fmt: skip
        folded.deleted[table] = folded.deleted.get(table, 0) + count


def enforce_retention(
    store: Store,
    now: datetime,
    config: SignalsConfig,
    types_for: Callable[[str], ObjectTypes | None] = lambda _space: None,
) -> Folded:
    """Fold the states (each space's by ``config`` and its types document, ``types_for``),
    then delete every row past its table's window (a mutation only where there is one)."""
    folded = Folded()
    fold_states(store, now, config, folded, types_for=types_for)
    tables = {name for (name,) in store.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase()").rows}  # fmt: skip
    for table, promise in RETENTION.items():
        if promise.days is None or promise.dated_by is None or table not in tables:
            continue
        if table == "signal_state":
            continue  # folded above: its rows are states, not evidence to delete whole
        column = promise.dated_by
        _delete(store, table, f"`{column}` < {{cut:DateTime64(3, 'UTC')}}",
                {"cut": _cut(now, promise.days)}, folded)  # fmt: skip
    return folded


# -- the set-based fold -------------------------------------------------------------------
#
# The settling of ``core/derivation/window.expire`` as statements over a page of states,
# each an ``INSERT ... SELECT`` into a session table (``Store.stage``), the last one into
# ``signal_state``. Crediting is order-free (integer sums, set unions, the latest N keys by
# time, the latest time), so rows grouped by target give what ``state.settle`` gives one
# signal at a time. Times are compared as the strings ``format_time`` writes (UTC ISO,
# fixed width but for an absent fraction, where '+' < '.': string order is time order).
# What is constant here is SQL text; the cut, the weights, the sensitive names and the
# size fields are parameters. Values whose JSON the store would read back differently go
# to ``expire`` (see ``_ODD``).

#: A state holding, outside its inferences (copied verbatim), a number that is not a small
#: integer (``100.0``, ``1e-07``, NaN, 19 digits and more) as a member's value or an array's
#: element: the store parses ``100.0`` as ``100`` and a key is ``value_key``'s ``"100.0"``,
#: so such a state is settled in Python. Matches inside strings only send more states
#: there (a time's ``:00.5`` does not match: a member's value follows ``":``).
_ODD = r'(?:":|[,\[])-?(?:[0-9]+[.eE]|[0-9]{19}|NaN|Infinity)'

#: An outcome's ``attrs`` up to the member whose name follows (the members before it
#: skipped: a string, or a value without ``,``, ``}`` or ``"``).
_ATTRS = r'"attrs":\{(?:"(?:[^"\\]|\\.)*":(?:"(?:[^"\\]|\\.)*"|[^,}"]*),)*'

#: A size (the value of an outcome's ``attrs`` member that names a size field) that
#: ``size_key`` would spell otherwise (`` m``, ``m``, ``40,0``, ``40.50``, ``+40``, two
#: spaces) or may (an escape but ``\"`` and ``\\``: white space, a control or a character
#: past ASCII): its state is settled in Python too, the SQL counting a size by its string
#: as it is.
_ODD_SIZE = (
    r'"(?:'
    r'(?:[ !#-\[\]-~]|\\["\\])*(?:\\[^"\\]|[^ -~])'  # an escape, or past ASCII
    r'| |(?:[^"\\]|\\["\\])*(?: "|  )'  # space first, last or twice
    r'|(?:0|[1-9][0-9]{0,12})(?:,[0-9]{1,2}|\.[0-9]?0)"'  # 40,5 40,0 40.0 40.50
    r"|[+-][0-9]"  # a sign: +40 is 40
    r'|[2-9EGLMPSX]*[eglmpsx][2-9EGLMPSXeglmpsx]*")'  # a letter size not in capitals
)


def _size_names(config: SignalsConfig) -> list[str]:
    """The ``attrs`` members an outcome may give a size by in a space (``config`` its
    config): ``size`` and the field of each of ``config.size_fields`` (``shoe_size``);
    which of them counts for a ref is its type's (``_fold_credit``)."""
    return sorted({"size"} | {attr.partition(".")[2] for attr in config.size_fields} - {""})


def _odd_states(config: SignalsConfig) -> str:
    """The pattern of the states of a space (``config`` its config) settled in Python:
    ``_ODD``, and an ``_ODD_SIZE`` of any of the space's size members
    (:func:`_size_names`: ``attrs.size``, ``attrs.shoe_size``)."""
    keys = "|".join(re.escape(json.dumps(name)) for name in _size_names(config))
    return f"{_ODD}|{_ATTRS}(?:{keys}):{_ODD_SIZE}"


#: ``value_key`` of a raw JSON scalar that is not odd: a string unquoted, else as written.
_VKEY = "multiIf(JSONType({x}) = 'String', JSONExtractString({x}), {x})"

#: The states settled in Python, written from here (:func:`_unless_erased`).
_WRITTEN = "_fold_written"
#: A ``signal_state`` row as the fold writes it: its columns and their types.
_STATE_ROW = [
    ("profile_id", "String"),
    ("space_id", "String"),
    ("state", "String"),
    ("version", "UInt64"),
    ("evidence_from", "Nullable(DateTime64(3, 'UTC'))"),
]
_STATE_COLUMNS = tuple(c for c, _ in _STATE_ROW)
#: When the newest event of a written state occurred.
_NEWEST = (
    "parseDateTime64BestEffortOrZero(JSONExtractString(w.state, 'newest_occurred_at'), 6, 'UTC')"
)


def _unless_erased(states: str) -> str:
    """The folded ``states`` but those of a person erased since the fold read them."""
    return unless_erased(states, _STATE_COLUMNS, _NEWEST)


_STAGES: dict[str, list[tuple[str, str]]] = {
    "_fold_keys": [("space_id", "String"), ("profile_id", "String")],
    _WRITTEN: _STATE_ROW,
    "_fold_states": [("sp", "String"), ("pid", "String"), ("v", "UInt64"), ("py", "UInt8"),
                     ("buckets", "String"), ("head", "String"), ("verbatim", "String"),
                     ("mid", "String"), ("signals", "String"), ("tail", "String"),
                     ("s", "String")],
    "_fold_buckets": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                      ("braw", "String")],
    "_fold_pages": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                    ("eid", "String"), ("pg", "Int64"), ("method", "String"),
                    ("delivered", "String"), ("occurred", "String"), ("raw", "String")],
    "_fold_items": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                    ("eid", "String"), ("pg", "Int64"), ("pos", "Int64"), ("ref", "String"),
                    ("delivered", "String"), ("method", "String"),
                    ("shown", "Array(Tuple(String, String))"), ("hidden", "Array(String)")],
    "_fold_signals": [("sp", "String"), ("pid", "String"), ("key", "String"),
                      ("name", "String"), ("for_", "String"), ("session", "String"),
                      ("at", "String"), ("ref", "String"), ("action", "String"),
                      ("like", "UInt8"), ("has_fields", "UInt8"), ("fields", "Array(String)"),
                      ("outcome", "String"), ("tok", "UInt8"), ("teid", "String"),
                      ("tpos", "Int64"), ("pfor", "String"),
                      ("attrs", "Array(Tuple(String, String))"), ("reason", "String")],
    "_fold_credit": [("sp", "String"), ("pid", "String"), ("key", "String"),
                     ("name", "String"), ("bucket", "String"), ("session", "String"),
                     ("at", "String"), ("ref", "String"), ("rtype", "String"),
                     ("sens", "UInt8"), ("micro", "Int64"), ("has_fields", "UInt8"),
                     ("fields", "Array(String)"), ("lhit", "UInt8"), ("lb", "String"),
                     ("lpg", "Int64"), ("teid", "String"), ("tpos", "Int64"),
                     ("sizes", "Array(Tuple(String, String))"), ("size_delta", "Int64"),
                     ("sizable", "UInt8")],
    "_fold_pick": [("sp", "String"), ("pid", "String"), ("key", "String"),
                   ("shown", "Array(Tuple(String, String))"), ("hidden", "Array(String)")],
    "_fold_settled": [("sp", "String"), ("pid", "String"), ("key", "String"),
                      ("name", "String"), ("bucket", "String"), ("session", "String"),
                      ("at", "String"), ("ref", "String"), ("rtype", "String"),
                      ("sens", "UInt8"), ("micro", "Int64"), ("found", "UInt8"),
                      ("shown", "Array(Tuple(String, String))"), ("hidden", "Array(String)"),
                      ("sizes", "Array(Tuple(String, String))"),
                      ("size_delta", "Int64"), ("sizable", "UInt8")],
    "_fold_counts": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                     ("which", "String"), ("name", "String"), ("n", "Int64")],
    "_fold_refs": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                   ("ref", "String"), ("json", "String")],
    "_fold_values": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                     ("attr", "String"), ("vkey", "String"), ("json", "String")],
    "_fold_sizes": [("sp", "String"), ("pid", "String"), ("bucket", "String"),
                    ("attr", "String"), ("vkey", "String"), ("json", "String")],
}  # fmt: skip

#: Plain joins: a server profile's join_use_nulls would turn the misses into NULLs.
_SETTINGS = {"join_use_nulls": 0}
_CUT = "{cut:String}"
_KEEP_PAGE = f"occurred >= {_CUT}"

_FOLD_SQL: tuple[str, ...] = (
    # The newest state of each person of the page; ``py``: settled by ``expire`` instead.
    # Each state cut at its top-level members (``json.dumps(sort_keys=True)``'s order:
    # buckets, erased_through, folded | inferences | max_seen .. profile_id | signals |
    # space_id, tombstones), no member parsed twice and the unchanged ones copied as they
    # are. Each cut is where no string can hold its needle unescaped and no member in
    # between can hold it as a key (the buckets can: their last one is the cut).
    """INSERT INTO _fold_states
SELECT sp, pid, v, py,
    if(py, '', substring(s, 12, e - 12)),
    if(py, '', concat('{', substring(s, e + 1, i - e - 1), '}')),
    if(py, '', substring(s, i, m - i)),
    if(py, '', concat('{', substring(s, m + 1, g - m - 1), '}')),
    if(py, '', substring(s, g + 11, a - g - 11)),
    if(py, '', substring(s, a)),
    if(py, s, '')
FROM (
SELECT sp, pid, s, v, i, m, e, g, a,
    NOT (isValidJSON(s) AND startsWith(s, '{"buckets":{') AND i > 0 AND m > i AND e > 11
         AND g > m AND a > g
         AND NOT match(concat(substring(s, 1, i), substring(s, m)), {odd:String})) AS py
FROM (
    SELECT sp, pid, s, v, position(s, ',"inferences":[') AS i,
        if(i = 0, 0, position(s, ',"max_seen":{', i)) AS m,
        if(i = 0, 0, i - position(reverse(substring(s, 1, i - 1)),
                                  reverse(',"erased_through":')) - 17) AS e,
        if(m = 0, 0, position(s, ',"signals":[', m)) AS g,
        length(s) - position(reverse(s), reverse(',"space_id":')) - 10 AS a
    FROM (
        SELECT space_id AS sp, profile_id AS pid, argMax(state, version) AS s,
            max(version) AS v
        FROM signal_state
        WHERE (space_id, profile_id) IN (SELECT space_id, profile_id FROM _fold_keys)
        GROUP BY space_id, profile_id
    )
))""",
    """INSERT INTO _fold_buckets
SELECT sp, pid, b.1, b.2 FROM _fold_states
ARRAY JOIN JSONExtractKeysAndValuesRaw(buckets) AS b WHERE py = 0""",
    """INSERT INTO _fold_pages
SELECT sp, pid, bucket, JSONExtractString(p, 'exposure_id'), JSONExtractInt(p, 'page'),
    JSONExtractString(p, 'method'), JSONExtractString(p, 'delivered_at'),
    JSONExtractString(p, 'occurred_at'), p
FROM _fold_buckets ARRAY JOIN JSONExtractArrayRaw(braw, 'pages') AS p""",
    f"""INSERT INTO _fold_items
SELECT sp, pid, bucket, eid, pg, JSONExtractInt(x, 'pos'), JSONExtractString(x, 'ref'),
    delivered, method,
    arrayMap(kv -> (kv.1, {_VKEY.format(x="kv.2")}), JSONExtractKeysAndValuesRaw(x, 'shown')),
    JSONExtract(x, 'hidden', 'Array(String)')
FROM _fold_pages ARRAY JOIN JSONExtractArrayRaw(raw, 'items') AS x""",
    # The engagements, feedback and outcomes that occurred before the cut.
    f"""INSERT INTO _fold_signals
SELECT sp, pid, JSONExtractString(e, 'idempotency_key'),
    if(JSONExtractString(e, 'kind') = 'outcome', 'outcome',
       JSONExtractString(e, 'payload', 'kind')),
    JSONExtractString(e, 'for'), JSONExtractString(e, 'session'),
    JSONExtractString(e, 'occurred_at') AS at,
    JSONExtractString(e, 'payload', 'ref'), JSONExtractString(e, 'payload', 'action'),
    JSONExtractString(e, 'payload', 'polarity') = 'like',
    JSONType(e, 'payload', 'fields') = 'Array',
    JSONExtract(e, 'payload', 'fields', 'Array(String)'),
    JSONExtractString(e, 'payload', 'outcome'),
    length(t) = 4 AND t[1] = 'nx1' AND match(t[3], '^[0-9]+$'), t[2], toInt64OrZero(t[3]),
    JSONExtractString(e, 'payload', 'for'),
    arrayMap(kv -> (kv.1, {_VKEY.format(x="kv.2")}),
             arrayFilter(kv -> has({{size_names:Array(String)}}, kv.1)
                               AND JSONType(kv.2) NOT IN ('Null', 'Bool'),
                         JSONExtractKeysAndValuesRaw(e, 'payload', 'attrs'))),
    JSONExtractString(e, 'payload', 'reason')
FROM _fold_states
ARRAY JOIN JSONExtractArrayRaw(signals) AS e
ARRAY JOIN [splitByChar('.', JSONExtractString(e, 'payload', 'exposure_token'))] AS t
WHERE py = 0 AND at < {_CUT}""",
    # Where each credits (state._outcome's bucket and token line), its weight, what the
    # sensitive names make of it, and its sizes: ``(type.field, size)`` of each ``attrs``
    # member that is ``size`` or one of the ref's type's size fields (state._size).
    """INSERT INTO _fold_credit
SELECT s.sp, s.pid, s.key, s.name,
    multiIf(s.name = 'outcome' AND s.pfor != '', s.pfor,
            s.name = 'outcome' AND s.tok AND l.hit = 1, l.line.1, s.for_),
    s.session, s.at, s.ref,
    if(position(s.ref, ':') > 0, substring(s.ref, 1, position(s.ref, ':') - 1), s.ref) AS rtype,
    has({sensitive:Array(String)}, rtype),
    multiIf(s.name = 'engaged',
            arrayElement({engaged:Array(Int64)}, indexOf({actions:Array(String)}, s.action)),
            s.name = 'feedback', if(s.like, {like:Int64}, {dislike:Int64}),
            arrayElement({outcome:Array(Int64)}, indexOf({outcomes:Array(String)}, s.outcome))),
    s.has_fields,
    arrayMap(n -> if(startsWith(n, concat(rtype, '.')), substring(n, length(rtype) + 2), n),
             s.fields),
    s.name = 'outcome' AND s.tok AND l.hit = 1, l.line.1, l.line.2, s.teid, s.tpos,
    arrayMap(x -> (concat(rtype, '.', x.1), x.2), arrayFilter(
        x -> x.1 = 'size' OR has({size_fields:Array(String)}, concat(rtype, '.', x.1)),
        s.attrs)) AS sizes,
    multiIf(s.outcome IN ('purchase', 'kept'), 1,
            s.outcome = 'return' AND s.reason = 'returned_for_size', -1, 0) AS delta,
    s.name = 'outcome' AND notEmpty(sizes) AND delta != 0
FROM _fold_signals AS s
LEFT JOIN (
    SELECT sp, pid, eid, pos, 1 AS hit, min((bucket, pg)) AS line FROM _fold_items
    WHERE method != 'tool_result' GROUP BY sp, pid, eid, pos
) AS l ON s.sp = l.sp AND s.pid = l.pid AND s.teid = l.eid AND s.tpos = l.pos""",
    # The item each credits: on its token's line, else the latest presentation of its ref
    # in its bucket delivered by then (rank: delivery, exposure, page, position).
    """INSERT INTO _fold_pick
SELECT sp, pid, key, argMax((shown, hidden), (prio, delivered, eid, pg, pos)).1,
    argMax((shown, hidden), (prio, delivered, eid, pg, pos)).2
FROM (
    SELECT c.sp AS sp, c.pid AS pid, c.key AS key, 1 AS prio, i.delivered AS delivered,
        i.eid AS eid, i.pg AS pg, i.pos AS pos, i.shown AS shown, i.hidden AS hidden
    FROM (SELECT * FROM _fold_credit WHERE lhit) AS c
    INNER JOIN (
        SELECT * FROM _fold_items
        WHERE (sp, pid, eid) IN (SELECT sp, pid, teid FROM _fold_credit WHERE lhit)
    ) AS i ON c.sp = i.sp AND c.pid = i.pid AND c.lb = i.bucket
        AND c.teid = i.eid AND c.lpg = i.pg AND c.tpos = i.pos AND c.ref = i.ref
    UNION ALL
    SELECT c.sp, c.pid, c.key, 0, i.delivered, i.eid, i.pg, i.pos, i.shown, i.hidden
    FROM _fold_credit AS c
    INNER JOIN (
        SELECT * FROM _fold_items
        WHERE (sp, pid, bucket, ref) IN (SELECT sp, pid, bucket, ref FROM _fold_credit)
    ) AS i ON c.sp = i.sp AND c.pid = i.pid AND c.bucket = i.bucket
        AND c.ref = i.ref
    WHERE i.delivered <= c.at
)
GROUP BY sp, pid, key""",
    """INSERT INTO _fold_settled
SELECT c.sp, c.pid, c.key, c.name, c.bucket, c.session, c.at, c.ref, c.rtype, c.sens,
    c.micro, p.found = 1,
    if(c.name = 'feedback' AND c.has_fields, arrayFilter(x -> has(c.fields, x.1), p.shown),
       p.shown),
    if(c.name = 'feedback' AND c.has_fields,
       arrayFilter(a -> has(c.fields, substring(a, position(a, '.') + 1)), p.hidden),
       p.hidden),
    c.sizes, c.size_delta, c.sizable AND NOT c.sens
FROM _fold_credit AS c
LEFT JOIN (SELECT *, 1 AS found FROM _fold_pick) AS p
    ON c.sp = p.sp AND c.pid = p.pid AND c.key = p.key""",
    # Counts: the outcomes, and the sensitive refs, attributes and sizes.
    """INSERT INTO _fold_counts
SELECT sp, pid, bucket, x.1, x.2, sum(x.3) FROM (
    SELECT sp, pid, bucket, arrayConcat(
        arrayMap(kv -> ('event_counts', kv.1, kv.2),
                 JSONExtractKeysAndValues(braw, 'event_counts', 'Int64')),
        arrayMap(kv -> ('sensitive_counts', kv.1, kv.2),
                 JSONExtractKeysAndValues(braw, 'sensitive_counts', 'Int64'))) AS xs
    FROM _fold_buckets
    UNION ALL
    SELECT sp, pid, bucket, arrayConcat(
        if(name = 'outcome', [('event_counts', 'outcome', toInt64(1))], []),
        if(sens, [('sensitive_counts', rtype, toInt64(1))], []),
        if(NOT sens AND found, arrayMap(a -> ('sensitive_counts', a, toInt64(1)), hidden), []),
        if(sizable, arrayMap(x -> ('sensitive_counts', x.1, toInt64(1)),
                             arrayFilter(x -> has({sensitive:Array(String)}, x.1), sizes)),
           []))
    FROM _fold_settled
)
ARRAY JOIN xs AS x
GROUP BY sp, pid, bucket, x.1, x.2""",
    f"""INSERT INTO _fold_refs
SELECT sp, pid, bucket, ref,
    if(d = 0 AND keep, raw, concat(
        '{{"engaged_keys":', toJSONString(
            arraySlice(ek, greatest(1, length(ek) - {{n:Int64}} + 1))),
        ',"engagement_micro":', toString(JSONExtractInt(raw, 'engagement_micro') + em),
        ',"engagements":', toString(JSONExtractInt(raw, 'engagements') + en),
        ',"exposure_keys":', if(raw = '', '[]', JSONExtractRaw(raw, 'exposure_keys')),
        ',"exposure_micro":', toString(JSONExtractInt(raw, 'exposure_micro')),
        ',"exposures":', toString(JSONExtractInt(raw, 'exposures')),
        ',"feedback":', toString(JSONExtractInt(raw, 'feedback') + fb),
        ',"latest":', if(keep, JSONExtractRaw(raw, 'latest'), 'null'),
        ',"outcomes":', toString(JSONExtractInt(raw, 'outcomes') + oc),
        ',"sessions":', toJSONString(arraySort(arrayDistinct(arrayConcat(
            JSONExtract(raw, 'sessions', 'Array(String)'), ss)))),
        '}}'))
FROM (
    SELECT sp, pid, bucket, ref, raw, d, en, em, fb, oc, ss,
        arraySort(arrayDistinct(arrayConcat(
            JSONExtract(raw, 'engaged_keys', 'Array(Tuple(String, String))'), eks))) AS ek,
        JSONType(raw, 'latest') = 'Array'
            AND (sp, pid, bucket, JSONExtractString(raw, 'latest', 1),
                 JSONExtractInt(raw, 'latest', 2))
            IN (SELECT sp, pid, bucket, eid, pg FROM _fold_pages WHERE {_KEEP_PAGE}) AS keep
    FROM (
        SELECT sp, pid, bucket, r.1 AS ref, r.2 AS raw FROM _fold_buckets
        ARRAY JOIN JSONExtractKeysAndValuesRaw(braw, 'refs') AS r
    ) AS o
    FULL OUTER JOIN (
        SELECT sp, pid, bucket, ref, 1 AS d, countIf(name = 'engaged') AS en,
            sumIf(micro, name = 'engaged') AS em, countIf(name = 'feedback') AS fb,
            countIf(name = 'outcome') AS oc, groupArrayIf(session, name = 'engaged') AS ss,
            groupArrayIf((at, key), name = 'engaged') AS eks
        FROM _fold_settled WHERE NOT sens GROUP BY sp, pid, bucket, ref
    ) AS n USING (sp, pid, bucket, ref)
)""",
)


def _stats_sql(table: str, source: str, deltas: str, fields: str) -> str:
    """Merge the value (or size) stats of the buckets with the settled signals' deltas."""
    origin = "arraySort(arrayDistinct(arrayConcat(JSONExtract(raw, 'origin', " \
             "'Array(Tuple(String, String))'), ok)))"  # fmt: skip
    last = "greatest(JSONExtractString(raw, 'last_occurred_at'), lt)"
    parts = {
        "events": "toString(JSONExtractInt(raw, 'events') + ev)",
        "exposure_micro": "toString(JSONExtractInt(raw, 'exposure_micro'))",
        "last_occurred_at": f"if({last} = '', 'null', toJSONString({last}))",
        "net": "toString(JSONExtractInt(raw, 'net') + nt)",
        "origin": f"toJSONString(arraySlice({origin}, "
                  f"greatest(1, length({origin}) - {{n:Int64}} + 1)))",
        "sessions": "toJSONString(arraySort(arrayDistinct(arrayConcat("
                    "JSONExtract(raw, 'sessions', 'Array(String)'), ss))))",
        "signal_micro": "toString(JSONExtractInt(raw, 'signal_micro') + sm)",
    }  # fmt: skip
    body = ", ',', ".join(f"'\"{name}\":', {parts[name]}" for name in fields.split())
    return f"""INSERT INTO {table}
SELECT sp, pid, bucket, attr, vkey, if(d = 0, raw, concat('{{', {body}, '}}'))
FROM (
    SELECT sp, pid, bucket, a.1 AS attr, v.1 AS vkey, v.2 AS raw FROM _fold_buckets
    ARRAY JOIN JSONExtractKeysAndValuesRaw(braw, '{source}') AS a
    ARRAY JOIN JSONExtractKeysAndValuesRaw(a.2) AS v
) AS o
FULL OUTER JOIN (
    SELECT sp, pid, bucket, attr, vkey, 1 AS d, sum(micro) AS sm, sum(size_delta) AS nt,
        count() AS ev, groupArray(session) AS ss, groupArray((at, key)) AS ok, max(at) AS lt
    FROM {deltas}
    GROUP BY sp, pid, bucket, attr, vkey
) AS n USING (sp, pid, bucket, attr, vkey)"""


_STATS_SQL = (
    _stats_sql(
        "_fold_values", "values",
        "(SELECT *, concat(rtype, '.', x.1) AS attr, x.2 AS vkey FROM _fold_settled "
        "ARRAY JOIN shown AS x WHERE NOT sens AND found AND micro != 0)",
        "events exposure_micro last_occurred_at origin sessions signal_micro",
    ),
    _stats_sql(
        "_fold_sizes", "sizes",
        "(SELECT *, x.1 AS attr, x.2 AS vkey FROM _fold_settled ARRAY JOIN sizes AS x "
        "WHERE sizable AND NOT has({sensitive:Array(String)}, x.1))",
        "events last_occurred_at net origin sessions",
    ),
)  # fmt: skip


def _object(pairs: str) -> str:
    """A JSON object from an array of (key, JSON text) pairs, by key."""
    return (f"concat('{{', arrayStringConcat(arrayMap(x -> concat(toJSONString(x.1), ':', x.2), "
            f"arraySort({pairs})), ','), '}}')")  # fmt: skip


def _grouped(table: str) -> str:
    """A bucket's values (or sizes) object, per attr then value."""
    return f"""SELECT sp, pid, bucket, {_object("groupArray((attr, o))")} AS j FROM (
    SELECT sp, pid, bucket, attr, {_object("groupArray((vkey, json))")} AS o FROM {table}
    GROUP BY sp, pid, bucket, attr
) GROUP BY sp, pid, bucket"""


def _counts(which: str) -> str:
    return (f"SELECT sp, pid, bucket, {_object('groupArray((name, toString(n)))')} AS j "
            f"FROM _fold_counts WHERE which = '{which}' GROUP BY sp, pid, bucket")  # fmt: skip


_BUCKETS_SQL = f"""SELECT sp, pid, {_object("groupArray((bucket, j))")} AS j FROM (
SELECT k.sp AS sp, k.pid AS pid, k.bucket AS bucket, concat(
    '{{"event_counts":', if(ec.j = '', '{{}}', ec.j),
    ',"last_occurred_at":', if(b.braw = '', 'null', JSONExtractRaw(b.braw, 'last_occurred_at')),
    ',"pages":', if(p.j = '', '[]', p.j),
    ',"refs":', if(r.j = '', '{{}}', r.j),
    ',"sensitive_counts":', if(sc.j = '', '{{}}', sc.j),
    ',"sizes":', if(sz.j = '', '{{}}', sz.j),
    ',"values":', if(va.j = '', '{{}}', va.j), '}}') AS j
FROM (
    SELECT sp, pid, bucket FROM _fold_buckets
    UNION DISTINCT SELECT sp, pid, bucket FROM _fold_settled
) AS k
LEFT JOIN _fold_buckets AS b USING (sp, pid, bucket)
LEFT JOIN (
    SELECT sp, pid, bucket,
        concat('[', arrayStringConcat(arrayMap(x -> x.3, arraySort(groupArray((eid, pg, raw)))),
                                      ','), ']') AS j
    FROM _fold_pages WHERE {_KEEP_PAGE} GROUP BY sp, pid, bucket
) AS p USING (sp, pid, bucket)
LEFT JOIN (
    SELECT sp, pid, bucket, {_object("groupArray((ref, json))")} AS j FROM _fold_refs
    GROUP BY sp, pid, bucket
) AS r USING (sp, pid, bucket)
LEFT JOIN ({_counts("event_counts")}) AS ec USING (sp, pid, bucket)
LEFT JOIN ({_counts("sensitive_counts")}) AS sc USING (sp, pid, bucket)
LEFT JOIN ({_grouped("_fold_values")}) AS va USING (sp, pid, bucket)
LEFT JOIN ({_grouped("_fold_sizes")}) AS sz USING (sp, pid, bucket)
) GROUP BY sp, pid"""

_KEPT_SIGNALS = (f"arrayFilter(e -> JSONExtractString(e, 'occurred_at') >= {_CUT}, "
                 "JSONExtractArrayRaw(signals))")  # fmt: skip


#: The folded states, with the next version.
_FOLDED_SQL = f"""SELECT pid AS profile_id, sp AS space_id, concat(
    '{{"buckets":', if(b.j = '', '{{}}', b.j),
    ',"erased_through":', JSONExtractRaw(head, 'erased_through'),
    ',"folded":', toJSONString(arrayFilter(x -> x.1 >= {_CUT},
                               JSONExtract(head, 'folded', 'Array(Tuple(String, String))'))),
    verbatim,
    ',"max_seen":', concat('{{', arrayStringConcat(arrayMap(
        kv -> concat(toJSONString(kv.1), ':', toString(kv.2)),
        arrayFilter(kv -> has(k.eids, kv.1), JSONExtractKeysAndValues(mid, 'max_seen', 'Int64'))),
        ','), '}}'),
    ',"newest_occurred_at":', JSONExtractRaw(mid, 'newest_occurred_at'),
    ',"opted_out":', JSONExtractRaw(mid, 'opted_out'),
    ',"profile_id":', JSONExtractRaw(mid, 'profile_id'),
    ',"signals":[', arrayStringConcat(kept, ','), ']',
    tail) AS state,
    v + 1 AS version,
    if(oldest = '', NULL, parseDateTime64BestEffortOrNull(oldest, 3, 'UTC')) AS evidence_from
FROM (SELECT *, {_KEPT_SIGNALS} AS kept FROM _fold_states WHERE py = 0) AS st
LEFT JOIN ({_BUCKETS_SQL}) AS b USING (sp, pid)
LEFT JOIN (
    SELECT sp, pid, groupUniqArray(eid) AS eids, min(occurred) AS first FROM _fold_pages
    WHERE {_KEEP_PAGE} GROUP BY sp, pid
) AS k USING (sp, pid)
ARRAY JOIN [arrayMin(arrayFilter(x -> x != '', arrayPushBack(
    arrayMap(e -> JSONExtractString(e, 'occurred_at'), kept), k.first)))] AS oldest"""
#: The folded states written, unless their person was erased since they were read.
_WRITE_SQL = f"INSERT INTO signal_state ({', '.join(_STATE_COLUMNS)})\n" + _unless_erased(
    _FOLDED_SQL
)
