"""Reading saved derivation states back, on real chDB: every person a firing lacks in
one query that seeks each of them by the sorting key, whatever the table's size."""

from __future__ import annotations

import json
import re

import pytest

from turnstream.adapters.clickhouse.derivations import (
    SIGNAL_COLUMNS,
    STATES_QUERY,
    load_state,
    load_states,
)
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.derivation.state import ProfileState

pytestmark = pytest.mark.integration


def _state(space: str, profile: str, note: str) -> str:
    state = ProfileState(space_id=space, profile_id=profile, max_seen={note: 1})
    return json.dumps(state.to_dict(), separators=(",", ":"), sort_keys=True)


def _save(store: Store, rows: list[tuple[str, str, str, int]]) -> None:
    store.insert(
        "signal_state",
        [[profile, space, state, version, None] for space, profile, state, version in rows],
        SIGNAL_COLUMNS["signal_state"],
    )


def test_many_people_in_one_query_that_seeks_them(store: Store) -> None:
    # 120,000 other people in three parts, so that a scan would read them all.
    for part in range(3):
        _save(
            store,
            [("acme", f"p_other_{part}_{n:06d}", "{}", 1) for n in range(40_000)],
        )
    wanted = [("acme", "p_a"), ("lumen", "p_a"), ("acme", "p_é 😀"), ("acme", "p_" + "x" * 256)]
    _save(store, [(s, p, _state(s, p, "old"), 1) for s, p in wanted])
    _save(store, [(s, p, _state(s, p, "new"), 2) for s, p in wanted])  # a later derivation
    asked = [*wanted, ("acme", "p_never_derived"), ("vida", "p_a"), wanted[0]]

    queries: list[str] = []
    query = store.query

    def counted(sql: str, *args: object, **kwargs: object):  # the real query, counted
        queries.append(sql)
        return query(sql, *args, **kwargs)  # type: ignore[arg-type]

    store.query = counted  # type: ignore[method-assign]
    found = load_states(store, asked)
    store.query = query  # type: ignore[method-assign]

    assert set(found) == set(wanted)  # unknown people and spaces are absent
    for (space, profile), state in found.items():
        assert (state.space_id, state.profile_id) == (space, profile)  # not another space's
        assert state.max_seen == {"new": 1}  # the latest version
    assert queries == [STATES_QUERY]  # one query for all of them
    # chDB's query summary counts result rows, not rows read, and it keeps no query_log:
    # the plan says what is read. The people (still staged) select a granule or so each
    # of the sorting key's index, not the whole table.
    plan = "\n".join(r[0] for r in store.query("EXPLAIN indexes = 1 " + STATES_QUERY).rows)
    primary = plan[plan.index("PrimaryKey") :]
    chosen, total = map(int, re.search(r"Granules: (\d+)/(\d+)", primary).groups())  # type: ignore[union-attr]
    assert total >= 15  # 120,000 rows at 8,192 a granule
    assert 1 <= chosen <= len(wanted)


def test_one_person_and_none(store: Store) -> None:
    _save(store, [("acme", "p1", _state("acme", "p1", "x"), 3)])
    saved = load_state(store, "acme", "p1")
    assert saved is not None and saved.max_seen == {"x": 1}
    assert load_state(store, "lumen", "p1") is None
    assert load_states(store, []) == {}
