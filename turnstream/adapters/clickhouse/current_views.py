"""The ``<table>_current`` views: each table whose rows are one current row per identity
only after a merge (ReplacingMergeTree) or one summed row per key only after a merge
(SummingMergeTree), read ``FINAL``. Without ``FINAL`` a reader sees the versions not yet
merged away (``inferences`` of one store: 1,622 rows read without it, 1,538 with it),
so analysts read these views, not the tables.

A view's ``SELECT *`` is fixed when it is created: a migration that adds a column to one
of these tables recreates its view (a test compares every view's columns with its
table's).
"""

from __future__ import annotations

__all__ = ["CURRENT_VIEWS", "NOT_VIEWED", "current_view", "current_view_statements"]

#: Table -> what one current row is (the table needs FINAL for it).
CURRENT_VIEWS: dict[str, str] = {
    "inferences": "one row per inference id (its latest status and weight)",
    "exposure_items": "one row per exposure item",
    "signal_state": "one row per person: their folded evidence",
    "stated": "one row per stated constraint",
    "review_requests": "one row per review request (its latest status)",
    "experiment_assignments": "one row per person and experiment",
    "experiment_results": "one row per experiment, arm and day (the latest computation)",
    "priors": "one row per space, priors version, attribute and value",
    "field_priors": "one row per space, priors version and field",
    "erase_tombstones": "one row per erased person",
    "webhook_events": "one row per webhook event",
    "claims_minute": "one summed row per claim key and minute",
    "constraints_minute": "one summed row per constraint key and minute",
    "turns_minute": "one summed row per turn key and minute",
    "interactions_daily": "one summed row per space, day and kind",
    "ref_values_daily": "one summed row per ref, attribute, value and day",
    "ref_values_weekly": "one summed row per ref, attribute, value and week",
    "sensitive_daily": "one summed count per sensitive name and day",
}

#: Tables that need FINAL but get no view: not for analysts.
NOT_VIEWED: dict[str, str] = {
    "schema_migrations": "the store's own record of migrations",
    "webhook_deliveries": "the webhook sender's outbox state (no space)",
    "rederived": "the priors job's own mark (one row per space, read with FINAL)",
}


def current_view(table: str) -> str:
    """The name of ``table``'s current view."""
    return f"{table}_current"


def current_view_statements() -> tuple[str, ...]:
    """The statements that create every current view (idempotent)."""
    return tuple(
        f"CREATE VIEW IF NOT EXISTS {current_view(t)} AS SELECT * FROM {t} FINAL"
        for t in CURRENT_VIEWS
    )
