"""The context-use report: what agents claimed on evidence, and constraints sent,
verifiable and violated. SQL over the documented views, nothing else; the filters travel
as query parameters (:meth:`ReportQuery.parameters`), never in the SQL text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from turnstream.adapters.clickhouse.store import Store

__all__ = ["DIMENSIONS", "ReportQuery", "read_context_use"]

#: What the report may be broken down by.
DIMENSIONS = ("space_id", "source", "agent")


@dataclass(frozen=True)
class ReportQuery:
    """Filters and breakdown of one report; each method returns one section's SQL."""

    space: str | None = None
    since: date | None = None
    by: Sequence[str] = ("source", "agent")

    def __post_init__(self) -> None:
        bad = [d for d in self.by if d not in DIMENSIONS]
        if bad or not self.by:
            raise ValueError(f"--by takes some of {', '.join(DIMENSIONS)} (got {', '.join(bad)})")

    def parameters(self) -> dict[str, Any]:
        """The query parameters of every section's SQL (JSON-ready: dates as text)."""
        params: dict[str, Any] = {}
        if self.space is not None:
            params["space"] = self.space
        if self.since is not None:
            params["since"] = self.since.isoformat()
        return params

    def _where(self) -> str:
        clauses = []
        if self.space is not None:
            clauses.append("space_id = {space:String}")
        if self.since is not None:
            clauses.append("day >= {since:Date}")
        return ("WHERE " + " AND ".join(clauses)) if clauses else ""

    def claims(self) -> str:
        """Claims, evidenced and the rate per breakdown."""
        by = ", ".join(self.by)
        return (
            f"SELECT {by}, n AS claims, e AS evidenced, round(e / n, 4) AS evidenced_rate "
            f"FROM (SELECT {by}, sum(claims) AS n, sum(evidenced) AS e "
            f"FROM context_use_claims {self._where()} GROUP BY {by}) ORDER BY {by}"
        )

    def verdicts(self) -> str:
        """Claims per breakdown, category and verdict."""
        by = ", ".join(self.by)
        return (
            f"SELECT {by}, category, verdict, sum(claims) AS claims, "
            f"sum(evidenced) AS evidenced FROM context_use_claims {self._where()} "
            f"GROUP BY {by}, category, verdict ORDER BY {by}, category, claims DESC, verdict"
        )

    def turns(self) -> str:
        """Turns and what the claims guard did, per breakdown."""
        by = ", ".join(self.by)
        return (
            f"SELECT {by}, sum(turns) AS turns, sum(guard_acted) AS guard_acted, "
            f"sum(guard_budget_exceeded) AS guard_budget_exceeded, "
            f"sum(internal_text_found) AS internal_text_found "
            f"FROM context_use_turns {self._where()} GROUP BY {by} ORDER BY {by}"
        )

    def constraints(self) -> str:
        """Sent, verifiable, violated per breakdown and tool."""
        by = ", ".join(self.by)
        return (
            f"SELECT {by}, tool, c AS calls, s AS sent, rc AS results_checked, "
            f"vf AS verifiable, v AS violations, u AS unverifiable, r AS relaxed, "
            f"if(vf > 0, round(v / vf, 4), NULL) AS violation_rate "
            f"FROM (SELECT {by}, tool, sum(calls) AS c, sum(sent) AS s, "
            f"sum(results_checked) AS rc, sum(verifiable) AS vf, sum(violations) AS v, "
            f"sum(unverifiable) AS u, sum(relaxed) AS r "
            f"FROM context_use_constraints {self._where()} GROUP BY {by}, tool) "
            f"ORDER BY {by}, tool"
        )


def read_context_use(store: Store, query: ReportQuery) -> dict[str, list[dict[str, Any]]]:
    """Every section of the report as rows of dictionaries (``GET /v1/context-use``):
    ``claims``, ``claims_by_verdict``, ``turns``, ``constraints``."""
    sections = {
        "claims": query.claims(),
        "claims_by_verdict": query.verdicts(),
        "turns": query.turns(),
        "constraints": query.constraints(),
    }
    params = query.parameters()
    return {name: store.query(sql, params).as_dicts() for name, sql in sections.items()}
