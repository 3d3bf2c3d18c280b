"""The migrations are files, one each, read in the order of their numbers."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from turnstream.adapters.clickhouse import schema
from turnstream.adapters.clickhouse.exposure_weight import weight_micro_sql
from turnstream.adapters.clickhouse.migrations import load_migrations, parse_migration

_FILES = files("turnstream.adapters.clickhouse.migrations")


def _texts() -> list[str]:
    return [f.read_text(encoding="utf-8") for f in _FILES.iterdir() if f.name.endswith(".sql")]


def test_a_file_gives_its_name_and_statements_without_the_comments() -> None:
    text = (
        "-- name: two things\n-- why\n\n-- the first\nCREATE TABLE a (\n    x UInt8\n);\n\n"
        "DROP TABLE b;\n"
    )
    migration = parse_migration(7, text, "0007_two.sql")
    assert migration.version == 7 and migration.name == "two things"
    assert migration.statements == ("CREATE TABLE a (\n    x UInt8\n)", "DROP TABLE b")


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        ("CREATE TABLE a (x UInt8);\n", "first line"),
        ("-- name: open\nCREATE TABLE a (x UInt8)\n", "does not end with ';'"),
        ("-- name: empty\n-- nothing\n", "no statement"),
    ],
)
def test_a_malformed_file_is_refused_naming_it(text: str, refusal: str) -> None:
    with pytest.raises(ValueError, match=f"0009_x.sql: .*{refusal}"):
        parse_migration(9, text, "0009_x.sql")


def test_two_files_of_one_number_are_refused(tmp_path: Path) -> None:
    (tmp_path / "0001_one.sql").write_text("-- name: one\nSELECT 1;\n")
    (tmp_path / "0002_two.sql").write_text("-- name: two\nSELECT 2;\n")
    assert [m.version for m in load_migrations(tmp_path)] == [1, 2]  # type: ignore[arg-type]
    (tmp_path / "0002_other.sql").write_text("-- name: other\nSELECT 3;\n")
    with pytest.raises(ValueError, match="another migration has the number 2"):
        load_migrations(tmp_path)  # type: ignore[arg-type]


def test_a_file_misnamed_is_refused(tmp_path: Path) -> None:
    (tmp_path / "12_short.sql").write_text("-- name: short\nSELECT 1;\n")
    with pytest.raises(ValueError, match=r"named NNNN_words\.sql"):
        load_migrations(tmp_path)  # type: ignore[arg-type]


def test_the_schema_s_migrations_are_the_files() -> None:
    assert load_migrations() == schema.MIGRATIONS
    assert len(schema.MIGRATIONS) == len(_texts()) >= 28


def test_the_recomputed_summaries_run_the_sql_their_views_were_made_with() -> None:
    texts = "\n".join(_texts())
    for sql in (
        schema.SPLIT_VALUES,
        schema.VALUES_FROM_STAGE,
        schema.REF_VALUES_FROM_STAGE,
        schema.SENSITIVE_FROM_STAGE,
        schema.VALUE_WEEKS,
        schema.REF_VALUES_WEEKS,
    ):
        assert sql in texts, sql[:80]


def test_every_weight_in_the_migrations_is_the_one_weight() -> None:
    sql = "\n".join(
        line for text in _texts() for line in text.splitlines() if not line.startswith("--")
    )
    assert sql.count("log2") == sql.count(weight_micro_sql("pos")) >= 4
