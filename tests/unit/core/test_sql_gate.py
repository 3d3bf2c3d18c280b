"""The SQL gate's rules on trees shaped as ClickHouse's ``parseQueryToJSON`` gives them
(the hostile corpus through the real parser is in tests/integration/clickhouse)."""

from __future__ import annotations

from typing import Any

import pytest

from turnstream.core.sql_gate import (
    judge_canonical,
    judge_tree,
    parameter_names,
    unsupported_statement,
)
from turnstream.errors import SqlRefused

DB = "turnstream"


def _select(*, tables: list[dict[str, Any]] | None = None, **clauses: Any) -> dict[str, Any]:
    select: dict[str, Any] = {
        "type": "SelectQuery",
        "select": {"type": "ExpressionList", "children": clauses.pop("columns", [_lit(1)])},
    }
    if tables:
        select["tables"] = {
            "type": "TablesInSelectQuery",
            "children": [
                {"type": "TablesInSelectQueryElement", "table_expression": t} for t in tables
            ],
        }
    select |= clauses.pop("inner", {})
    return {
        "type": "SelectWithUnionQuery",
        "list_of_selects": {"type": "ExpressionList", "children": [select]},
        **clauses,
    }


def _lit(value: Any) -> dict[str, Any]:
    return {"type": "Literal", "value": {"field_type": "UInt64", "value": value}}


def _table(*parts: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "TableIdentifier", "name": ".".join(parts)}
    if len(parts) > 1:
        node["name_parts"] = list(parts)
    return {"type": "TableExpression", "database_and_table_name": node}


def _function(name: str, *args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Function", "name": name,
            "arguments": {"type": "ExpressionList", "children": list(args)}}  # fmt: skip


def _table_function(name: str) -> dict[str, Any]:
    return {"type": "TableExpression", "table_function": _function(name, _lit("x"))}


def _subquery(tree: dict[str, Any]) -> dict[str, Any]:
    return {"type": "TableExpression", "subquery": {"type": "Subquery", "children": [tree]}}


def _refused(tree: dict[str, Any]) -> str:
    with pytest.raises(SqlRefused) as caught:
        judge_tree(tree, DB)
    return str(caught.value)


def test_selects_over_the_project_and_allowed_system_tables_pass() -> None:
    judge_tree(_select(tables=[_table("turns")]), DB)
    judge_tree(_select(tables=[_table(DB, "turns")]), DB)
    judge_tree(_select(tables=[_table("system", "columns"), _table("SYSTEM", "One")]), DB)
    judge_tree(_select(tables=[_table_function("numbers"), _table_function("generateSeries")]), DB)
    judge_tree(_select(columns=[_function("count"), _function("sleep", _lit(0))]), DB)


