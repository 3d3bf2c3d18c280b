"""Erasure: every row of a subject, in every table that holds a profile id, is removed.

A subject is a person of a space, ``(space_id, profile_id)``. :func:`erase_subjects`
erases many at once: one query finds which tables hold rows of any of them (and how
many per subject); each such table gets one ``ALTER TABLE ... DELETE WHERE (space_id,
profile_id) IN ...``; tables that hold none of their rows are not mutated.

The subjects never go into SQL text: they are inserted into the ``erase_subjects`` table
under an id of the erasure, and the count and the mutations read them from there
(``IN (SELECT ... FROM erase_subjects WHERE erase_id = ...)``); when the erasure ends
its rows there are deleted (a crash leaves them to the table's one-day TTL, and the
replayed erasure deletes them). A mutation runs in the background, outside the client's
session, so it cannot read a temporary table; and with the subjects as a literal in the
statement (query parameters), the mutation took 16 times longer: 11.3 s against 0.7 s
for 10,000 subjects on a 10,000-row table here, and ClickHouse keeps every mutation's
text, so the ids stayed in the table's folder. The statement now holds the erasure's id
alone.

When the call returns, the rows are gone for readers and from the parts on disk that
make up the table: a mutation rewrites each part that held them, so they are removed, not only
hidden (a lightweight ``DELETE FROM`` only masks them until a later merge or a second
mutation, which together cost more than one ``ALTER TABLE ... DELETE``). What stays on
disk for a while, as it did when each table was mutated with ``mutations_sync = 2``:
the parts a mutation replaced, kept as outdated parts until the table's cleanup thread
removes them (every ``cleanup_delay_period`` to ``max_cleanup_delay_period``, 30 to
300 s, in this ClickHouse version; no statement wakes it).

Review requests are kept: the law requires them for at least 395 days after
resolution, and an erasure counts them as retained, with the webhook events that
announce them (``webhook_events``, kept 30 days), and the erase tombstone itself
(``erase_tombstones``: the profile id and the erase's time, no more), which the drivers
need to drop the subject's events from before the erase that arrive after it.

The value aggregates behind the priors (``value_daily`` and its weekly roll-up
``value_weekly``, migration 20) hold no profile id but a
key of it per person (``sipHash64``, :mod:`turnstream.adapters.clickhouse.people_sets`), which can
tell whether a known person saw a value. An erasure records the subjects' keys in
``erased_people``; :func:`purge_erased` (run by the priors job before it computes, so no
prior counts an erased person) rebuilds every state that holds one of them without it,
then deletes the keys. Rebuilding the states reads every row of the space's aggregate
(4.7M rows per space at 1B presented items over 90 days), so it is done once a night for
all the day's erasures rather than on the ingest thread for each.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from turnstream.adapters.clickhouse.erase_tombstones import load_tombstones, record_tombstones
from turnstream.adapters.clickhouse.people_sets import person_key, without_keys
from turnstream.adapters.clickhouse.store import Store
from turnstream.core.erasure import Subject, Tombstones
from turnstream.errors import StoreError

__all__ = [
    "BY_TURN",
    "PERSON_AGGREGATES",
    "RETAINED",
    "Erasure",
    "StoreErasures",
    "erase_subject",
    "erase_subjects",
    "purge_erased",
    "tables_with_profiles",
]

#: Tables whose rows an erasure keeps, and why.
RETAINED = {
    "review_requests": "kept by law at least 395 days after resolution",
    # What the review requests announce to their receivers: the same facts (no more), to
    # be delivered even when the person asked to be erased meanwhile; 30 days (TTL).
    "webhook_events": "the webhook events of retained review requests, kept 30 days",
    # The erase's own mark (adapters/clickhouse/erase_tombstones.py): the pseudonymous key and the
    # time
    # of the erase, nothing else, so that a late event from before it is not written.
    "erase_tombstones": "the erase tombstone: the profile id and erased_through, no more",
}

#: Tables without a profile id whose rows belong to a turn (``(space_id, turn_id)``):
#: the claims and constraint measurements of the subject's turns go with the turns.
BY_TURN = ("turn_claims", "turn_constraints")
#: The table the turns' people are read from.
TURNS = "turns"

#: The table of the subjects of erasures in progress (migration 9).
SUBJECTS = "erase_subjects"
#: The keys of erased people not yet taken out of the aggregates (migration 11).
ERASED_KEYS = "erased_people"
#: The aggregates that hold person keys: :func:`purge_erased` takes them out.
PERSON_AGGREGATES = ("value_daily", "value_weekly")
_SUBJECT_COLUMNS = ["erase_id", "space_id", "subject", "requested_at"]


@dataclass
class Erasure:
    """What an erasure did for one subject.

    ``tables``: every table the subject is now absent from, i.e. each table with a
    profile id that the erasure covered (within ``only``, not retained), whether or not
    it held rows of the subject. ``deleted``: the tables that did hold some, with the
    subject's rows deleted there (rows on disk, so duplicates not yet merged away by a
    Replacing engine count). ``retained``: the subject's rows kept, per retained table.
    """

    space_id: str
    profile_id: str
    tables: list[str] = field(default_factory=list)
    retained: dict[str, int] = field(default_factory=dict)
    deleted: dict[str, int] = field(default_factory=dict)


def tables_with_profiles(store: Store) -> list[str]:
    """The tables (not views) of the database with a ``profile_id`` column."""
    rows = store.query(
        "SELECT c.table FROM system.columns AS c INNER JOIN system.tables AS t "
        "ON c.database = t.database AND c.table = t.name "
        "WHERE c.database = {database:String} AND c.name = 'profile_id' "
        "AND t.engine NOT IN ('View', 'MaterializedView') ORDER BY c.table",
        {"database": store.database},
    ).rows
    return [table for (table,) in rows]


def erase_subject(
    store: Store, space_id: str, profile_id: str, only: tuple[str, ...] | None = None
) -> Erasure:
    """Delete the subject's rows (blocking); ``only`` limits it to some tables."""
    return erase_subjects(store, [(space_id, profile_id)], only)[0]


