"""What an analyst's SQL may be: the judge of one statement, on ClickHouse's own parse.

Pure: ClickHouse parses the text (``formatQuery`` gives one canonical statement and
refuses a second one; ``parseQueryToJSON`` the tree of that canonical text, both with the
text bound as a query parameter, never spliced into SQL), and the rules here read what
it gave back. What runs is the canonical text that was judged, so no comment, odd
casing, unicode space or second statement reaches the store unjudged.

Allowed: ``SELECT`` (``WITH``, ``UNION``, subqueries, joins) over the project's tables
and views, a few system tables that describe them (by the columns named, never a table's
rows or sizes), and table functions that only make numbers; ``SHOW TABLES``/``SHOW
COLUMNS`` of the project's database; ``DESCRIBE TABLE``, ``SHOW CREATE TABLE|VIEW`` and
``EXISTS TABLE`` of one of its tables. Refused, each
with its name in the message: any other statement; ``INTO OUTFILE``, ``FORMAT`` and
``SETTINGS`` clauses (the worker sets the limits); table functions that reach files,
URLs, other servers, processes or other tables (every one not in the allow-list);
functions that read files, dictionaries, models, the host or call out (``file``,
``dictGet``, ``ai*``...); a table name given as a query parameter (``{t:Identifier}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from turnstream.errors import SqlRefused

__all__ = [
    "ALLOWED_SYSTEM_TABLES",
    "ALLOWED_TABLE_FUNCTIONS",
    "CATALOG_TABLES",
    "PRIVATE_TABLES",
    "REFUSED_FUNCTIONS",
    "SIZE_WORDS",
    "judge_canonical",
    "judge_tree",
    "parameter_names",
    "unsupported_statement",
]

#: Table functions that only make values (no file, URL, server, process or table).
ALLOWED_TABLE_FUNCTIONS = frozenset(
    {
        "numbers",
        "numbers_mt",
        "zeros",
        "zeros_mt",
        "values",
        "generate_series",
        "generateseries",
        "primes",
    }
)

#: System tables an analyst may read: the catalog of the project's tables (the tables and
#: their columns, :data:`CATALOG_TABLES`) and the trivial ones. Refused, among others:
#: ``parts`` (each row a data part of a table, the private ones' too: its rows, bytes,
#: times and block numbers), ``processes`` and ``query_log`` (other people's queries),
#: ``mutations`` (the worker's own ``ALTER`` statements, their parameters as literals: the
#: sealed payloads, kept past an erasure), ``errors`` (error texts, which can quote a file),
#: ``settings``/``server_settings``, ``users``/``grants``, ``disks``, ``clusters``.
ALLOWED_SYSTEM_TABLES = frozenset(
    {"one", "numbers", "numbers_mt", "zeros", "zeros_mt", "tables", "columns"}
)

#: The allowed system tables with a row for every table of the database, the private ones
#: (:data:`PRIVATE_TABLES`) among them: read by the columns an analyst names, never by
#: the columns that count or measure a table's data (:data:`SIZE_WORDS`).
CATALOG_TABLES = frozenset({"tables", "columns"})

#: Words of the catalog's columns that count or measure a table's data: ``total_rows``,
#: ``total_bytes``, ``parts``, ``active_parts``, ``total_marks``, ``lifetime_rows``,
#: ``active_on_fly_data_mutations``, ``data_compressed_bytes``, ``marks_bytes``... (and
#: those a later ClickHouse adds so named). A statement that reads a catalog table may not
#: name a column holding one of them, whichever table the column is of, nor take columns
#: unnamed (``*``, ``t.*``, ``COLUMNS(...)``), nor use the table as a set (``x IN
#: system.tables`` matches every column).
SIZE_WORDS = ("rows", "bytes", "parts", "marks", "mutations", "size")

#: Nodes that take a table's columns without naming them.
_UNNAMED_COLUMNS = frozenset(
    {
        "Asterisk",
        "QualifiedAsterisk",
        "ColumnsRegexpMatcher",
        "ColumnsListMatcher",
        "QualifiedColumnsRegexpMatcher",
        "QualifiedColumnsListMatcher",
    }
)

#: The project's tables no analyst reads: the words of sensitive stated values
#: (migration 29), which only the block reads to serve what they mean.
PRIVATE_TABLES = frozenset({"stated_sensitive"})

#: Functions (lower case) that read files, dictionaries or models, reach another server
#: or a model's API, read the host, or write a log or a counter. ``sleep`` stays: the
#: time limit bounds it.
REFUSED_FUNCTIONS = frozenset(
    {
        "file",
        "joinget",
        "joingetornull",
        "hascolumnintable",
        "getserversetting",
        "getserverport",
        "tcpport",
        "hostname",
        "fqdn",
        "fullhostname",
        "getoskernelversion",
        "serveruuid",
        "getmacro",
        "displayname",
        "filesystemavailable",
        "filesystemcapacity",
        "filesystemunreserved",
        "showcertificate",
        "getclienthttpheader",
        "currentrequesturl",
        "logtrace",
        "generateserialid",
        "addresstoline",
        "addresstolinewithinlines",
        "addresstosymbol",
        "demangle",
        "catboostevaluate",
        "evalmlmethod",
        "globalvariable",
        "aigenerate",
        "aiclassify",
        "aiextract",
        "aitranslate",
        "aiembed",
        "aifilter",
        "aisimilarity",
        "airedact",
    }
)

#: Families refused by prefix (lower case): dictionaries (their sources may be files,
#: URLs or servers), embedded dictionaries (geo files), model files, and any ``ai`` +
#: capital (``aiGenerate``...: they call a model's API), which a later ClickHouse may add.
_REFUSED_PREFIXES = ("dict", "region", "naivebayes", "ai")

#: ``x IN db.table`` and its kin read a table named by an identifier: each of the eight
#: also as ``...IgnoreSet`` (``inIgnoreSet(x, t)``), which resolves the table the same way.
_IN_FUNCTIONS = frozenset(
    f"{name}{suffix}"
    for name in (
        "in",
        "notin",
        "globalin",
        "globalnotin",
        "nullin",
        "notnullin",
        "globalnullin",
        "globalnotnullin",
    )
    for suffix in ("", "ignoreset")
)

#: Node keys that only the outer clauses have (``INTO OUTFILE``, ``FORMAT``, ``SETTINGS``).
_CLAUSES = {
    "out_file": "INTO OUTFILE",
    "format_ast": "a FORMAT clause (the answer is JSON)",
    "settings_ast": "a SETTINGS clause (the worker sets the limits)",
    "compression": "INTO OUTFILE",
}

#: Keys a ``SHOW TABLES`` may carry: ``FROM`` the project's database, ``LIKE``, ``LIMIT``.
_SHOW_TABLES_KEYS = frozenset(
    {
        "type",
        "from",
        "like",
        "not_like",
        "case_insensitive_like",
        "limit_length",
        "is_outfile_append",
        "is_outfile_truncate",
        "is_into_outfile_with_stdout",
    }
)
#: The other statements ClickHouse gives as a ``ShowTablesQuery``: the key that marks each,
#: and its name in a refusal (``changed`` before ``settings``: SHOW CHANGED SETTINGS).
_SHOW_KINDS = {
    "databases": "SHOW DATABASES",
    "changed": "SHOW CHANGED SETTINGS",
    "settings": "SHOW SETTINGS",
    "merges": "SHOW MERGES",
    "clusters": "SHOW CLUSTERS",
    "cluster": "SHOW CLUSTER",
    "dictionaries": "SHOW DICTIONARIES",
    "caches": "SHOW FILESYSTEM CACHES",
    "temporary": "SHOW TEMPORARY TABLES",
    "full": "SHOW FULL TABLES",
}
_SHOW_COLUMNS_KEYS = frozenset(
    {
        "type",
        "table",
        "database",
        "like",
        "not_like",
        "case_insensitive_like",
        "limit_length",
        "extended",
        "full",
        "is_outfile_append",
        "is_outfile_truncate",
        "is_into_outfile_with_stdout",
    }
)

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
#: The canonical text (``formatQuery``) of the statements ``parseQueryToJSON`` cannot
#: serialize and that an analyst may send: one table name, nothing else.
_NAMED_TABLE = re.compile(
    rf"(?:DESCRIBE TABLE|SHOW CREATE TABLE|SHOW CREATE VIEW|EXISTS TABLE) ({_NAME})(?:\.({_NAME}))?"
)
_UNSUPPORTED = re.compile(
    r"AST node of type '([^'_]+?)(?: ?[Qq]uery)?(?:_[^']*)?' does not support"
)


def judge_canonical(text: str, database: str) -> bool:
    """Whether ``text`` (the canonical text of one statement) is a ``DESCRIBE TABLE``,
    ``SHOW CREATE TABLE|VIEW`` or ``EXISTS TABLE`` of one allowed table: True when it is,
    False when it is another kind of statement (for :func:`judge_tree`); raises
    :class:`SqlRefused` for one of those over a table the analyst may not read."""
    match = _NAMED_TABLE.fullmatch(text)
    if match is None:
        return False
    first, second = match.groups()
    _check_table([first, second] if second else [first], database)
    return True


def unsupported_statement(message: str) -> SqlRefused:
    """The refusal of a statement ClickHouse cannot give as a tree (its message says
    which node), e.g. ``SHOW PROCESSLIST`` or a ``DESCRIBE`` of a table function."""
    match = _UNSUPPORTED.search(message)
    kind = match.group(1) if match else "this statement"
    if kind == "Describe":
        return SqlRefused(
            "DESCRIBE of a table function or a query is not allowed: DESCRIBE TABLE one of "
            "the project's tables"
        )
    return SqlRefused(
        f"{kind} is not allowed: only SELECT/WITH, SHOW TABLES, SHOW COLUMNS, "
        "DESCRIBE TABLE, SHOW CREATE TABLE and EXISTS TABLE of the project's tables"
    )


def judge_tree(tree: Mapping[str, Any], database: str) -> None:
    """Raise :class:`SqlRefused`, naming what, unless the statement ``tree`` (ClickHouse's
    ``parseQueryToJSON``) only reads what an analyst may read."""
    kind = tree.get("type")
    if kind == "ShowTablesQuery":
        _check_show_tables(tree, database)
    elif kind == "ShowColumnsQuery":
        extra = set(tree) - _SHOW_COLUMNS_KEYS
        if extra:
            raise SqlRefused(f"SHOW COLUMNS with {sorted(extra)[0]} is not allowed")
        table = tree.get("table")
        db = tree.get("database")
        _check_table([db, table] if db else [table], database)
    elif kind not in ("SelectWithUnionQuery", "SelectIntersectExceptQuery", "SelectQuery"):
        raise SqlRefused(
            f"{_statement_name(str(kind))} is not allowed: only SELECT/WITH, SHOW and "
            "DESCRIBE over the project's tables"
        )
    for node in _walk(tree):
        _check_node(node, database)
    _check_catalog_columns(tree)


def parameter_names(tree: Mapping[str, Any]) -> set[str]:
    """The names of the query parameters (``{name:Type}``) the statement uses."""
    return {
        str(node.get("name"))
        for node in _walk(tree)
        if node.get("type") == "QueryParameter" and node.get("name")
    }


def _statement_name(kind: str) -> str:
    """``InsertQuery`` as ``Insert``, for a message."""
    return kind.removesuffix("Query") or "this statement"


def _check_show_tables(tree: Mapping[str, Any], database: str) -> None:
    extra = {k for k, v in tree.items() if k not in _SHOW_TABLES_KEYS and v not in (False, None)}
    if extra:
        label = next((v for k, v in _SHOW_KINDS.items() if k in extra), None)
        label = label or f"SHOW TABLES with {sorted(extra)[0]}"
        raise SqlRefused(f"{label} is not allowed: SHOW TABLES of the project's database only")
    source = tree.get("from")
    if source is not None:
        name = source.get("name") if isinstance(source, Mapping) else source
        if name != database:
            raise SqlRefused(f"SHOW TABLES FROM {name} is not allowed: the project's database only")


def _walk(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every object (node) in the tree, depth first."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _check_node(node: Mapping[str, Any], database: str) -> None:
    for key, label in _CLAUSES.items():
        if node.get(key) is not None:
            raise SqlRefused(f"{label} is not allowed")
    if node.get("is_into_outfile_with_stdout"):
        raise SqlRefused("INTO OUTFILE is not allowed")
    kind = node.get("type")
    if kind == "SetQuery":
        changes = node.get("changes") or ()
        names = ", ".join(str(c.get("name")) for c in changes if isinstance(c, Mapping))
        raise SqlRefused(f"a SETTINGS clause is not allowed ({names}): the worker sets the limits")
    if kind == "QueryParameter":
        if "identifier" in str(node.get("param_type", "")).lower():
            raise SqlRefused(
                f"query parameter {{{node.get('name')}:{node.get('param_type')}}} is not allowed: "
                "a name of a table or column cannot come from a parameter"
            )
    elif kind == "TableIdentifier":
        _check_table(_name_parts(node), database)
    elif kind == "TableExpression":
        function = node.get("table_function")
        if isinstance(function, Mapping):
            name = str(function.get("name", ""))
            if name.lower() not in ALLOWED_TABLE_FUNCTIONS:
                raise SqlRefused(
                    f"table function {name}() is not allowed: it may reach files, URLs, other "
                    "servers, processes or tables (allowed: numbers, zeros, values, "
                    "generate_series, primes)"
                )
    elif kind == "Function":
        _check_function(node, database)
    elif kind == "ColumnsApplyTransformer":
        _check_function_name(str(node.get("func_name", "")))


def _catalog_table(node: Mapping[str, Any]) -> str | None:
    """``system.tables`` for a node naming a catalog table (:data:`CATALOG_TABLES`)."""
    if node.get("type") not in ("TableIdentifier", "Identifier"):
        return None
    parts = [str(p).lower() for p in _name_parts(node)]
    if len(parts) == 2 and parts[0] == "system" and parts[1] in CATALOG_TABLES:
        return f"system.{parts[1]}"
    return None


def _check_catalog_columns(tree: Mapping[str, Any]) -> None:
    """Refuse, in a statement that reads a catalog table, what would show a table's rows or
    sizes (:data:`SIZE_WORDS`): a column so named, columns taken unnamed, the table as a set."""
    read = sorted({name for node in _walk(tree) if (name := _catalog_table(node))})
    if not read:
        return
    catalog = read[0]
    for node in _walk(tree):
        kind = node.get("type")
        if kind in _UNNAMED_COLUMNS:
            raise SqlRefused(
                f"every column of {catalog} (*, COLUMNS(...)) is not allowed: name the columns "
                "(a table's rows and sizes are not among them; count() for a count)"
            )
        if kind != "Identifier":
            continue
        as_set = _catalog_table(node)  # a FROM names a table as a TableIdentifier
        if as_set:
            raise SqlRefused(
                f"{as_set} as a set (x IN {as_set}) is not allowed: it matches every column"
            )
        name = ".".join(str(p) for p in _name_parts(node))
        if any(word in name.lower() for word in SIZE_WORDS):
            raise SqlRefused(
                f"column {name} is not allowed with {catalog}: a table's rows and sizes are "
                "not for analysts (the catalog lists the private tables too)"
            )


def _check_function(node: Mapping[str, Any], database: str) -> None:
    name = str(node.get("name", ""))
    _check_function_name(name)
    if name.lower() in _IN_FUNCTIONS:
        # ``x IN db.table`` reads a table named by an identifier.
        arguments = node.get("arguments")
        children = arguments.get("children") if isinstance(arguments, Mapping) else None
        if isinstance(children, list) and len(children) == 2:
            right = children[1]
            if isinstance(right, Mapping) and right.get("type") == "Identifier":
                _check_table(_name_parts(right), database)


def _check_function_name(name: str) -> None:
    lower = name.lower()
    refused = lower in REFUSED_FUNCTIONS or any(
        lower.startswith(p) and (p != "ai" or name[2:3].isupper()) for p in _REFUSED_PREFIXES
    )
    if refused:
        raise SqlRefused(
            f"function {name}() is not allowed: it reads files, dictionaries or the host, "
            "or reaches another server"
        )


def _name_parts(node: Mapping[str, Any]) -> list[str | None]:
    parts = node.get("name_parts")
    if isinstance(parts, list) and parts:
        return [str(p) for p in parts]
    return [str(node.get("name"))] if node.get("name") else [None]


def _check_table(parts: Sequence[str | None], database: str) -> None:
    """Refuse a table outside the project's database and the allowed system tables."""
    if any(p is None or p == "" for p in parts):
        raise SqlRefused("a table name given as a query parameter is not allowed")
    names = [str(p) for p in parts]
    if names[-1] in PRIVATE_TABLES and (len(names) == 1 or names[0] == database):
        raise SqlRefused(f"table {names[-1]} is not allowed: it is not for analysts")
    if len(names) == 1:
        return  # the project's database (the session's), or a WITH name
    if len(names) == 2:
        db, table = names
        if db == database:
            return
        if db.lower() == "system" and table.lower() in ALLOWED_SYSTEM_TABLES:
            return
    raise SqlRefused(
        f"table {'.'.join(names)} is not allowed: the project's tables and views, and "
        f"system.{{{', '.join(sorted(ALLOWED_SYSTEM_TABLES))}}}"
    )