@pytest.mark.parametrize(
    ("tree", "named"),
    [
        (_select(tables=[_table("system", "users")]), "system.users"),
        (_select(tables=[_table("default", "turns")]), "default.turns"),
        (_select(tables=[_table("Turnstream", "turns")]), "Turnstream.turns"),  # case counts
        (_select(tables=[_table("a", "b", "c")]), "a.b.c"),
        (_select(tables=[_table_function("file")]), "file()"),
        (_select(tables=[_table_function("URL")]), "URL()"),
        (_select(tables=[_table_function("remoteSecure")]), "remoteSecure()"),
        (_select(tables=[_table_function("view")]), "view()"),
        (_select(columns=[_function("file", _lit("/etc/passwd"))]), "file()"),
        (_select(columns=[_function("dictGetString")]), "dictGetString()"),
        (_select(columns=[_function("regionToName")]), "regionToName()"),
        (_select(columns=[_function("aiGenerate")]), "aiGenerate()"),
        (_select(columns=[_function("AIGENERATE")]), "AIGENERATE()"),
        (_select(columns=[_function("aiSomethingNew")]), "aiSomethingNew()"),
        (_select(columns=[_function("naiveBayesClassifier")]), "naiveBayesClassifier()"),
        (_select(columns=[_function("FQDN")]), "FQDN()"),
        (_select(out_file=_lit("/tmp/x")), "INTO OUTFILE"),
        (_select(is_into_outfile_with_stdout=True), "INTO OUTFILE"),
        (_select(format_ast={"type": "Identifier", "name": "CSV"}), "FORMAT"),
        (_select(settings_ast={"type": "SetQuery", "changes": []}), "SETTINGS"),
        (_select(inner={"settings": {"type": "SetQuery",
                                     "changes": [{"name": "readonly"}]}}), "readonly"),
        (_select(columns=[{"type": "QueryParameter", "name": "t",
                           "param_type": "Identifier"}]), "{t:Identifier}"),
        (_select(columns=[{"type": "QueryParameter", "name": "t",
                           "param_type": "Array(Identifier)"}]), "Identifier"),
        (_select(columns=[_function("in", _lit(1), {"type": "Identifier",
                                                   "name_parts": ["system", "users"]})]),
         "system.users"),
        (_select(columns=[_function("inIgnoreSet", _lit(1), {"type": "Identifier",
                                                            "name": "stated_sensitive"})]),
         "stated_sensitive"),
        (_select(columns=[_function("globalNotIn", _lit(1), {"type": "Identifier",
                                                            "name_parts": ["x", "y"]})]),
         "x.y"),
        (_select(columns=[{"type": "Asterisk", "transformers": {"type": "ColumnsTransformerList",
                 "children": [{"type": "ColumnsApplyTransformer", "func_name": "file"}]}}]),
         "file()"),
        ({"type": "InsertQuery"}, "Insert is not allowed"),
        ({"type": "SetQuery", "changes": []}, "Set is not allowed"),
        ({"type": "ExplainQuery"}, "Explain is not allowed"),
        ({"type": "ShowTablesQuery", "databases": True}, "SHOW DATABASES"),
        ({"type": "ShowTablesQuery", "from": {"type": "Identifier", "name": "system"}},
         "FROM system"),
        ({"type": "ShowTablesQuery", "dictionaries": True}, "SHOW DICTIONARIES"),
        ({"type": "ShowTablesQuery", "settings": True, "changed": True}, "SHOW CHANGED SETTINGS"),
        ({"type": "ShowTablesQuery", "merges": True}, "SHOW MERGES"),
        ({"type": "ShowTablesQuery", "novel": True}, "SHOW TABLES with novel"),
        ({"type": "SelectWithUnionQuery", "list_of_selects": [
            {"type": "Function", "name": "fullHostName"}]}, "fullHostName()"),
        ({"type": "SelectWithUnionQuery", "list_of_selects": [
            {"type": "TableIdentifier", "name_parts": ["system", "mutations"]}]},
         "system.mutations"),
        ({"type": "ShowColumnsQuery", "table": "users", "database": "system"}, "system.users"),
    ],
)  # fmt: skip
def test_what_reaches_outside_is_refused_by_name(tree: dict[str, Any], named: str) -> None:
    assert named in _refused(tree)


def test_a_refused_table_function_deep_in_subqueries_is_found() -> None:
    tree = _select(tables=[_table_function("url")])
    for _ in range(50):
        tree = _select(tables=[_subquery(tree)])
    assert "url()" in _refused(tree)
    judge_tree(_select(tables=[_subquery(_select(tables=[_table("turns")]))]), DB)


def test_show_tables_of_the_project_only() -> None:
    judge_tree({"type": "ShowTablesQuery"}, DB)
    judge_tree({"type": "ShowTablesQuery", "from": {"type": "Identifier", "name": DB},
                "like": "turn%", "databases": False}, DB)  # fmt: skip
    judge_tree({"type": "ShowColumnsQuery", "table": "turns"}, DB)


def test_canonical_named_table_statements() -> None:
    assert judge_canonical("DESCRIBE TABLE turns", DB)
    assert judge_canonical(f"SHOW CREATE VIEW {DB}.signal_state", DB)
    assert judge_canonical("EXISTS TABLE system.columns", DB)
    assert not judge_canonical("SELECT 1", DB)
    # Anything else about the statement and it is not this form: judged as a tree.
    assert not judge_canonical("DESCRIBE TABLE turns\nSETTINGS a = 1", DB)
    assert not judge_canonical("DESCRIBE TABLE file('x')", DB)
    assert not judge_canonical("DESCRIBE TABLE `we;ird`", DB)
    with pytest.raises(SqlRefused, match=r"system\.users"):
        judge_canonical("SHOW CREATE TABLE system.users", DB)