def erase_subjects(
    store: Store, subjects: Sequence[tuple[str, str]], only: tuple[str, ...] | None = None
) -> list[Erasure]:
    """Delete the rows of every ``(space_id, profile_id)`` (blocking), with one statement
    per table that holds any of them; ``only`` limits it to some tables.

    Returns one :class:`Erasure` per subject given, in the same order (a subject given
    twice gets two equal ones). Raises :class:`StoreError` if a mutation fails.
    """
    if not subjects:
        return []
    considered = [t for t in tables_with_profiles(store) if only is None or t in only]
    erased = [t for t in considered if t not in RETAINED]
    # Read through the subjects' turns: only when the turns are erased too.
    by_turn = [t for t in BY_TURN if TURNS in erased and (only is None or t in only)]
    kept = [t for t in considered if t in RETAINED]
    distinct = list(dict.fromkeys((space_id, profile_id) for space_id, profile_id in subjects))
    counts: dict[tuple[str, str], dict[str, int]] = {}
    if considered:
        erase_id = uuid.uuid4().hex
        now = datetime.now(UTC)
        store.insert(SUBJECTS, [[erase_id, s, p, now] for s, p in distinct], _SUBJECT_COLUMNS)
        try:
            counts = _erase(store, erase_id, erased, kept, by_turn)
            # The aggregates' keys go at the next priors run (purge_erased).
            store.command(
                f"INSERT INTO {ERASED_KEYS} (space_id, person, requested_at) "
                f"SELECT space_id, {person_key('subject')}, requested_at FROM {SUBJECTS} "
                "WHERE erase_id = {erase_id:String}",
                parameters={"erase_id": erase_id},
            )
        finally:
            # Of these subjects, and of any erasure of them a crash interrupted.
            store.command(
                f"ALTER TABLE {SUBJECTS} DELETE WHERE (space_id, subject) IN (SELECT space_id, "
                f"subject FROM {store.database}.{SUBJECTS} WHERE erase_id = {{erase_id:String}})",
                settings={"mutations_sync": 2},
                parameters={"erase_id": erase_id},
            )
    result = []
    for space_id, profile_id in subjects:
        held = counts.get((space_id, profile_id), {})
        result.append(
            Erasure(
                space_id,
                profile_id,
                tables=erased + by_turn,
                retained={t: held.get(t, 0) for t in kept},
                deleted={t: held[t] for t in erased + by_turn if held.get(t)},
            )
        )
    return result


