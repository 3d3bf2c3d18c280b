"""The SQL gate on real chDB: a hostile corpus, each statement refused by name before it
runs (nothing written, read or fetched), the allowed ones answered, the limits held, and
the store's own session untouched (an insert works after every refusal)."""

from __future__ import annotations

import asyncio
import http.server
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse.analyst_sql import AnalystSql
from turnstream.adapters.clickhouse.analyst_user import analyst_user_sql
from turnstream.adapters.clickhouse.sealing import seal_stated
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import SqlSettings
from turnstream.errors import SqlBusy, SqlRefused, StoreError

pytestmark = pytest.mark.integration

SECRET = "s3cr3t-identity-value-for-the-gate"


class _Counter(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"fetched")

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def http_target() -> Iterator[str]:
    """A URL on loopback that counts the requests it gets."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/x"
    server.shutdown()
    server.server_close()


@pytest.fixture
def gate(store: Store, chdb_path: Path) -> Iterator[AnalystSql]:
    analysts = AnalystSql(f"chdb://{chdb_path}", store.database, SqlSettings(max_rows=1000))
    yield analysts
    analysts.close()


def _hostile(tmp: Path, url: str) -> list[tuple[str, str]]:
    """(statement, a word the refusal names)."""
    config, out = tmp / "turnstream.toml", tmp / "written"
    return [
        # Writes and DDL.
        ("INSERT INTO dead_letters (reason) VALUES ('forged')", "Insert"),
        (f"insert into function file('{out}', 'RawBLOB') select 'x'", "Insert"),
        ("CREATE TABLE forged (a Int32) ENGINE = Memory", "Create"),
        ("DROP TABLE turns", "Drop"),
        ("ALTER TABLE turns DELETE WHERE 1", "Alter"),
        ("TRUNCATE TABLE turns", "Drop"),
        ("RENAME TABLE turns TO t2", "Rename"),
        ("OPTIMIZE TABLE turns FINAL", "Optimize"),
        ("SYSTEM STOP MERGES", "System"),
        ("GRANT ALL ON *.* TO default", "Grant"),
        ("CREATE USER u IDENTIFIED BY 'p'", "Create"),
        # Session changes.
        ("SET max_threads = 1", "Set"),
        ("SET readonly = 0", "Set"),
        ("KILL QUERY WHERE 1", "Kill"),
        ("USE system", "Use"),
        ("SELECT 1 SETTINGS readonly = 0", "SETTINGS"),
        ("SELECT 1 SETTINGS max_execution_time = 0", "max_execution_time"),
        ("SELECT * FROM (SELECT 1 SETTINGS max_memory_usage = 0)", "SETTINGS"),
        # Several statements, with comments, odd casing and unicode around the semicolon.
        ("SELECT 1; CREATE TABLE default.x (a Int32) ENGINE = Memory; SELECT 2", "statement"),
        (f"SELECT 1;INSERT INTO FUNCTION file('{out}', 'RawBLOB') SELECT 'x'", "statement"),
        ("select 1 /* ; */ ;\u00a0drop table turns", "statement"),
        ("SeLeCt 1 --\n; DrOp TaBlE turns", "statement"),
        ("SELECT 1\uff1bDROP TABLE turns", "parse"),  # a fullwidth semicolon
        ("SEL\u200bECT 1; DROP TABLE turns", "parse"),  # a zero-width space
        ("SELECT 1 -- \u202e; DROP TABLE turns", ""),  # right-to-left in a comment: one statement
        ("SELECT 1;", ""),  # one statement and a stray semicolon: allowed
        # Files.
        (f"SELECT 'x' INTO OUTFILE '{out}'", "INTO OUTFILE"),
        (f"SELECT 'x' INTO OUTFILE '{out}' AND STDOUT", "INTO OUTFILE"),
        (f"SELECT 1 INTO OUTFILE '{out}' COMPRESSION 'gzip'", "INTO OUTFILE"),
        (f"DESCRIBE file('{config}', 'JSONEachRow')", "DESCRIBE"),
        (f"DESC TABLE file('{config}')", "DESCRIBE"),
        (f"SELECT * FROM file('{config}', 'RawBLOB')", "file()"),
        (f"SELECT * FROM FILE('{config}', 'RawBLOB')", "FILE()"),
        (f"SELECT file('{config}')", "file()"),
        (f"SELECT FiLe('{config}')", "FiLe()"),
        (f"SELECT length(file('{config}')) > 0 FROM turns", "file()"),
        (f"SELECT * FROM turns WHERE 1 IN (SELECT 1 FROM file('{config}', 'RawBLOB'))", "file()"),
        (f"WITH t AS (SELECT * FROM file('{config}', 'RawBLOB')) SELECT * FROM t", "file()"),
        (f"SELECT * FROM numbers(1) AS n JOIN file('{config}', 'RawBLOB') AS f ON 1", "file()"),
        (f"SELECT * FROM fileCluster('c', '{config}')", "fileCluster()"),
        ("SELECT * FROM filesystem('/')", "filesystem()"),
        # URLs, other servers, processes, other tables.
        (f"DESCRIBE url('{url}', 'RawBLOB')", "DESCRIBE"),
        (f"SELECT * FROM url('{url}', 'RawBLOB')", "url()"),
        (f"SELECT * FROM s3('{url}', 'RawBLOB')", "s3()"),
        ("SELECT * FROM remote('127.0.0.1', system.one)", "remote()"),
        ("SELECT * FROM remoteSecure('127.0.0.1', system.one)", "remoteSecure()"),
        ("SELECT * FROM mysql('h:3306', 'd', 't', 'u', 'p')", "mysql()"),
        ("SELECT * FROM postgresql('h:5432', 'd', 't', 'u', 'p')", "postgresql()"),
        ("SELECT * FROM executable('x.sh', 'TSV', 'a String')", "executable()"),
        ("SELECT * FROM hdfs('hdfs://h/x', 'TSV')", "hdfs()"),
        ("SELECT * FROM input('a String')", "input()"),
        ("SELECT * FROM cluster('default', system.one)", "cluster()"),
        ("SELECT * FROM jdbc('x', 'y')", "jdbc()"),
        ("SELECT * FROM odbc('x', 'y')", "odbc()"),
        ("SELECT * FROM merge('system', '.*')", "merge()"),
        ("SELECT * FROM python('x')", "python()"),
        ("SELECT * FROM dictionary('d')", "dictionary()"),
        ("SELECT * FROM view(SELECT * FROM system.users)", "view()"),
        # Functions that read the host, dictionaries, models or call out.
        ("SELECT dictGet('d', 'a', 1)", "dictGet()"),
        ("SELECT joinGet('system.one', 'dummy', 0)", "joinGet()"),
        ("SELECT hasColumnInTable('127.0.0.1', 'system', 'one', 'dummy')", "hasColumnInTable()"),
        ("SELECT getServerSetting('path')", "getServerSetting()"),
        ("SELECT hostName(), 1", "hostName()"),
        ("SELECT aiGenerate('x')", "aiGenerate()"),
        ("SELECT logTrace('x')", "logTrace()"),
        ("SELECT * APPLY(file) FROM (SELECT 'x' AS a)", "file()"),
        ("SELECT fullHostName()", "fullHostName()"),  # FQDN under another name
        ("SELECT * APPLY(x -> fullHostName()) FROM (SELECT 'x' AS a)", "fullHostName()"),
        # System tables that leak, in every spelling.
        ("SELECT * FROM system.processes", "system.processes"),
        ("SELECT * FROM `system`.`users`", "system.users"),
        ('SELECT * FROM "system".query_log', "system.query_log"),
        ("SELECT * FROM SYSTEM.ERRORS", "SYSTEM.ERRORS"),
        ("SELECT * FROM turns WHERE 1 IN system.users", "system.users"),
        ("SELECT * FROM default.anything", "default.anything"),
        ("SELECT * FROM INFORMATION_SCHEMA.TABLES", "INFORMATION_SCHEMA.TABLES"),
        ("SELECT table, command FROM system.mutations", "system.mutations"),
        ("SHOW PROCESSLIST", "ShowProcesslist"),
        ("SHOW SETTINGS LIKE '%'", "SHOW SETTINGS"),
        ("SHOW CHANGED SETTINGS LIKE '%'", "SHOW CHANGED SETTINGS"),
        ("SHOW MERGES", "SHOW MERGES"),
        ("SHOW FILESYSTEM CACHES", "SHOW FILESYSTEM CACHES"),
        ("SHOW CLUSTERS", "SHOW CLUSTERS"),
        ("SHOW CREATE USER default", "SHOW CREATE USER"),
        ("SHOW USERS", "SHOW USERS"),
        ("SHOW TABLES FROM system", "SHOW TABLES FROM system"),
        ("SHOW DATABASES", "SHOW DATABASES"),
        ("SHOW GRANTS", "Show"),
        ("SHOW CREATE TABLE system.users", "system.users"),
        ("DESCRIBE TABLE system.users", "system.users"),
        ("EXPLAIN SELECT 1", "Explain"),
        # Names from parameters, FORMAT.
        ("SELECT * FROM {t:Identifier}", "parameter"),
        ("SELECT {c:Identifier} FROM turns", "Identifier"),
        ("SELECT 1 FORMAT TabSeparated", "FORMAT"),
        ("", "parse"),
    ]


def test_every_hostile_statement_is_refused_by_name(
    gate: AnalystSql, store: Store, tmp_path: Path, http_target: str
) -> None:
    (tmp_path / "turnstream.toml").write_text(f'[identity]\nsecret = "{SECRET}"\n')
    tables = store.query("SELECT name FROM system.tables WHERE database = currentDatabase()")
    _Counter.hits = 0
    refused = 0
    for sql, named in _hostile(tmp_path, http_target):
        if not named:
            assert gate.run(sql).rows == [(1,)]
            continue
        with pytest.raises(SqlRefused) as caught:
            gate.run(sql, {"t": "users", "c": "x"})
        message = str(caught.value)
        assert named in message, (sql, message)
        assert SECRET not in message and "s3cr3t" not in message
        refused += 1
        # The store's own session is as it was: an insert still lands (each its own
        # block: the table drops a repeated one).
        store.insert("dead_letters", [(f"gate-{refused}",)], ["reason"])
    assert refused == sum(1 for _, named in _hostile(tmp_path, http_target) if named)
    assert not (tmp_path / "written").exists()
    assert _Counter.hits == 0, "a statement fetched the URL"
    assert (
        store.query("SELECT name FROM system.tables WHERE database = currentDatabase()") == tables
    )
    landed = "SELECT count() FROM dead_letters WHERE startsWith(reason, 'gate-')"
    assert store.scalar(landed) == refused
    assert store.scalar("SELECT count() FROM system.tables WHERE database = 'default'") == 0


def test_a_function_under_another_name_is_judged_as_itself(gate: AnalystSql, store: Store) -> None:
    # ClickHouse's own list of aliases (fullHostName is FQDN): a refused function is
    # refused under each of its names, whichever a later ClickHouse adds.
    aliases = store.query(
        "SELECT name, alias_to FROM system.functions WHERE alias_to != '' ORDER BY name"
    ).rows
    assert ("fullHostName", "FQDN") in aliases

    def refused(name: str) -> bool:
        try:
            gate.run(f"SELECT {name}()")
        except SqlRefused as exc:  # refused for the function (not e.g. for its syntax)
            return str(exc).startswith(f"function {name}() is not allowed")
        except StoreError:  # ClickHouse's own error (the arguments): judged and allowed
            return False
        return False

    gaps = [(n, a) for n, a in aliases if refused(a) and not refused(n)]
    assert gaps == []


def test_every_in_function_names_its_table_to_the_gate(gate: AnalystSql, store: Store) -> None:
    # Each function ClickHouse reads a table for by name (``x IN t`` and its variants,
    # ``inIgnoreSet``... among them): the table is judged as a FROM's would be.
    family = store.query(
        "SELECT name FROM system.functions WHERE match(name, '(?i)^(global)?(not)?(null)?in"
        "(ignoreset)?$') ORDER BY name"
    ).rows
    names = {n for (n,) in family}
    assert {"in", "globalNotIn", "inIgnoreSet", "globalNotNullInIgnoreSet"} <= names
    for (name,) in family:
        for table in ("stated_sensitive", f"{store.database}.stated_sensitive", "system.users"):
            named = re.escape(table.removeprefix(f"{store.database}."))
            with pytest.raises(SqlRefused, match=f"table {named} is not allowed"):
                gate.run(f"SELECT {name}(tuple('x'), {table})")


def test_the_workers_own_statements_and_their_values_are_not_for_analysts(
    gate: AnalystSql, store: Store
) -> None:
    # The sealing of a sensitive value (adapters/clickhouse/sealing.py) is a mutation whose
    # text ClickHouse keeps with its parameters as literals (the last 100 per table, past
    # an erasure of the person): system.mutations is the worker's SQL, not the catalog.
    payload = '{"kind":"attribute","attr":"diet","value":"vegan","note":"said-by-p_mut"}'
    store.insert(
        "stated",
        [("mut-1", "acme", "p_mut", "self", "attribute", "diet", payload)],
        ["id", "space_id", "profile_id", "for", "kind", "attr", "payload"],
    )
    assert seal_stated(store, ["diet"]) == {"stated": 1}
    commands = "SELECT command FROM system.mutations WHERE table = 'stated'"
    assert any("said-by-p_mut" in c for (c,) in store.query(commands).rows)
    for sql in (
        "SELECT command FROM system.mutations",
        "SELECT * FROM turns WHERE 1 IN (SELECT 1 FROM `system`.`mutations`)",
        "SHOW CREATE TABLE system.mutations",
    ):
        with pytest.raises(SqlRefused, match=r"system\.mutations is not allowed"):
            gate.run(sql)
    assert store.scalar("SELECT getSetting('readonly')") == 0
    store.insert("dead_letters", [("after-mutations",)], ["reason"])


def test_the_catalog_shows_no_private_tables_rows_or_sizes(gate: AnalystSql, store: Store) -> None:
    # system.tables and system.columns list every table, stated_sensitive too: its name
    # and columns, never how many rows or bytes it holds; system.parts is its data parts.
    words = [(f"w-{i}", "acme", f"p_{i}", "self", "diet", "celíaco") for i in range(3)]
    store.insert(
        "stated_sensitive", words, ["id", "space_id", "profile_id", "for", "attr", "value"]
    )
    size = (
        "SELECT total_rows FROM system.tables "
        "WHERE database = currentDatabase() AND name = 'stated_sensitive'"
    )
    assert store.scalar(size) == 3  # what the store's own session sees
    for sql, named in (
        (size, "column total_rows is not allowed with system.tables"),
        ("SELECT name, total_bytes FROM system.tables", "total_bytes"),
        ("SELECT name FROM system.tables WHERE total_rows = 3", "total_rows"),
        ("SELECT name FROM system.tables ORDER BY lifetime_rows", "lifetime_rows"),
        ("SELECT 1 FROM turns WHERE 3 IN (SELECT total_rows FROM system.tables)", "total_rows"),
        ("SELECT * FROM system.tables", "every column of system.tables"),
        ("SELECT t.* FROM system.tables AS t", "every column"),
        ("SELECT COLUMNS('total') FROM system.tables", "every column"),
        ("SELECT toJSONString(tuple(*)) FROM system.tables", "every column"),
        ("SELECT 1 FROM system.one WHERE 'x' IN system.tables", "system.tables as a set"),
        (
            "SELECT sum(data_compressed_bytes) FROM system.columns "
            "WHERE table = 'stated_sensitive'",
            "data_compressed_bytes",
        ),
        ("SELECT sum(rows) FROM system.parts WHERE table = 'stated_sensitive'", "system.parts"),
        ("SELECT count() FROM system.parts", "system.parts"),
    ):
        with pytest.raises(SqlRefused) as caught:
            gate.run(sql)
        assert named in str(caught.value), (sql, str(caught.value))
    catalog = (
        "SELECT name, engine FROM system.tables "
        "WHERE database = currentDatabase() AND name = 'stated_sensitive'"
    )
    assert gate.run(catalog).rows == [("stated_sensitive", "MergeTree")]
    columns = (
        "SELECT name FROM system.columns WHERE database = currentDatabase() "
        "AND table = 'stated_sensitive' AND name = 'value'"
    )
    assert gate.run(columns).rows == [("value",)]


READING = [
    "SELECT count() FROM turns",
    "WITH n AS (SELECT number FROM numbers(3)) SELECT sum(number) FROM n",
    "SELECT * FROM turns AS t JOIN interactions AS i ON t.profile_id = i.profile_id",
    "SELECT 1 UNION ALL SELECT 2",
    "SELECT name FROM system.tables WHERE database = currentDatabase()",
    "SELECT count() FROM system.columns WHERE table = 'turns'",
    "SELECT count() FROM system.one",
    "SHOW TABLES",
    "SHOW TABLES LIKE 'turn%'",
    "SHOW COLUMNS FROM turns",
    "DESCRIBE TABLE turns",
    "desc turns",
    "SHOW CREATE TABLE turns",
    "EXISTS TABLE turns",
    "SELECT arrayMap(x -> x + 1, [1, 2]), sleep(0)",
    "SELECT * FROM values('a UInt8', 1, 2)",
    "SELECT count() FROM {database}.turns",
]


def test_reading_statements_are_answered(gate: AnalystSql, store: Store) -> None:
    for sql in READING:
        gate.run(sql.format(database=store.database))
    # An unknown table is ClickHouse's own error, not the gate's.
    with pytest.raises(StoreError) as caught:
        gate.run("SELECT count() FROM no_such_table")
    assert not isinstance(caught.value, SqlRefused)
    assert "no_such_table" in str(caught.value)


def test_parameters_are_bound_as_data(gate: AnalystSql) -> None:
    value = "a'b\n\\c; DROP TABLE turns --"
    rows = gate.run("SELECT {v:String} AS v, {n:UInt8} + 1", {"v": value, "n": 2}).rows
    assert rows == [(value, 3)]
    # A client-side "%(v)s" is text, not a placeholder: nothing spliced in.
    assert gate.run("SELECT '%(v)s'", {"v": value}).rows == [("%(v)s",)]
    with pytest.raises(SqlRefused, match="parameters: '\\$v\\$'"):
        gate.run("SELECT 1", {"$v$": b"x"})
    with pytest.raises(SqlRefused, match="w has no value"):
        gate.run("SELECT {w:String}")


def test_the_limits_hold(store: Store, chdb_path: Path) -> None:
    limits = SqlSettings(timeout=1.0, max_rows=10, max_memory=64 << 20)
    gate = AnalystSql(f"chdb://{chdb_path}", store.database, limits)
    try:
        with pytest.raises(StoreError, match="max rows"):
            gate.run("SELECT number FROM numbers(11)")
        assert len(gate.run("SELECT number FROM numbers(10)").rows) == 10
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"TIMEOUT_EXCEEDED|[Tt]imeout"):
            gate.run("SELECT count() FROM numbers(1e12) WHERE sleepEachRow(0) = 0")
        assert time.monotonic() - started < 5
        with pytest.raises(StoreError, match=r"MEMORY_LIMIT|memory limit"):
            gate.run("SELECT groupArray(number) FROM numbers(1e8)")
        readonly, threads = gate.run(
            "SELECT getSetting('readonly'), getSetting('max_threads')"
        ).rows[0]
        assert (readonly, threads) == (1, 1)
    finally:
        gate.close()
    # And the store's session has none of them.
    assert store.scalar("SELECT getSetting('readonly')") == 0
    store.insert("dead_letters", [("after",)], ["reason"])


def test_a_query_waits_for_a_connection_a_bounded_time(store: Store, chdb_path: Path) -> None:
    # One connection, held 2 s by a sleeping query: the next waits 0.3 s, then is told
    # the SQL is busy (the worker answers 503); the lane is not lost by giving up.
    limits = SqlSettings(concurrency=1, wait=0.3, timeout=10.0)
    gate = AnalystSql(f"chdb://{chdb_path}", store.database, limits)

    async def scenario() -> list[object]:
        slow = asyncio.create_task(gate.run_async("SELECT sleep(2)"))
        await asyncio.sleep(0)  # the slow one takes the lane
        with pytest.raises(SqlBusy, match=r"busy: its 1 connection\(s\).*0.3 s"):
            await gate.run_async("SELECT 1")
        await slow
        return [(await gate.run_async("SELECT 1")).rows, (await gate.run_async("SELECT 2")).rows]

    try:
        assert asyncio.run(scenario()) == [[(1,)], [(2,)]]
    finally:
        gate.close()


def test_the_read_only_users_sql_parses_in_clickhouse(store: Store) -> None:
    # No server here: ClickHouse's own parser (the same grammar) takes every statement,
    # and formats each back with the same grants and caps.
    statements = analyst_user_sql(store.database, "turnstream_analyst", "ab" * 32, SqlSettings())
    for statement in statements:
        [(formatted,)] = store.query("SELECT formatQuery({q:String})", {"q": statement}).rows
        assert formatted.split()[0] == statement.split()[0]
    assert "readonly = 2" in statements[0] and f"ON {store.database}.*" in store.scalar(
        "SELECT formatQuery({q:String})", {"q": statements[3]}
    )


ODD_INPUTS: list[tuple[str, dict[str, object] | None]] = [
    ("SELECT '\udcff'", None),  # a lone surrogate
    ("SELECT {x:String}", {"x": "\udcff"}),
    ("SELECT {x:UInt8}", {"x": None}),
    ("SELECT 1" + " " * 300_000, None),  # past max_query_size (256 KiB)
    ("SELECT " + "(" * 5000 + "1" + ")" * 5000, None),  # past max_parser_depth
    ("\x00SELECT 1", None),
]


def test_odd_inputs_are_refusals_not_crashes(gate: AnalystSql) -> None:
    for sql, parameters in ODD_INPUTS:
        with pytest.raises((StoreError, SqlRefused)):  # either way a 400, never a 500
            gate.run(sql, parameters)
        assert gate.run("SELECT 1").rows == [(1,)]  # the lane goes on
