"""What analysts may query: every table and view, each column described, from the table
registry (``tables.py``).

`turnstream docs tables` renders this against the live schema into docs/tables.md; it
fails when a column exists without a declaration, a declaration has no column, or a type
differs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import get_args

from turnstream.adapters.clickhouse.current_views import CURRENT_VIEWS
from turnstream.core.tables import RETENTION, TABLES, Retention
from turnstream.core.tables import table as declared_table
from turnstream.core.time_edges import RAW_KEEP_DAYS
from turnstream.errors import StoreError

__all__ = [
    "AGGREGATES_AND_PEOPLE",
    "CATALOG",
    "INTERNAL",
    "RETENTION",
    "Entry",
    "Retention",
    "render_markdown",
]


def _retention_section() -> list[str]:
    lines = [
        "## Retention",
        "",
        "What each table promises to keep; `turnstream retention check` compares it with "
        "the oldest row the store holds and exits 1 when a table holds rows past its "
        f"window. The raw window of per-person evidence is {RAW_KEEP_DAYS} days: past it, what "
        "derivation needs lives in counts that cannot replay the evidence "
        '(docs/signals.md, "Retention").',
        "",
        "| table | dated by | kept | how |",
        "|---|---|---|---|",
    ]
    # The tables kept for a number of days first, then those kept.
    for name, r in sorted(RETENTION.items(), key=lambda item: item[1].days is None):
        kept = f"{r.days} days" if r.days is not None else "kept"
        lines.append(f"| `{name}` | {f'`{r.dated_by}`' if r.dated_by else ''} | {kept} | {r.how} |")
    return [*lines, ""]


_AGGREGATE_ROWS = (
    (
        "`value_daily`",
        "per level (8): up to 64 person keys (sipHash64 of the profile id); exposure, "
        "events, signal",
        "yes: a known person's key can be looked up. An erase records the key in "
        "`erased_people`; the next priors run rebuilds every state without it, then deletes "
        "the key (a test scans every table and view afterwards)",
    ),
    ("`ref_values_daily`", "per object: how often it showed the value", "no: no person in it"),
    (
        "`value_weekly`",
        "per ISO week (its Monday) and level: what `value_daily` holds for the week's days "
        "merged: up to 64 person keys (the capped union of the days' keys); exposure, "
        "events, signal summed",
        "yes, as `value_daily`: a key per person. An erase takes the key out of both at the "
        "next priors run (the same test scans every table and view afterwards)",
    ),
    (
        "`ref_values_weekly`",
        "per object and ISO week: how often it showed the value that week",
        "no: no person in it",
    ),
    (
        "`sensitive_daily`",
        "a sensitive type or field: items presented, engagements; never a value",
        "no",
    ),
    ("`interactions_daily`", "per kind: rows", "no"),
    ("`priors`", "counts and rates of values seen by 10 people or more", "no"),
)
AGGREGATES_AND_PEOPLE = "\n".join(
    [
        "## The daily aggregates and people",
        "",
        "| aggregate | per value and day it holds | can it identify a person? |",
        "|---|---|---|",
        *(f"| {a} | {held} | {who} |" for a, held, who in _AGGREGATE_ROWS),
        "",
        "A value seen by fewer than 64 people is counted exactly (every key is kept); from 64 up",
        "the levels are a sample, and the count an estimate within ~25%. So the floor (10 people,",
        "at most 64) is decided exactly, and no value and day holds more than 8 x 64 keys,",
        "whatever the traffic. The weekly roll-ups hold the same per value and week (a week's",
        "keys merged keep every person below 64 too), so the floor stays exact over weeks.",
        "",
    ]
)


@dataclass(frozen=True)
class Entry:
    kind: str  # "table", "roll-up" or "view"
    description: str
    columns: dict[str, str]


#: Analysts' tables and views: the registry's, as name -> entry.
CATALOG: dict[str, Entry] = {
    t.name: Entry(t.kind, t.description, {c.name: c.description for c in t.columns})
    for t in TABLES
    if not t.internal
}

#: The objects analysts do not query, described: a table here or in :data:`CATALOG`, or a
#: materialized view or a Null table (described from the live schema), else the page
#: refuses to render. Materialized views and Null tables need no entry.
INTERNAL: dict[str, str] = {t.name: t.description for t in TABLES if t.internal}

_NULL = (
    "a Null table: it keeps nothing. Rows inserted into it only pass through to the "
    "materialized views that read it"
)
_MV_TO = re.compile(r"\bTO\s+`?(?:\w+`?\.`?)?(\w+)`?", re.I)


#: An object of the database: name, engine, create statement, the views that read it.
_Object = tuple[str, str, str, list[str]]


def _internal_section(objects: list[_Object]) -> tuple[list[str], list[str]]:
    """The section of internal objects (lines) and what lacks a description."""
    lines = [
        "## Internal objects",
        "",
        "What the store holds beside the tables and views above: how it is fed and kept. "
        "Not for queries: they change between versions. A materialized view runs at each "
        "insert into the table it reads and writes its rows into its target.",
        "",
        "| object | engine | what it is |",
        "|---|---|---|",
    ]
    current = [
        "## Current views",
        "",
        "Tables that hold one current row per identity (or one summed row per key) only after "
        "ClickHouse merges them each have a view `<table>_current` that reads them `FINAL` "
        "(migration 28, `adapters/clickhouse/current_views.py`): on a ClickHouse server analysts "
        "read these.",
        "",
        "| view | reads | one row per |",
        "|---|---|---|",
    ]
    missing = []
    reads: dict[str, list[str]] = {}
    for name, _, _, dependents in objects:
        for view in dependents:
            reads.setdefault(view, []).append(name)
    for name, engine, create, _ in objects:
        if name in CATALOG:
            continue
        table = name.removesuffix("_current")
        if name != table and table in CURRENT_VIEWS:
            current.append(f"| `{name}` | `{table}` FINAL | {CURRENT_VIEWS[table]} |")
            continue
        if engine == "MaterializedView":
            target = _MV_TO.search(create)
            sources = ", ".join(f"`{t}`" for t in sorted(reads.get(name, ()))) or "?"
            what = f"writes into `{target[1] if target else '?'}` each insert into {sources}"
        elif engine == "Null":
            what = _NULL
        elif name in INTERNAL:
            what = INTERNAL[name]
        else:
            missing.append(f"{name}: no description (not declared in core/tables.py)")
            continue
        lines.append(f"| `{name}` | {engine} | {what} |")
    return [*current, "", *lines, ""], missing


def _values(annotation: object) -> str:
    """The values of a ``Literal`` (or an enum class), in backticks."""
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        found = [str(m.value) for m in annotation]
    else:
        found = [str(v) for v in get_args(annotation)]
    return ", ".join(f"`{v}`" for v in found)


def _value_sets_section() -> list[str]:
    """Every closed set of values a column takes, from the models and rules that define it."""
    from turnstream.core.derivation.inference import InferenceKind
    from turnstream.core.experiment_warnings import CODES
    from turnstream.core.ingest import Reason
    from turnstream.models import (
        EVIDENCED_VERDICTS,
        Claim,
        Verdict,
        commands,
        interactions,
        outcomes,
        turns,
    )

    def field(model: type, name: str) -> object:
        return model.model_fields[name].annotation  # type: ignore[attr-defined]

    kinds = sorted(interactions.INTERACTION_KINDS)
    rows = [
        ("`turn_claims.verdict`, `claims_minute.verdict`", _values(Verdict),
         "meanings in docs/claims.md; "
         + ", ".join(f"`{v}`" for v in sorted(EVIDENCED_VERDICTS))
         + " stand on evidence (`evidenced`)"),
        ("`turn_claims.action`", _values(field(Claim, "action")),
         "what the SDK's guard did with the claim"),
        ("`turn_claims.nature`", _values(field(Claim, "nature")), ""),
        ("`turn_claims.class`", _values(turns.ClaimClass), "empty when not given"),
        ("`interactions.kind`", ", ".join(f"`{k}`" for k in kinds), ""),
        ("`engaged` actions (`payload`)", _values(field(interactions.Engaged, "action")), ""),
        ("`feedback` polarity (`payload`)", _values(field(interactions.Feedback, "polarity")),
         ""),
        ("`presented` method (`payload`)", _values(field(interactions.Presented, "method")),
         ""),
        ("preference scope", _values(field(interactions.Preference, "scope")),
         "`turn` never reaches the store"),
        ("preference source", _values(field(interactions.Preference, "source")), ""),
        ("attribute source", _values(field(interactions.Attribute, "source")), ""),
        ("`outcomes.outcome`", _values(field(outcomes.Outcome, "outcome")), ""),
        ("`commands.command`", _values(field(commands.Command, "command")), ""),
        ("`inferences.kind`", _values(InferenceKind), ""),
        ("`inferences.status`", "`active`, `deleted`, `retracted`",
         "docs/signals.md"),
        ("`dead_letters.reason`", _values(Reason), "docs/limits.md"),
        ("`for`", "`self`, `gift`, `beneficiary:<id>`",
         "a keyword of SQL: write it as `` `for` `` in a query"),
        ("`experiment_results.verdict`", "starts with `wait:`, `act:` or `final:`",
         "then says why (docs/experiments.md)"),
        ("experiment warnings (`code`)", ", ".join(f"`{c}`" for c in CODES),
         "docs/experiments.md"),
    ]  # fmt: skip
    lines = [
        "## Value sets",
        "",
        "The closed sets of values columns take, read from the models and rules that define them.",
        "",
        "| where | values | note |",
        "|---|---|---|",
    ]
    lines += [f"| {where} | {values} | {note} |" for where, values, note in rows]
    return [*lines, ""]


def render_markdown(
    describe: Callable[[str], list[tuple[str, str]]],
    objects: Callable[[], list[_Object]],
) -> str:
    """The tables page, with each column's type read from the live schema.

    ``describe(name)`` returns ``(column, type)`` pairs; ``objects()`` every object of the
    database as ``(name, engine, create statement, the views that read it)``. Raises
    StoreError when the catalog and the schema disagree (a column or an internal object
    without a description).
    """
    lines = [
        "# Tables and views",
        "",
        "Generated by `turnstream docs tables` from the live schema; a test keeps it in step.",
        "",
        *_retention_section(),
        AGGREGATES_AND_PEOPLE,
        *_value_sets_section(),
    ]
    internal, problems = _internal_section(objects())
    for name, entry in CATALOG.items():
        live = describe(name)
        live_names = [c for c, _ in live]
        problems += [f"{name}.{c}: undeclared" for c in live_names if c not in entry.columns]
        problems += [f"{name}.{c}: not in the schema" for c in entry.columns if c not in live_names]
        declared = {c.name: c.type for c in declared_table(name).columns}
        problems += [
            f"{name}.{c}: {t} in the schema, {declared[c]} in core/tables.py"
            for c, t in live
            if c in declared and declared[c] != t
        ]
        lines += [f"## `{name}` ({entry.kind})", "", entry.description, ""]
        lines += ["| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c}` | `{t}` | {entry.columns.get(c, '')} |" for c, t in live]
        lines.append("")
    lines += internal
    if problems:
        raise StoreError("the catalog and the schema disagree: " + "; ".join(problems))
    return "\n".join(lines)
