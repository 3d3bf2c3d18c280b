"""Nightly field priors: each field's prior fitted across a space's people (issue 36).

Run by :func:`turnstream.jobs.priors.recompute_priors` after a space's value priors, on
the people's folded states (``signal_state``, their newest version each): every person's
own counts per field, as derivation's second pass gives them to the field posterior
(:func:`~turnstream.core.derivation.derive.field_counts`, with the value priors just
written), then :func:`~turnstream.core.derivation.field_prior.fit_field_prior` per field.
A field with evidence from fewer than ``floor`` people gets no row (derivation keeps the
configured ``taste_prior`` for it). At most :data:`MAX_PEOPLE` people a space are read,
the same ones every night (the first by a hash of their id): a few hundred people fix a
share and a lift; the cost stays bounded whatever the space's size.

Rows are versioned like the value priors (the as-of day): rewriting a version replaces
the space's rows, and rewriting it with the same content writes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from turnstream.adapters.clickhouse.derivations import load_states
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation.derive import field_counts
from turnstream.core.derivation.field_prior import FIT_FLOOR, FieldPrior, fit_field_prior
from turnstream.models.object_types import ObjectTypes

__all__ = ["MAX_PEOPLE", "fit_space", "write_field_priors"]

#: People a space's fit reads at most (the same ones every night).
MAX_PEOPLE = 2_000
#: People whose states are read in one query.
_BATCH = 500
_COLUMNS = (
    "space_id",
    "attr",
    "people",
    "taste_prior",
    "lifts",
    "weights",
    "window_end",
    "version",
)


def fit_space(
    store: Store,
    space_id: str,
    priors: Mapping[tuple[str, str], float],
    config: SignalsConfig,
    floor: int = FIT_FLOOR,
    max_people: int = MAX_PEOPLE,
    types: ObjectTypes | None = None,
) -> dict[str, FieldPrior]:
    """Each field's prior fitted on (at most ``max_people`` of) the space's people's
    folded states: the taste fields of ``types`` (every field without); fields below
    ``floor`` people with evidence left out."""
    people = [
        pid
        for (pid,) in store.query(
            "SELECT profile_id FROM signal_state WHERE space_id = {space:String} "
            "GROUP BY profile_id ORDER BY cityHash64(profile_id), profile_id "
            "LIMIT {limit:UInt32}",
            {"space": space_id, "limit": max_people},
        ).rows
    ]
    by_field: dict[str, list[dict[str, tuple[float, float]]]] = {}
    for start in range(0, len(people), _BATCH):
        keys = [(space_id, pid) for pid in people[start : start + _BATCH]]
        states = load_states(store, keys)
        for key in keys:
            state = states.get(key)
            if state is None or state.opted_out:
                continue
            for attr, counts in field_counts(state, priors, config, types).items():
                by_field.setdefault(attr, []).append(counts)
    return {
        attr: fitted
        for attr, counts in sorted(by_field.items())
        if (fitted := fit_field_prior(counts, floor)) is not None
    }


def write_field_priors(
    store: Store, space_id: str, as_of: date, version: int, fitted: Mapping[str, FieldPrior]
) -> bool:
    """Replace the space's field priors of ``version`` with ``fitted``; whether they were
    the same (nothing written)."""
    new = [
        (space_id, attr, f.people, f.taste_prior, list(f.lifts), list(f.weights), as_of, version)
        for attr, f in sorted(fitted.items())
    ]
    parameters: dict[str, Any] = {"space": space_id, "version": version}
    old = store.query(
        f"SELECT {', '.join(_COLUMNS)} FROM field_priors FINAL "
        "WHERE space_id = {space:String} AND version = {version:UInt32} ORDER BY attr",
        parameters,
    ).rows
    if [tuple(_plain(v) for v in row) for row in old] == [tuple(map(_plain, r)) for r in new]:
        return True
    if old:
        store.command(
            "ALTER TABLE field_priors DELETE WHERE space_id = {space:String} "
            "AND version = {version:UInt32}",
            settings={"mutations_sync": 2},
            parameters=parameters,
        )
    if new:
        store.insert("field_priors", new, _COLUMNS)
    return False


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value
