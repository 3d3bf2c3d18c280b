"""The ClickHouse client: embedded chDB on disk by default, a server with an http(s) DSN.

The same SQL runs on both. Every call blocks, so async code goes through
:class:`AsyncStore`, which keeps them on one worker thread, off the event loop.

Values never go into SQL text: a single value travels as a server-side query parameter
(``{name:Type}`` in the SQL, ``parameters={"name": value}``), and a set of values that
grows with a batch is inserted as data: the keys of a look-up into a temporary table of
the client's session (:meth:`Store.stage`) that the next query reads, an erasure's
subjects into the ``erase_subjects`` table (its mutations run outside the session).
Either way the text ClickHouse parses stays the same size whatever the input, so no
input can reach ``max_query_size`` (256 KiB). An insert has no size limit on either
interface; a parameter on a server travels in a URL or an HTTP form field, at most
128 KiB (``http_max_field_value_size``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import clickhouse_connect
from clickhouse_connect.driver.exceptions import ClickHouseError

from turnstream.errors import StoreError

__all__ = [
    "AsyncStore",
    "QueryResult",
    "Store",
    "chdb_path",
    "describe_dsn",
    "insert_settings",
    "owner_file",
    "store_time",
]

T = TypeVar("T")

_UNKNOWN_TABLE = 60

#: Statements that may change a table's columns: the cached types are dropped first.
_CHANGES_COLUMNS = re.compile(r"\s*(ALTER|CREATE|DROP|RENAME|EXCHANGE|REPLACE)\b", re.IGNORECASE)


def store_time(value: T) -> T:
    """A time read from the store, as an aware UTC datetime; anything else as it is.

    Every time column is UTC, and chDB hands ``DateTime``/``DateTime64`` values back naive
    (a server, aware): both come out the same here. Dates and ``None`` pass through.
    """
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)  # type: ignore[return-value]
        return value.astimezone(UTC)  # type: ignore[return-value]
    return value


def _store_error(exc: Exception, prefix: str = "", table: str | None = None) -> StoreError:
    """A driver error as a :class:`StoreError` with the store's code and the driver's class."""
    code = getattr(exc, "code", None)
    return StoreError(
        f"{prefix}{exc}",
        code=code if isinstance(code, int) else None,
        driver=type(exc).__name__,
        table=table,
    )


def chdb_path(dsn: str) -> Path | None:
    """The on-disk path of an embedded DSN (``chdb:///abs`` or ``chdb:rel``), else None."""
    if not dsn.startswith("chdb:"):
        return None
    rest = dsn[len("chdb:") :]
    if rest.startswith("///") or rest.startswith("//"):
        rest = rest[2:]
    if not rest or rest in (":memory:", "memory"):
        raise StoreError("an in-memory chDB store cannot be shared; give chdb:///path")
    return Path(rest).expanduser().resolve()


#: Query parameters of a DSN whose values are credentials (clickhouse-connect reads
#: ``?password=`` and ``?access_token=`` as well as the user:password before the host).
_SECRET_PARAMETERS = ("password", "token", "secret", "key")


def describe_dsn(dsn: str) -> str:
    """The DSN as it may be printed or logged: ``chdb://<absolute path>`` for an embedded
    store; a server's with its password, and any credential in its query, as ``***``."""
    path = chdb_path(dsn)
    if path is not None:
        return f"chdb://{path}"
    parts = urlsplit(dsn)
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}"
    query = [
        (name, "***" if any(word in name.lower() for word in _SECRET_PARAMETERS) else value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
    ]
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(query, safe="*")))


def owner_file(path: Path) -> Path:
    """Where the process that owns an embedded store says how to reach it."""
    return path / "turnstream-owner.json"


