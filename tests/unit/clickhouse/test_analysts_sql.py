"""The analysts' SQL as text: one role per space, a row policy per table that names the
space's role only, grants that never reach a table no analyst reads, and refusals of a
space id or database name that could escape its quotes."""

from __future__ import annotations

import pytest

from turnstream.adapters.clickhouse.analysts import (
    ANALYST_TABLES,
    NOT_FOR_ANALYSTS,
    analyst_role,
    analyst_sql,
)
from turnstream.errors import ConfigError


def test_each_space_gets_its_role_its_policies_and_nothing_else() -> None:
    statements = analyst_sql(["lumen", "acme", "acme"], "ts")
    assert statements[0] == "CREATE ROLE IF NOT EXISTS `turnstream_analyst_acme`"
    assert sum(s.startswith("CREATE ROLE") for s in statements) == 2
    inferences = [s for s in statements if s.startswith("CREATE ROW") and "`inferences`" in s]
    assert inferences == [
        "CREATE ROW POLICY OR REPLACE `turnstream_space_acme` ON `ts`.`inferences` AS PERMISSIVE "
        "FOR SELECT USING space_id = 'acme' TO `turnstream_analyst_acme`",
        "CREATE ROW POLICY OR REPLACE `turnstream_space_lumen` ON `ts`.`inferences` AS "
        "PERMISSIVE FOR SELECT USING space_id = 'lumen' TO `turnstream_analyst_lumen`",
    ]
    for table in NOT_FOR_ANALYSTS:
        assert not [s for s in statements if f"`{table}`" in s], table
    assert not [s for s in statements if "erase_tombstones" in s]  # nor its view
    for table in ANALYST_TABLES:
        assert f"GRANT SELECT ON `ts`.`{table}` TO `{analyst_role('lumen')}`" in statements


def test_no_spaces_no_statements() -> None:
    assert analyst_sql([], "ts") == []


@pytest.mark.parametrize(
    "space",
    ["acme' OR 1=1 --", "Acme", "a`b", "", "-lead", "x" * 65, "ação", "a b", "a\nb"],
)
def test_a_space_id_that_could_escape_is_refused_naming_it(space: str) -> None:
    with pytest.raises(ConfigError, match=r"^spaces\."):
        analyst_sql(["acme", space], "ts")


def test_the_longest_space_id_passes() -> None:
    assert analyst_sql(["a" * 64], "ts")


@pytest.mark.parametrize("database", ["ts`; DROP TABLE x", "", "1ts", "ts.db", "ts-db"])
def test_a_database_name_that_is_not_an_identifier_is_refused(database: str) -> None:
    with pytest.raises(ConfigError, match=r"^store\.database"):
        analyst_sql(["acme"], database)
