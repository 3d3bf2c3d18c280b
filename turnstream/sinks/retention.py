"""Keeping the retention promise of ``tables.RETENTION`` in the store: fold the
derivation states whose evidence aged out, then delete what any table holds past its
window (TTL removes it at a merge; this does not wait for one). Blocking."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.state import ProfileState
from turnstream.core.derivation.window import evidence_from, expire
from turnstream.sinks.store import Store
from turnstream.sinks.tables import RETENTION

__all__ = ["Folded", "enforce_retention", "fold_states"]

#: States folded per page (one read, one insert): one person's state is ~1-50 kB of JSON.
_BATCH = 1000


@dataclass
class Folded:
    """What :func:`enforce_retention` did."""

    states: int = 0
    signals: int = 0
    pages: int = 0
    deleted: dict[str, int] = field(default_factory=dict)
    #: Pages of people the fold read and wrote (``fold_states``' ``page`` each).
    pages_read: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"states": self.states, "signals": self.signals, "pages": self.pages,
                "deleted": dict(self.deleted)}  # fmt: skip


def _cut(now: datetime, days: int) -> datetime:
    return now - timedelta(days=days)


def _states(store: Store, keys: list[Any]) -> list[Any]:
    """The newest state and version of each ``(space_id, profile_id)`` of ``keys``."""
    by_space: dict[str, list[str]] = {}
    for space_id, profile_id in keys:
        by_space.setdefault(space_id, []).append(profile_id)
    out: list[Any] = []
    for space_id, ids in by_space.items():
        out += store.query(
            "SELECT space_id, profile_id, argMax(state, version), max(version) "
            "FROM signal_state WHERE space_id = {space:String} "
            "AND profile_id IN {ids:Array(String)} GROUP BY space_id, profile_id",
            {"space": space_id, "ids": ids},
        ).rows
    return out


def fold_states(
    store: Store, now: datetime, config: SignalsConfig, folded: Folded, page: int = _BATCH
) -> None:
    """Settle and drop the evidence older than the raw window (by ``now``) of every state
    that holds some, ``page`` people at a time, writing each again with the next version,
    then delete the rows that held it. A state the engine rewrites meanwhile has a newer
    version and stays."""
    cut = _cut(now, config.raw_window_days)
    # The keys first (ids only), then the states a page of people at a time through the
    # primary key: memory holds one page of states (~1-50 kB each), not every state
    # (a million idle people held ~70 GB of JSON at once).
    keys = store.query(
        "SELECT DISTINCT space_id, profile_id FROM signal_state "
        "WHERE evidence_from < {cut:DateTime64(3, 'UTC')} ORDER BY space_id, profile_id",
        {"cut": cut},
    ).rows
    if not keys:
        return
    newest = 0
    for start in range(0, len(keys), page):
        rows = []
        for space_id, profile_id, text, version in _states(store, keys[start : start + page]):
            state = ProfileState.from_dict(json.loads(text))
            done = expire(state, cut, config)
            folded.signals += done.signals
            folded.pages += done.pages
            body = json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)
            rows.append([profile_id, space_id, body, version + 1, evidence_from(state)])
            newest = max(newest, version)
        store.insert(
            "signal_state", rows, ["profile_id", "space_id", "state", "version", "evidence_from"]
        )
        folded.states += len(rows)
        folded.pages_read += 1
    # Only rows read here (versions up to the newest read) and past the cut: the folded
    # rows are newer and hold nothing past it.
    _delete(store, "signal_state", "evidence_from < {cut:DateTime64(3, 'UTC')} "
            "AND version <= {newest:UInt64}", {"cut": cut, "newest": newest}, folded)  # fmt: skip


def _delete(
    store: Store, table: str, where: str, parameters: dict[str, Any], folded: Folded
) -> None:
    count = int(store.scalar(f"SELECT count() FROM `{table}` WHERE {where}", parameters) or 0)
    if count:
        store.command(f"ALTER TABLE `{table}` DELETE WHERE {where}", {"mutations_sync": 2},
                      parameters)  # fmt: skip
        folded.deleted[table] = folded.deleted.get(table, 0) + count


def enforce_retention(store: Store, now: datetime, config: SignalsConfig) -> Folded:
    """Fold the states, then delete every row past its table's window (a mutation only
    where there is one)."""
    folded = Folded()
    fold_states(store, now, config, folded)
    tables = {name for (name,) in store.query(
        "SELECT name FROM system.tables WHERE database = currentDatabase()").rows}  # fmt: skip
    for table, promise in RETENTION.items():
        if promise.days is None or promise.dated_by is None or table not in tables:
            continue
        if table == "signal_state":
            continue  # folded above: its rows are states, not evidence to delete whole
        column = promise.dated_by
        _delete(store, table, f"`{column}` < {{cut:DateTime64(3, 'UTC')}}",
                {"cut": _cut(now, promise.days)}, folded)  # fmt: skip
    return folded