@dataclass(frozen=True)
class QueryResult:
    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]

    def as_dicts(self) -> list[dict[str, Any]]:
        """Rows as dictionaries keyed by column name."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def insert_settings(token: str | None = None) -> dict[str, Any]:
    """The settings of an insert into the store (rows or ``INSERT ... SELECT``); ``token``
    makes a repeated insert a no-op in the table and in each of its views on its own."""
    # The daily aggregates are partitioned by week (migration 21): one block of events
    # spread over more weeks than ClickHouse's default limit (100 partitions) would be
    # refused whole, so no limit here; their TTL keeps ~15 weeks.
    settings: dict[str, Any] = {"max_partitions_per_insert_block": 0}
    if token:
        settings["insert_deduplication_token"] = token
        # The default on chDB 26.9, not on servers before 24.7: at 0 a view takes a
        # block again whether it holds it or not (measured: a summary counted twice).
        settings["deduplicate_blocks_in_dependent_materialized_views"] = 1
    return settings


class Store:
    """A ClickHouse database reached through clickhouse-connect."""

    def __init__(self, dsn: str, database: str = "turnstream") -> None:
        self.dsn = dsn
        self.database = database
        self.path = chdb_path(dsn)
        self._staged: set[str] = set()
        # Per table, its columns' types: given to every insert, so clickhouse-connect
        # does not DESCRIBE the table before each one (8 a batch, ~1.4 ms of chDB each).
        self._column_types: dict[str, dict[str, str]] = {}
        try:
            if self.path is not None:
                self.path.mkdir(parents=True, exist_ok=True)
                bootstrap = clickhouse_connect.get_client(interface="chdb", path=str(self.path))
                bootstrap.command(f"CREATE DATABASE IF NOT EXISTS {database}")
                bootstrap.close()
                self._client = clickhouse_connect.get_client(
                    interface="chdb", path=str(self.path), database=database
                )
            else:
                bootstrap = clickhouse_connect.get_client(dsn=dsn)
                bootstrap.command(f"CREATE DATABASE IF NOT EXISTS {database}")
                # A session of its own: the temporary tables of stage() live in it.
                self._client = clickhouse_connect.get_client(
                    dsn=dsn, database=database, autogenerate_session_id=True
                )
        except Exception as exc:  # driver errors come in many classes
            raise _store_error(exc, f"cannot open the store {self.describe()}: ") from exc

    @property
    def embedded(self) -> bool:
        """True for a chDB store owned by this process."""
        return self.path is not None

    def describe(self) -> str:
        """The DSN with its password masked."""
        return describe_dsn(self.dsn)

    def command(
        self,
        sql: str,
        settings: dict[str, Any] | None = None,
        parameters: dict[str, Any] | None = None,
    ) -> None:
        """Run a statement that returns nothing; values as ``{name:Type}`` parameters."""
        if _CHANGES_COLUMNS.match(sql):
            self.forget_columns()
        try:
            self._client.command(sql, parameters=parameters, settings=settings)
        except (ClickHouseError, OSError) as exc:
            raise _store_error(exc) from exc

    def query(
        self,
        sql: str,
        parameters: dict[str, Any] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> QueryResult:
        """Run a query and return its columns and rows; values as ``{name:Type}``
        parameters, never in ``sql``."""
        try:
            result = self._client.query(sql, parameters=parameters, settings=settings)
            # The rows are read here, in the try: an answer the driver cannot decode (two
            # statements' blocks of different columns) fails while they are read.
            return QueryResult(
                list(result.column_names),
                [t.name for t in result.column_types],
                [tuple(r) for r in result.result_rows],
            )
        except (ClickHouseError, OSError) as exc:
            raise _store_error(exc) from exc
        except (IndexError, KeyError, TypeError, ValueError) as exc:  # the driver's decoding
            raise _store_error(exc, "the store's answer could not be read: ") from exc

    def insert(
        self,
        table: str,
        rows: Sequence[Sequence[Any]],
        columns: Sequence[str],
        token: str | None = None,
        *,
        column_oriented: bool = False,
    ) -> None:
        """Insert rows in one block; ``token`` makes a repeated insert a no-op in the table,
        and in each of its materialized views on its own (a view lacking the block, after
        a failure between the table's part and the view's, takes it then).
        ``column_oriented``: ``rows`` holds a list per column, in the order of
        ``columns``, instead of a sequence per row."""
        names = list(columns)
        types = self._types(table, names)
        try:
            self._client.insert(
                table,
                rows,
                column_names=names,
                column_type_names=types,
                column_oriented=column_oriented,
                settings=insert_settings(token),
            )
        except Exception as exc:
            # The table may have changed under the cached types (another process's
            # migration): the next insert reads them again.
            self._column_types.pop(table, None)
            if isinstance(exc, ClickHouseError | OSError):
                raise _store_error(exc, f"insert into {table} failed: ", table) from exc
            raise

    def _types(self, table: str, columns: Sequence[str]) -> list[str] | None:
        """The types of ``table``'s ``columns``, read once per table from
        ``system.columns``; None (clickhouse-connect then asks the table itself, and
        says what is wrong) when the store does not know the table or a column."""
        known = self._column_types.get(table)
        if known is None or any(c not in known for c in columns):
            known = {
                name: kind
                for name, kind in self.query(
                    "SELECT name, type FROM system.columns "
                    "WHERE database = {database:String} AND table = {table:String}",
                    {"database": self.database, "table": table},
                ).rows
            }
            if not known:
                return None
            self._column_types[table] = known
        if any(c not in known for c in columns):
            return None
        return [known[c] for c in columns]

    def forget_columns(self) -> None:
        """Forget every table's column types (after a statement that may change them)."""
        self._column_types.clear()

    def stage(
        self,
        name: str,
        columns: Sequence[tuple[str, str]],
        rows: Sequence[Sequence[Any]],
        *,
        column_oriented: bool = False,
    ) -> None:
        """Put ``rows`` in this session's temporary table ``name`` (``columns``: name and
        type), replacing what it held: data that the next queries read as a table
        (``column_oriented``: ``rows`` holds a list per column).

        The table is created on first use (``ENGINE = Memory``, gone with the session):
        chDB keeps one session per client, and clickhouse-connect gives an HTTP client a
        session of its own. A server drops an idle session's tables (``session_timeout``,
        60 s), so the table is created again when the store no longer knows it.
        """
        if name not in self._staged:
            self._create_stage(name, columns)
        names = [c for c, _ in columns]
        types = [t for _, t in columns]
        try:
            self._client.command(f"TRUNCATE TABLE {name}")
        except (ClickHouseError, OSError) as exc:
            error = _store_error(exc)
            if error.code != _UNKNOWN_TABLE:
                raise error from exc
            self._create_stage(name, columns)  # the server's session expired
        if not rows or (column_oriented and not rows[0]):
            return
        try:
            self._client.insert(
                name,
                rows,
                column_names=names,
                column_type_names=types,
                column_oriented=column_oriented,
            )
        except (ClickHouseError, OSError) as exc:
            count = len(rows[0]) if column_oriented else len(rows)
            raise _store_error(exc, f"staging {count} rows in {name} failed: ") from exc

    def _create_stage(self, name: str, columns: Sequence[tuple[str, str]]) -> None:
        spec = ", ".join(f"{c} {t}" for c, t in columns)
        self.command(f"CREATE TEMPORARY TABLE IF NOT EXISTS {name} ({spec}) ENGINE = Memory")
        self._staged.add(name)

    def scalar(self, sql: str, parameters: dict[str, Any] | None = None) -> Any:
        """The first column of the first row."""
        rows = self.query(sql, parameters).rows
        return rows[0][0] if rows else None

    def claim_ownership(self, url: str) -> None:
        """Tell other processes that this one owns the embedded store and where to ask."""
        if self.path is not None:
            owner_file(self.path).write_text(json.dumps({"pid": os.getpid(), "url": url}))

    def release_ownership(self) -> None:
        """Remove the owner file if it is ours."""
        if self.path is None:
            return
        file = owner_file(self.path)
        with contextlib.suppress(FileNotFoundError, ValueError):
            if json.loads(file.read_text()).get("pid") == os.getpid():
                file.unlink()

    def close(self) -> None:
        """Close the client."""
        with contextlib.suppress(Exception):
            self._client.close()


class AsyncStore:
    """Runs a :class:`Store`'s blocking calls on one dedicated thread."""

    def __init__(self, store: Store, executor: ThreadPoolExecutor | None = None) -> None:
        self.store = store
        self._executor = executor or ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")

    @classmethod
    def open(cls, dsn: str, database: str) -> AsyncStore:
        """Open the store on its own thread, the one every later call runs on."""
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        try:
            store = executor.submit(Store, dsn, database).result()
        except BaseException:
            executor.shutdown()
            raise
        return cls(store, executor)

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the store thread, blocking (for code outside the loop)."""
        return self._executor.submit(fn, *args).result()

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the store thread and await its result."""
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def shutdown(self) -> None:
        """Stop the thread (after the calls in flight)."""
        self._executor.shutdown(wait=True)