def _erase(
    store: Store, erase_id: str, erased: list[str], kept: list[str], by_turn: list[str]
) -> dict[tuple[str, str], dict[str, int]]:
    """Count the erasure's subjects' rows in every table, delete them where erased; the
    counts. The rows of ``by_turn`` tables (the subjects' turns' own) go first, while
    the turns that say whose they are still exist."""
    # Qualified: a mutation runs in the background, where no database is selected.
    who = (
        "(space_id, profile_id) IN (SELECT space_id, subject "
        f"FROM {store.database}.{SUBJECTS} WHERE erase_id = {{erase_id:String}})"
    )
    turns = f"SELECT space_id, turn_id, profile_id FROM {store.database}.{TURNS} WHERE {who}"
    tables = erased + kept
    branches = [
        f"SELECT {{t{i}:String}} AS t, space_id, profile_id, count() AS n FROM {t} "
        f"WHERE {who} GROUP BY space_id, profile_id"
        for i, t in enumerate(tables)
    ] + [
        f"SELECT {{b{i}:String}} AS t, space_id, own.profile_id AS profile_id, count() AS n "
        f"FROM {t} INNER JOIN (SELECT DISTINCT * FROM ({turns})) AS own "
        "USING (space_id, turn_id) GROUP BY space_id, profile_id"
        for i, t in enumerate(by_turn)
    ]
    rows = store.query(
        f"SELECT t, space_id, profile_id, n FROM ({' UNION ALL '.join(branches)})",
        {
            "erase_id": erase_id,
            **{f"t{i}": t for i, t in enumerate(tables)},
            **{f"b{i}": t for i, t in enumerate(by_turn)},
        },
    ).rows
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for table, space_id, profile_id, n in rows:
        counts.setdefault((space_id, profile_id), {})[table] = int(n)
    held = [t for t in by_turn if any(t in c for c in counts.values())]
    own_turns = f"(space_id, turn_id) IN (SELECT space_id, turn_id FROM ({turns}))"
    _delete(store, erase_id, held, own_turns)
    _delete(store, erase_id, [t for t in erased if any(t in c for c in counts.values())], who)
    return counts


def _delete(store: Store, erase_id: str, tables: list[str], where: str) -> None:
    """One ``ALTER TABLE ... DELETE WHERE where`` per table, all run at once, waited for."""
    if not tables:
        return
    before = {(table, mutation_id) for table, mutation_id, _, _ in _mutations(store, tables)}
    for table in tables:
        store.command(
            f"ALTER TABLE {table} DELETE WHERE {where} SETTINGS mutations_sync = 0",
            parameters={"erase_id": erase_id},
        )
    _wait(store, tables, before)


def _mutations(store: Store, tables: list[str]) -> list[tuple[str, str, int, str]]:
    """(table, mutation id, done, latest failure) of the tables' mutations."""
    return [
        (table, mutation_id, int(done), str(failure))
        for table, mutation_id, done, failure in store.query(
            "SELECT table, mutation_id, is_done, latest_fail_reason FROM system.mutations "
            "WHERE database = {database:String} AND has({tables:Array(String)}, table)",
            {"database": store.database, "tables": tables},
        ).rows
    ]


