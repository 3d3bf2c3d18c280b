"""The SQL that gives each space's analysts their own rows on a ClickHouse server: per
space a role (``turnstream_analyst_<space>``) granted SELECT on the tables and views
that hold a ``space_id``, and a row policy per table that lets the role see its space's
rows only. Generated from the configured spaces (``turnstream analysts-sql``), applied
by an operator with an administrator's account; users are made by the operator and
given the role (docs/scaling.md). Space ids and the database name are checked against
strict patterns before they are written into the SQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from turnstream.adapters.clickhouse.current_views import CURRENT_VIEWS, current_view
from turnstream.errors import ConfigError
from turnstream.models.common import SPACE_ID_PATTERN

__all__ = ["ANALYST_TABLES", "ANALYST_VIEWS", "NOT_FOR_ANALYSTS", "analyst_role", "analyst_sql"]

#: Tables with a ``space_id`` an analyst of the space reads (each gets the row policy).
ANALYST_TABLES: tuple[str, ...] = (
    "turns", "interactions", "turn_claims", "turn_constraints", "outcomes", "commands",
    *(t for t in CURRENT_VIEWS if t != "erase_tombstones"),
    "value_daily", "value_weekly",
)  # fmt: skip
#: Views an analyst reads (each reads the tables above as the analyst: the policies hold).
ANALYST_VIEWS: tuple[str, ...] = (
    *(current_view(t) for t in CURRENT_VIEWS if t != "erase_tombstones"),
    "effective_exposure", "already_presented", "priors_latest", "field_priors_latest",
    "context_use_claims",
    "context_use_constraints", "context_use_constraint_rates", "context_use_turns",
    "contract_versions",
)  # fmt: skip
#: Tables with a ``space_id`` no analyst reads, and why.
NOT_FOR_ANALYSTS: dict[str, str] = {
    "dead_letters": "refused items as sent, before any check (an operator's)",
    "idempotency_keys": "the ingest sink's de-duplication keys",
    "erase_subjects": "erasures in progress",
    "erased_people": "who was erased (an operator's)",
    "erase_tombstones": "who was erased, through when (an operator's; its view too)",
    "interaction_values": "a staging table (Null engine): holds nothing",
    "summary_repairs": "the sink's own record of a repair in progress (a day's life)",
    "stated_sensitive": "the words of sensitive stated values (the block's only)",
    "rederived": "the priors job's own mark of the priors each space was derived again with",
}

_SPACE = re.compile(SPACE_ID_PATTERN)  # as the wire's space_id
_DATABASE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def analyst_role(space_id: str) -> str:
    """The role of a space's analysts."""
    return f"turnstream_analyst_{space_id}"


def analyst_sql(space_ids: Iterable[str], database: str) -> list[str]:
    """Every statement (idempotent: re-run after adding a space or a table) that makes
    the role, grants and row policies of each space in ``space_ids``."""
    if not _DATABASE.fullmatch(database):
        raise ConfigError(f"store.database: {database!r} is not a plain identifier")
    out: list[str] = []
    for space in sorted(set(space_ids)):
        if not _SPACE.fullmatch(space):
            raise ConfigError(f"spaces.{space}: not a space id ([a-z0-9][a-z0-9_-]{{0,63}})")
        role = f"`{analyst_role(space)}`"
        out.append(f"CREATE ROLE IF NOT EXISTS {role}")
        for table in ANALYST_TABLES:
            out.append(
                f"CREATE ROW POLICY OR REPLACE `turnstream_space_{space}` "
                f"ON `{database}`.`{table}` AS PERMISSIVE FOR SELECT "
                f"USING space_id = '{space}' TO {role}"
            )
        for relation in (*ANALYST_TABLES, *ANALYST_VIEWS):
            out.append(f"GRANT SELECT ON `{database}`.`{relation}` TO {role}")
    return out
