"""An erasure removes the subject from every table that holds a profile id."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turnstream.adapters.clickhouse.erasure import (
    BY_TURN,
    RETAINED,
    erase_subject,
    erase_subjects,
    tables_with_profiles,
)
from turnstream.adapters.clickhouse.store import Store

pytestmark = pytest.mark.integration


def test_every_table_with_profiles_is_emptied_of_the_subject_but_review_requests(
    store: Store,
) -> None:
    tables = tables_with_profiles(store)
    assert {"turns", "interactions", "outcomes", "inferences", "stated"} <= set(tables)
    now = datetime.now(UTC)
    for table in tables:
        columns = [r[0] for r in store.query(f"DESCRIBE TABLE {table}").rows]
        types = dict(store.query(f"SELECT name, type FROM system.columns WHERE database = "
                                 f"'{store.database}' AND table = '{table}'").rows)  # fmt: skip
        for profile in ("p_gone", "p_stays"):
            row = {c: _zero(types[c], now) for c in columns}
            row.update(space_id="acme", profile_id=profile)
            store.insert(table, [[row[c] for c in columns]], columns)
    erasure = erase_subject(store, "acme", "p_gone")
    # A review request's row also writes its webhook event (a view): two events each.
    # The erase tombstone is kept too (its profile id and a time, no more).
    assert erasure.retained == {
        "erase_tombstones": 1,
        "review_requests": 1,
        "webhook_events": 2,
    }
    for table in tables:
        left = dict(store.query(f"SELECT profile_id, count() FROM {table} GROUP BY 1").rows)
        kept = table in ("review_requests", "erase_tombstones")
        expected = {"p_stays": 1, "p_gone": 1} if kept else {"p_stays": 1}
        if table == "webhook_events":
            expected = {"p_stays": 2, "p_gone": 2}
        assert left == expected, table


def test_a_batch_mutates_each_table_holding_the_subjects_once_and_no_other(
    store: Store,
) -> None:
    tables = tables_with_profiles(store)
    # The subjects' turns' claims and measurements too (none here: no turn of theirs).
    erased = [t for t in tables if t not in RETAINED] + list(BY_TURN)
    held = {
        ("acme", "p_a"): {"interactions": 2, "outcomes": 1, "review_requests": 1},
        ("acme", "p_b"): {"interactions": 1, "inferences": 3, "review_requests": 2},
        # The same profile id in another space, and another person: in every table, kept.
        ("lumen", "p_a"): dict.fromkeys(tables, 1),
        ("acme", "p_stays"): dict.fromkeys(tables, 1),
    }
    for (space, profile), per_table in held.items():
        for table, n in per_table.items():
            _insert(store, table, space, profile, n)
    subjects = [("acme", "p_a"), ("acme", "p_none"), ("acme", "p_b")]

    erasures = erase_subjects(store, subjects)

    assert [(e.space_id, e.profile_id) for e in erasures] == subjects
    assert all(e.tables == erased for e in erasures)
    assert [e.deleted for e in erasures] == [
        {"interactions": 2, "outcomes": 1},
        {},
        {"inferences": 3, "interactions": 1},
    ]
    # Each review request's row wrote its webhook event too (a view), retained with it.
    assert [e.retained for e in erasures] == [
        {"erase_tombstones": 0, "review_requests": 1, "webhook_events": 1},
        {"erase_tombstones": 0, "review_requests": 0, "webhook_events": 0},
        {"erase_tombstones": 0, "review_requests": 2, "webhook_events": 2},
    ]
    mutations = store.query(
        "SELECT table, count(), countIf(is_done) FROM system.mutations "
        f"WHERE database = '{store.database}' AND table != 'erase_subjects' "
        "GROUP BY table ORDER BY table"
    ).rows
    assert mutations == [("inferences", 1, 1), ("interactions", 1, 1), ("outcomes", 1, 1)]
    for table in tables:
        left = _people(store, table)
        expected = {("lumen", "p_a"): 1, ("acme", "p_stays"): 1}
        if table == "review_requests":
            expected |= {("acme", "p_a"): 1, ("acme", "p_b"): 2}
        if table == "webhook_events":  # inserted once, and once by each review request
            expected = {("lumen", "p_a"): 2, ("acme", "p_stays"): 2, ("acme", "p_a"): 1,
                        ("acme", "p_b"): 2}  # fmt: skip
        assert left == expected, table

    again = erase_subject(store, "acme", "p_a")

    assert again.tables == erased and again.deleted == {}
    assert again.retained == {"erase_tombstones": 0, "review_requests": 1, "webhook_events": 1}
    assert store.scalar(
        f"SELECT count() FROM system.mutations WHERE database = '{store.database}' "
        "AND table != 'erase_subjects'"
    ) == 3  # fmt: skip


def test_only_limits_the_tables_erased_and_counted(store: Store) -> None:
    for table in ("inferences", "turns", "review_requests"):
        _insert(store, table, "acme", "p_gone", 1)

    (erasure,) = erase_subjects(store, [("acme", "p_gone")], only=("inferences", "signal_state"))

    assert erasure.tables == ["inferences", "signal_state"]
    assert erasure.deleted == {"inferences": 1} and erasure.retained == {}
    assert _people(store, "inferences") == {}
    assert _people(store, "turns") == {("acme", "p_gone"): 1}
    assert erase_subjects(store, []) == []


def test_an_erase_of_ten_thousand_people_with_any_ids_in_one_go(store: Store) -> None:
    # Profile ids are producers' ids: up to 256 characters, quotes and backslashes in them.
    # The old erasure quoted them into the SQL text; now they are inserted as data.
    gone = [("acme", f"{i:05d}'\\\t\"" + "é" * 242 + "😀" * 5) for i in range(10_000)]
    kept = [("acme", f"kept-{i}'") for i in range(50)] + [("lumen", gone[0][1])]
    assert {len(p) for _, p in gone} == {256}
    now = datetime.now(UTC)
    types = dict(store.query(
        "SELECT name, type FROM system.columns WHERE database = {db:String} "
        "AND table = 'outcomes'", {"db": store.database}
    ).rows)  # fmt: skip
    columns = list(types)
    rows = []
    for space, profile in gone + kept:
        row = {c: _zero(types[c], now) for c in columns}
        row.update(space_id=space, profile_id=profile)
        rows.append([row[c] for c in columns])
    store.insert("outcomes", rows, columns)

    erasures = erase_subjects(store, gone)

    assert len(erasures) == 10_000 and all(e.deleted == {"outcomes": 1} for e in erasures)
    assert _people(store, "outcomes") == dict.fromkeys(kept, 1)
    # One statement for the table; its text holds the erasure's id, not the subjects.
    mutations = store.query(
        "SELECT count(), countIf(is_done), max(length(command)) FROM system.mutations "
        "WHERE database = {db:String} AND table = 'outcomes'",
        {"db": store.database},
    ).rows
    assert mutations[0][:2] == (1, 1) and mutations[0][2] < 500
    # Nothing of theirs lingers in the table the mutations read them from.
    assert store.scalar("SELECT count() FROM erase_subjects") == 0


def _insert(
    store: Store, table: str, space: str, profile: str | None, n: int, **values: str
) -> None:
    """``n`` rows of the person (``profile``; None: a table without a profile id)."""
    now = datetime.now(UTC)
    types = dict(store.query(f"SELECT name, type FROM system.columns WHERE database = "
                             f"'{store.database}' AND table = '{table}'").rows)  # fmt: skip
    columns = list(types)
    rows = []
    for i in range(n):
        row = {c: _zero(types[c], now) for c in columns}
        row.update(space_id=space, **values)
        if profile is not None:
            row["profile_id"] = profile
        if "id" in row:
            row["id"] = f"{profile}-{i}"
        rows.append([row[c] for c in columns])
    store.insert(table, rows, columns)


def _people(store: Store, table: str) -> dict[tuple[str, str], int]:
    rows = store.query(f"SELECT space_id, profile_id, count() FROM {table} GROUP BY 1, 2").rows
    return {(space, profile): n for space, profile, n in rows}


def _zero(kind: str, now: datetime):  # type: ignore[no-untyped-def]
    if kind.startswith(("Array", "Map")):
        return [] if kind.startswith("Array") else {}
    if "DateTime" in kind:
        return None if kind.startswith("Nullable") else now
    if "Int" in kind or "Float" in kind or kind == "Bool":
        return 0
    return ""


def test_the_claims_and_measurements_of_the_subjects_turns_go_with_them(store: Store) -> None:
    # turn_claims and turn_constraints have no profile id: their rows belong to a turn,
    # (space_id, turn_id), whose person is in turns. The same turn id in another space,
    # and another person's turn, keep theirs.
    turns = {("acme", "p_gone"): "t-gone", ("acme", "p_stays"): "t-stays",
             ("lumen", "p_other"): "t-gone"}  # fmt: skip
    for (space, profile), turn_id in turns.items():
        _insert(store, "turns", space, profile, 1, turn_id=turn_id)
        for table in BY_TURN:
            _insert(store, table, space, None, 2, turn_id=turn_id)

    (erasure,) = erase_subjects(store, [("acme", "p_gone")])

    assert set(BY_TURN) <= set(erasure.tables)
    assert erasure.deleted == {"turns": 1, "turn_claims": 2, "turn_constraints": 2}
    for table in BY_TURN:
        left = store.query(f"SELECT space_id, turn_id, count() FROM {table} GROUP BY 1, 2").rows
        assert sorted(left) == [("acme", "t-stays", 2), ("lumen", "t-gone", 2)], table
    # A second erase finds nothing left of theirs.
    assert erase_subject(store, "acme", "p_gone").deleted == {}