def _wait(store: Store, tables: list[str], before: set[tuple[str, str]]) -> None:
    """Block until the tables' mutations not in ``before`` are done, as ``mutations_sync``
    would; a mutation that reports a failure raises.

    Polled every 5 to 20 ms. Between polls, ``SYSTEM START MERGES`` on each table still
    mutating wakes its background scheduler: after every part it mutates, ClickHouse
    postpones the table's next pick by 0.1 s plus a random 0 to 1 s, so a table with more
    parts to mutate than the pool has slots (chDB on 2 cores: 2 threads x 2) would
    otherwise wait that long for each further round (an erasure took 1.2 to 1.9 s
    unwoken, 0.15 to 0.3 s woken, on a 20,000-item store). Starting merges that were not
    stopped changes nothing else; nothing in turnstream stops them (had someone, the
    mutations could not run at all, and this restarts them for these tables). Without
    the privilege, the polls go on unwoken.
    """
    pause = 0.005
    wake = True
    while True:
        ours = [m for m in _mutations(store, tables) if (m[0], m[1]) not in before]
        missing = set(tables) - {m[0] for m in ours}
        if missing:
            raise StoreError(f"the erasure's mutation of {sorted(missing)} is not listed")
        for table, mutation_id, _, failure in ours:
            if failure:
                raise StoreError(f"erasure in {table} failed ({mutation_id}): {failure}")
        pending = sorted({table for table, _, done, _ in ours if not done})
        if not pending:
            return
        for table in pending if wake else ():
            try:
                store.command(f"SYSTEM START MERGES {table}")
            except StoreError:
                wake = False
                break
        time.sleep(pause)
        pause = min(pause * 1.5, 0.02)


def purge_erased(store: Store) -> dict[str, int]:
    """Take the keys of erased people out of every aggregate that holds person keys, then
    forget the keys; the people purged per space. Blocking.

    One mutation per space and aggregate, for every key recorded so far: each state that
    holds one is rebuilt without it (``mutations_sync = 2``: the old parts are replaced
    when this returns). Keys recorded while it runs wait for the next call.
    """
    cutoff = store.scalar(f"SELECT max(requested_at) FROM {ERASED_KEYS}")
    spaces = store.query(
        f"SELECT space_id, uniqExact(person) FROM {ERASED_KEYS} "
        "WHERE requested_at <= {cutoff:DateTime64(3, 'UTC')} GROUP BY space_id ORDER BY space_id",
        {"cutoff": cutoff},
    ).rows
    purged: dict[str, int] = {}
    for space_id, people in spaces:
        parameters = {"space_id": space_id, "cutoff": cutoff}
        erased = (
            f"(SELECT groupArray(person) FROM {store.database}.{ERASED_KEYS} "
            "WHERE space_id = {space_id:String} AND requested_at <= {cutoff:DateTime64(3, 'UTC')})"
        )
        for table in PERSON_AGGREGATES:
            store.command(
                f"ALTER TABLE {table} UPDATE people = {without_keys('people', erased)} "
                f"WHERE space_id = {{space_id:String}} "
                f"AND hasAny(people, {erased})",
                settings={"mutations_sync": 2},
                parameters=parameters,
            )
        store.command(
            f"ALTER TABLE {ERASED_KEYS} DELETE WHERE space_id = {{space_id:String}} "
            "AND requested_at <= {cutoff:DateTime64(3, 'UTC')}",
            settings={"mutations_sync": 2},
            parameters=parameters,
        )
        purged[space_id] = int(people)
    return purged


class StoreErasures:
    """The ingest use case's erasures (``service/ports.Erasures``) on a store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def load_tombstones(self) -> dict[Subject, datetime]:
        return load_tombstones(self.store)

    def record_tombstones(self, tombstones: Tombstones) -> None:
        record_tombstones(self.store, tombstones)

    def erase(self, subjects: Sequence[Subject]) -> list[Erasure]:
        return erase_subjects(self.store, subjects)