def test_unsupported_statements_are_named() -> None:
    message = "AST node of type 'ShowProcesslistQuery' does not support JSON serialization"
    assert "ShowProcesslist is not allowed" in str(unsupported_statement(message))
    describe = "AST node of type 'DescribeQuery' does not support JSON serialization"
    assert "DESCRIBE of a table function" in str(unsupported_statement(describe))
    odd = "AST node of type 'ShowCreateTableQuery_t_x' does not support JSON serialization"
    assert "ShowCreateTable is not allowed" in str(unsupported_statement(odd))
    spaced = "AST node of type 'SHOW CREATE USER query' does not support JSON serialization"
    assert str(unsupported_statement(spaced)).startswith("SHOW CREATE USER is not allowed")


def test_parameter_names() -> None:
    a = {"type": "QueryParameter", "name": "a", "param_type": "String"}
    b = {"type": "QueryParameter", "name": "b", "param_type": "UInt8"}
    tree = _select(columns=[a, b])
    assert parameter_names(tree) == {"a", "b"}
    assert parameter_names(_select()) == set()


@pytest.mark.parametrize("parts", [("stated_sensitive",), (DB, "stated_sensitive")])
def test_the_words_of_sensitive_stated_values_are_refused(parts: tuple[str, ...]) -> None:
    judge_tree(_select(tables=[_table("stated")]), DB)  # the stated rows: the field only
    message = _refused(_select(tables=[_subquery(_select(tables=[_table(*parts)]))]))
    assert "stated_sensitive is not allowed: it is not for analysts" in message


def _column(*parts: str) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "Identifier", "name": ".".join(parts)}
    if len(parts) > 1:
        node["name_parts"] = list(parts)
    return node


def test_the_catalog_is_read_by_the_columns_named() -> None:
    """system.tables and system.columns list the private tables too: names and types, not
    sizes."""
    catalog = _table("system", "tables")
    named = [_column("name"), _column("engine"), _column("create_table_query")]
    judge_tree(_select(tables=[catalog], columns=named), DB)
    judge_tree(_select(tables=[_table("SYSTEM", "Columns")], columns=[_column("type")]), DB)
    judge_tree(_select(tables=[catalog], columns=[_function("count")]), DB)
    # A size word is a column of the catalog's only in a statement that reads it.
    judge_tree(_select(tables=[_table("turns")], columns=[_column("rows")]), DB)


@pytest.mark.parametrize(
    ("table", "columns", "named"),
    [
        ("tables", [_column("total_rows")], "column total_rows is not allowed with system.tables"),
        ("tables", [_column("t", "total_bytes")], "column t.total_bytes"),
        ("tables", [_column("system", "tables", "active_parts")], "system.tables.active_parts"),
        ("tables", [_function("sum", _column("lifetime_rows"))], "lifetime_rows"),
        ("tables", [_column("Total_Marks")], "Total_Marks"),
        ("tables", [_column("active_on_fly_data_mutations")], "mutations"),
        ("tables", [_column("total_rows_of_a_later_clickhouse")], "total_rows_of_a_later"),
        ("columns", [_column("data_compressed_bytes")], "with system.columns"),
        ("columns", [_column("marks_bytes")], "marks_bytes"),
        ("tables", [{"type": "Asterisk"}], "every column of system.tables (*, COLUMNS(...))"),
        ("tables", [{"type": "QualifiedAsterisk"}], "every column"),
        ("columns", [{"type": "ColumnsRegexpMatcher", "pattern": "bytes"}], "every column"),
        ("tables", [{"type": "QualifiedColumnsListMatcher"}], "every column"),
        ("tables", [_function("in", _lit(1), _column("system", "columns"))],
         "system.columns as a set"),
    ],
)  # fmt: skip
def test_a_tables_rows_and_sizes_in_the_catalog_are_refused(
    table: str, columns: list[dict[str, Any]], named: str
) -> None:
    """The size columns of the catalog tables, or every column taken unnamed, anywhere in a
    statement that reads one: in its WHERE, a subquery, as a set."""
    assert named in _refused(_select(tables=[_table("system", table)], columns=columns))
    where = {"where": {"type": "Function", "name": "greater", "arguments": {
        "type": "ExpressionList", "children": [*columns, _lit(0)]}}}  # fmt: skip
    deep = _select(tables=[_table("turns")], inner=where)
    deep["list_of_selects"]["children"].append(_select(tables=[_table("system", table)]))
    assert named in _refused(deep)


def test_the_data_parts_are_refused() -> None:
    """Each row of system.parts is a data part of a table, the private ones' too."""
    for columns in ([_column("name")], [_function("count")]):
        message = _refused(_select(tables=[_table("system", "parts")], columns=columns))
        assert message.startswith("table system.parts is not allowed")
