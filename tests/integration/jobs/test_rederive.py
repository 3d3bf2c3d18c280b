"""The nightly priors job derives the people already seen again, on real ClickHouse (chDB):
a history replayed with no priors, then the job, leaves the active affinities a replay of
the same history gives into a store that had those priors from the start; a deleted
inference stays deleted, an opted-out person gets nothing, a second run changes nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.taste_calibrated import population_lines
from tests.unit.core.derivation.builders import TYPES as BUILT_TYPES
from tests.unit.core.derivation.builders import at, item, outcome, presented
from turnstream.adapters.clickhouse.derivations import DerivationSink, load_states
from turnstream.adapters.clickhouse.erase_tombstones import record_tombstones, tombstones_of
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import load_settings
from turnstream.config.derivation import SignalsConfig
from turnstream.config.settings import Settings
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.tables import FIELD_PRIOR_COLUMNS, PRIOR_COLUMNS
from turnstream.entrypoints.bootstrap import build_replay
from turnstream.jobs.rederive import rederive_here, rederive_spaces
from turnstream.jobs.registry import JOBS
from turnstream.service.rederive import rederive_people

pytestmark = pytest.mark.integration

TYPES = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
TODAY = datetime.now(UTC).date().isoformat()
#: The content of an active affinity (not its times: a re-derived one keeps when it
#: first appeared, a fresh replay's appears when the fit lets it).
_ACTIVE = (
    "SELECT id, profile_id, `for`, attr, value, polarity, weight, confidence, lift, "
    "effective_exposure, weighted_signal, events, sessions FROM inferences FINAL "
    "WHERE status = 'active' AND kind = 'affinity' ORDER BY id"
)


def _history(n: int = 40, sessions: int = 6, seed: int = 404) -> list[str]:
    """bench/taste_calibrated.py's population (``--fit-seed``), small."""
    return population_lines(seed, n, sessions, 6.0, pid="h_{:03d}")


def _command(pid: str, name: str, **extra: Any) -> str:
    return json.dumps(
        {"type": "command", "space_id": "acme", "idempotency_key": f"{pid}-{name}",
         "profile_id": pid, "source": "desk", "occurred_at": f"{TODAY}T00:00:00Z",
         "command": name, **extra}
    )  # fmt: skip


def _settings(tmp_path: Path, chdb_path: Path, store: Store, first_fit: bool = False) -> Settings:
    """The nightly job's settings: no first fit at the end of a replay, unless asked."""
    config = tmp_path / f"{store.database}.toml"
    config.write_text(
        f'[store]\ndsn = "chdb:{chdb_path}"\ndatabase = "{store.database}"\n'
        '[identity]\nsecret = "rederive"\n'
        f"[jobs]\nfirst_fit = {str(first_fit).lower()}\n"
        f'[spaces.acme]\nlanguage = "pt"\nfeatures = ["signals", "turns"]\ntypes = "{TYPES}"\n'
    )
    return load_settings(config, environ={})


def _replay(settings: Settings, store: Store, lines: list[str], path: Path) -> None:
    path.write_text("\n".join(lines) + "\n")
    build_replay(settings, store).run(path)


def _active(store: Store) -> dict[str, tuple[Any, ...]]:
    return {row[0]: tuple(row[1:]) for row in store.query(_ACTIVE).rows}


def _copy_priors(source: Store, target: Store) -> None:
    for table, columns in (("priors", PRIOR_COLUMNS), ("field_priors", FIELD_PRIOR_COLUMNS)):
        names = [c.name for c in columns]
        rows = source.query(f"SELECT {', '.join(f'`{n}`' for n in names)} FROM {table}").rows
        target.insert(table, [list(r) for r in rows], names)


@pytest.fixture(scope="module")
def history() -> list[str]:
    return _history()


def test_the_job_leaves_what_a_replay_with_the_priors_from_the_start_gives(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store], history: list[str]
) -> None:
    store = store_factory()
    settings = _settings(tmp_path, chdb_path, store)
    _replay(settings, store, history, tmp_path / "history.jsonl")
    before = _active(store)

    report = JOBS["priors"](store, settings, {"as_of": TODAY})
    assert report["field_priors"]["acme"] >= 2
    again = report["rederived"]
    assert again["people"] == 40 and again["changed_people"] > 0 and again["inferences"] > 0
    after = _active(store)
    assert after != before  # the fit took effect now, not at the people's next session

    fresh = store_factory()
    _copy_priors(store, fresh)
    _replay(_settings(tmp_path, chdb_path, fresh), fresh, history, tmp_path / "fresh.jsonl")
    assert after == _active(fresh)

    # A second run: the same priors, so no one is derived again.
    second = JOBS["priors"](store, settings, {"as_of": TODAY})["rederived"]
    assert (second["people"], second["inferences"]) == (0, 0)
    # A run cut short before its mark: everyone derived again, nothing changes.
    store.command("TRUNCATE TABLE rederived")
    third = JOBS["priors"](store, settings, {"as_of": TODAY})["rederived"]
    assert (third["people"], third["changed_people"], third["inferences"]) == (40, 0, 0)
    assert _active(store) == after

    # The saved states say what the rows say (the next firing starts from them) ...
    people = sorted({row[0] for row in after.values()} | {row[0] for row in before.values()})
    states = load_states(store, [("acme", p) for p in people])
    in_states = {
        i.id
        for state in states.values()
        for i in state.inferences.values()
        if i.kind == "affinity" and i.status == "active"
    }
    assert in_states == set(after)
    # ... and the next firings (the history again: nothing new to fold) keep it.
    _replay(settings, store, history, tmp_path / "again.jsonl")
    assert _active(store) == after


def test_a_deleted_inference_stays_deleted_and_an_opt_out_gets_nothing(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store], history: list[str]
) -> None:
    # What the fit gives: the priors of a first store's job.
    first = store_factory()
    settings = _settings(tmp_path, chdb_path, first)
    _replay(settings, first, history, tmp_path / "first.jsonl")
    before = _active(first)
    JOBS["priors"](first, settings, {"as_of": TODAY})
    fitted = _active(first)
    new = sorted(set(fitted) - set(before))
    assert new
    deleted = new[0]
    person = fitted[deleted][0]
    quitter = next(p for p, *_ in sorted(fitted.values()) if p != person)

    # The same history, one of those new affinities deleted and another person opted out,
    # then those priors written and the people derived again: neither gets them back.
    store = store_factory()
    settings = _settings(tmp_path, chdb_path, store)
    lines = [
        *history,
        _command(person, "delete", inference_id=deleted),
        _command(quitter, "opt_out"),
    ]
    _replay(settings, store, lines, tmp_path / "second.jsonl")
    _copy_priors(first, store)
    done = rederive_spaces(
        store, ["acme"], rederive_here(store, settings), date.fromisoformat(TODAY), 45
    )
    assert done.totals.people == 40 and done.totals.inferences > 0
    active = _active(store)
    [(status,)] = store.query(
        "SELECT status FROM inferences FINAL WHERE id = {id:String}", {"id": deleted}
    ).rows
    assert status == "deleted"
    assert not store.query(
        "SELECT id FROM inferences FINAL WHERE profile_id = {p:String} AND status = 'active'",
        {"p": quitter},
    ).rows
    # Everyone else: as the first store.
    assert active == {i: row for i, row in fitted.items() if i != deleted and row[0] != quitter}


def test_only_people_seen_within_the_days_are_derived_again(
    tmp_path: Path, chdb_path: Path, store_factory: Callable[[], Store], history: list[str]
) -> None:
    store = store_factory()
    settings = _settings(tmp_path, chdb_path, store)
    _replay(settings, store, history, tmp_path / "history.jsonl")
    first = store_factory()
    _replay(_settings(tmp_path, chdb_path, first), first, history, tmp_path / "first.jsonl")
    JOBS["priors"](first, settings, {"as_of": TODAY})
    _copy_priors(first, store)
    # The history's sessions are 14 to 8 days old: none within a day, all within 45.
    as_of = date.fromisoformat(TODAY)
    assert (
        rederive_spaces(store, ["acme"], rederive_here(store, settings), as_of, 0).totals.people
        == 0
    )
    one = rederive_spaces(store, ["acme"], rederive_here(store, settings), as_of, 1)
    assert one.totals.people == 0
    store.command("TRUNCATE TABLE rederived")
    assert (
        rederive_spaces(store, ["acme"], rederive_here(store, settings), as_of, 45).totals.people
        == 40
    )


def test_a_person_erased_while_derived_again_is_not_written_back(store: Store) -> None:
    """An erase that runs after the job read a person's state and before it writes what
    changed (a scheduler's job in its own process on a ClickHouse server; or the worker's,
    before its derivation driver folds the erase) leaves nothing of them: what the job
    wrote is erased again, reading their tombstones alone (never every one again: a read
    of the whole table a batch); the engine learns theirs. Another person's rederivation
    is written."""
    sink = DerivationSink(store)
    every_read: list[int] = []

    def load_tombstones() -> dict[tuple[str, str], datetime]:
        every_read.append(1)
        return sink.load_tombstones()

    engine = SignalsEngine(
        SignalsConfig(),
        types_for=lambda _space: BUILT_TYPES,
        load_states=sink.load_states,
        load_tombstones=load_tombstones,
    )
    for pid in ("p1", "p2"):
        for one in (
            presented(f"{pid}-pg", "0190f5a2-7b3c-7def-8123-456789abcd01",
                      [item(1, "item_variant:acme:1", size="M")], profile=pid),
            outcome(f"{pid}-o", "item_variant:acme:1", "purchase", size="M", t=60, profile=pid),
        ):  # fmt: skip
            engine.offer(one, one.occurred_at)
    read = engine.fire_all()  # the states the job reads, and what it derives of them
    sink.write(read)
    assert {d.profile_id for d in read if d.inferences} == {"p1", "p2"}
    assert engine.tombstones == {}  # read by the job's engine before the erase
    record_tombstones(store, {("acme", "p1"): at(3600)})
    erase_subjects(store, [("acme", "p1")])
    engine.rederive = lambda people, since=None: (read, len(read))  # type: ignore[method-assign]
    rederive_people(engine, sink, [("acme", "p1"), ("acme", "p2")])
    for table in ("signal_state", "inferences"):
        people = store.query(f"SELECT DISTINCT profile_id FROM {table}").rows
        assert people == [("p2",)], table
    assert ("acme", "p1") not in engine.states
    assert engine.tombstones == {("acme", "p1"): at(3600)}
    assert len(every_read) == 1  # the engine's own first read, before the erase


def test_the_tombstones_of_some_people_are_theirs_alone(store: Store) -> None:
    """One look-up of the people asked: each erased one's latest ``erased_through``."""
    record_tombstones(store, {("acme", "p1"): at(60), ("acme", "p2"): at(60)})
    record_tombstones(store, {("acme", "p1"): at(3600), ("lumen", "p3"): at(60)})
    asked = [("acme", "p1"), ("lumen", "p1"), ("acme", "p9")]
    assert tombstones_of(store, asked) == {("acme", "p1"): at(3600)}
    assert tombstones_of(store, []) == {}
