"""Per-person evidence within the raw window, on real chDB: a store holding a derivation
state, exposures and interactions older than 45 days fails `turnstream retention check`;
`turnstream retention fold` settles the state's evidence into counts, deletes the rows
past their window, and the check passes with the same inferences derivable."""

from __future__ import annotations

import copy
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.unit.core.derivation.builders import PRIORS, TYPES, event, item, outcome, presented
from turnstream.adapters.clickhouse.derivations import DerivationSink, load_state
from turnstream.adapters.clickhouse.erase_tombstones import load_tombstones, record_tombstones
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.retention import Folded, enforce_retention, fold_states
from turnstream.adapters.clickhouse.store import Store
from turnstream.config.derivation import SignalsConfig
from turnstream.core.derivation import derive
from turnstream.core.derivation.engine import SignalsEngine
from turnstream.core.time_edges import ERASE_TOMBSTONE_DAYS, RAW_KEEP_DAYS, time_edge
from turnstream.entrypoints.cli.main import app
from turnstream.jobs.retention import retention_check

pytestmark = pytest.mark.integration

AS_OF = date(2026, 11, 30)
#: The person was last active 50 days before the as-of day: their state, written then,
#: holds evidence the clock has since aged past the 45-day window.
T0 = datetime(2026, 10, 10, 12, tzinfo=UTC)
E1 = "0190f5a2-7b3c-7def-8123-456789abcd01"
E2 = "0190f5a2-7b3c-7def-8123-456789abcd02"
A, B = "item_variant:acme:1", "item_variant:acme:2"


def _shift(events: list) -> list:
    """The builders' events (at 2026-09-29) moved to start at T0."""
    delta = T0 - datetime(2026, 9, 29, 14, tzinfo=UTC)
    return [type(e)(**{**e.__dict__, "occurred_at": e.occurred_at + delta}) for e in events]


def _person() -> list:
    engaged = {"kind": "engaged", "exposure_id": None, "pos": None, "action": "click"}
    return _shift([
        presented("p1", E1, [item(1, A, color="vermelho", size="M"), item(2, B, color="azul")],
                  t=0),
        presented("p2", E2, [item(1, A, color="vermelho")], t=3600, session="s2"),
        event("interaction", {**engaged, "ref": A}, "c1", t=60),
        event("interaction", {**engaged, "ref": A, "action": "cart"}, "c2", t=3660,
              session="s2"),
        outcome("o1", A, "purchase", size="M", t=3700, session="s2"),
    ])  # fmt: skip


def _config(store: Store, tmp_path: Path) -> Path:
    config = tmp_path / "turnstream.toml"
    config.write_text(f'[store]\ndsn = "{store.dsn}"\ndatabase = "{store.database}"\n')
    return config


def _derive(store: Store) -> list:
    engine = SignalsEngine(SignalsConfig(), types_for=lambda _space: TYPES)
    for one in _person():
        engine.offer(one, one.occurred_at)
    derivations = engine.fire_all()
    DerivationSink(store).write(derivations)
    return derivations


def test_old_evidence_fails_the_check_and_passes_after_the_fold(
    store: Store, tmp_path: Path
) -> None:
    [derivation] = _derive(store)
    assert derivation.inferences, "the person has inferences to keep"
    # Raw rows past their TTL are dropped as they are written (ClickHouse applies a TTL
    # to the part an insert makes): the 50-day-old pages the engine still held in event
    # time never reach exposure_items, nor an interaction that old.
    assert store.scalar("SELECT count() FROM exposure_items") == 0
    store.insert(
        "interactions",
        [["acme", "p1", "web", "", "", "k-old", T0, "self", "", 0, "engaged", "", "", A, "",
          "{}", T0, "turnstream.interactions", 0, 1]],
        ["space_id", "profile_id", "source", "conversation_id", "session_id",
         "idempotency_key", "occurred_at", "for", "turn_id", "item_index", "kind",
         "exposure_id", "list_id", "ref", "attr", "payload", "ingested_at", "_topic",
         "_partition", "_offset"],
    )  # fmt: skip
    runner = CliRunner()
    args = ["--config", str(_config(store, tmp_path)), "--as-of", AS_OF.isoformat()]
    check = runner.invoke(app, ["retention", "check", *args])
    assert check.exit_code == 1, check.output
    text = " ".join(check.output.split())
    assert store.scalar("SELECT count() FROM interactions") == 0
    assert (
        "signal_state: holds rows from 2026-10-10T12:00:00+00:00, older than the 45 days "
        "it keeps (by evidence_from)"
    ) in text
    assert "23 of 24 tables within what they promise to keep" in text
    # The check changes nothing.
    assert store.scalar("SELECT count() FROM signal_state WHERE evidence_from < now()") == 1

    before = load_state(store, "acme", "p1")
    assert before is not None
    expected = derive(copy.deepcopy(before), PRIORS, SignalsConfig(), TYPES)

    fold = runner.invoke(app, ["retention", "fold", *args])
    assert fold.exit_code == 0, fold.output
    text = " ".join(fold.output.split())
    assert "folded 1 derivation states (3 signals settled, 2 pages dropped)" in text
    assert "rows deleted past their window: signal_state 1" in text
    assert "24 of 24 tables within what they promise to keep" in text
    again = runner.invoke(app, ["retention", "check", *args])
    assert again.exit_code == 0, again.output

    after = load_state(store, "acme", "p1")
    assert after is not None
    assert after.signals == {} and all(not b.pages for b in after.buckets.values())
    assert after.tombstones == before.tombstones and after.inferences == before.inferences
    # What derivation needs lives on in counts: the same inferences from the folded state.
    assert derive(after, PRIORS, SignalsConfig(), TYPES) == expected
    # No row of the state holds evidence any longer, superseded versions included.
    rows = store.query("SELECT evidence_from, state FROM signal_state").rows
    assert [r[0] for r in rows] == [None]
    pages = [b["pages"] for b in json.loads(rows[0][1])["buckets"].values()]
    # No page (what was shown) and no payload (what was done): the keys that made the
    # counts stay as their provenance (ids, at most 50 per value).
    assert pages == [[]] and E1 not in rows[0][1] and '"payload"' not in rows[0][1]


def test_a_state_written_before_migration_14_is_folded_once(store: Store) -> None:
    _derive(store)
    # As written before migration 15: no evidence_from (the column's default, 1970).
    store.command("ALTER TABLE signal_state UPDATE evidence_from = toDateTime64(0, 3, 'UTC') "
                  "WHERE 1 SETTINGS mutations_sync = 2")  # fmt: skip
    assert "signal_state" in {t.table for t in retention_check(store, AS_OF).past_window}
    # Evidence 50 days old at T0 + 40 days: within the window then, so only re-dated.
    folded = enforce_retention(store, T0 + timedelta(days=40), SignalsConfig())
    assert folded.states == 1 and folded.pages == 0
    current = store.scalar("SELECT min(evidence_from) FROM signal_state FINAL")
    assert current.replace(tzinfo=UTC) == T0 - timedelta(seconds=0)
    assert store.scalar("SELECT count() FROM signal_state WHERE evidence_from < {t:DateTime64(3)}",
                        {"t": T0}) == 0  # fmt: skip


def test_erase_tombstones_live_52_days_after_the_erase(store: Store) -> None:
    now = datetime.now(UTC)
    record_tombstones(
        store,
        {
            ("acme", "gone"): now - timedelta(days=ERASE_TOMBSTONE_DAYS + 2),
            ("acme", "just"): now - timedelta(days=ERASE_TOMBSTONE_DAYS, seconds=1),
            ("acme", "edge"): now - timedelta(days=ERASE_TOMBSTONE_DAYS, seconds=-60),
            ("acme", "recent"): now - timedelta(days=3),
        },
    )
    report = retention_check(store, now.date(), ("erase_tombstones",))
    [table] = report.tables
    assert table.table == "erase_tombstones" and table.window_days == 52
    assert table.past_window  # the check (by day) flags it before the job runs
    folded = enforce_retention(store, now, SignalsConfig())
    assert folded.deleted == {"erase_tombstones": 2}  # to the second: "just" goes too
    assert set(load_tombstones(store)) == {("acme", "edge"), ("acme", "recent")}
    # What the deleted tombstone could still drop is refused by its age before it would
    # be read: an item at or before that erase is past the raw retention.
    dropped_by_it = now - timedelta(days=ERASE_TOMBSTONE_DAYS, seconds=1)
    assert time_edge(dropped_by_it, now, timedelta(days=1)) is not None
    assert ERASE_TOMBSTONE_DAYS > RAW_KEEP_DAYS


def _people(n: int) -> list:
    """``n`` people (and one of another space) with the same aged evidence."""
    events = []
    for i in range(n):
        space = "lumen" if i == n - 1 else "acme"
        events += [type(e)(**{**e.__dict__, "space_id": space, "profile_id": f"p{i}",
                              "idempotency_key": f"{e.idempotency_key}-{i}"})
                   for e in _person()]  # fmt: skip
    return events


def test_the_fold_pages_people_and_gives_what_one_pass_gives(store_factory) -> None:  # type: ignore[no-untyped-def]
    results = []
    for page in (1_000, 2):
        store = store_factory()
        engine = SignalsEngine(SignalsConfig(), types_for=lambda _space: TYPES)
        for one in _people(5):
            engine.offer(one, one.occurred_at)
        DerivationSink(store).write(engine.fire_all())
        folded = Folded()
        now = datetime.combine(AS_OF, datetime.min.time(), UTC)
        fold_states(store, now, SignalsConfig(), folded, page=page)
        states = store.query(
            "SELECT space_id, profile_id, argMax(state, version) FROM signal_state "
            "GROUP BY ALL ORDER BY ALL"
        ).rows
        results.append((folded.states, folded.signals, folded.pages, states))
        assert folded.pages_read == (1 if page == 1_000 else 3)  # 5 people, pages of 2
    assert results[0] == results[1]
    assert results[0][0] == 5 and len(results[0][3]) == 5


def test_the_job_folds_each_space_by_its_types(store: Store, tmp_path: Path) -> None:
    """`turnstream retention fold` settles a space's states by its types document: shoe
    sizes bought 50 days ago (``attrs.shoe_size``, examples/types.toml) are the same
    inference after the fold as before."""
    from tests.unit.core.derivation.test_shoe_sizes import EXAMPLE, SHIRT, SNEAKERS, _bought

    engine = SignalsEngine(SignalsConfig(), types_for=lambda _space: EXAMPLE)
    for one in _shift([_bought("o1", SNEAKERS[0], 0, shoe_size="40"),
                       _bought("o2", SNEAKERS[1], 60, shoe_size="40", size="M"),
                       _bought("o3", SHIRT, 120, size="M")]):  # fmt: skip
        engine.offer(one, one.occurred_at)
    DerivationSink(store).write(engine.fire_all())
    config = SignalsConfig().for_space(EXAMPLE)
    before = load_state(store, "acme", "p1")
    assert before is not None
    expected = derive(before, PRIORS, config, EXAMPLE)
    assert ("item_variant.shoe_size", "40") in {(i.attr, i.value) for i in expected}

    types = Path(__file__).resolve().parents[3] / "examples" / "types.toml"
    settings = _config(store, tmp_path)
    space = f'[spaces.acme]\nfeatures = ["signals"]\ntypes = "{types}"\n'
    settings.write_text(settings.read_text() + space)
    args = ["--config", str(settings), "--as-of", AS_OF.isoformat()]
    fold = CliRunner().invoke(app, ["retention", "fold", *args])
    assert fold.exit_code == 0, fold.output
    assert "folded 1 derivation states (3 signals settled" in " ".join(fold.output.split())
    after = load_state(store, "acme", "p1")
    assert after is not None and after.signals == {}
    assert after.buckets["self"].sizes["item_variant.shoe_size"]["40"].net == 2
    assert derive(after, PRIORS, config, EXAMPLE) == expected


@pytest.mark.parametrize("in_store", [True, False], ids=["sql", "python"])
def test_a_person_erased_while_the_fold_runs_is_not_written_back(
    store: Store, in_store: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the worker the fold hands the store thread one statement at a time
    (``SharedStore``), and an ingest batch's erasure runs between them: a state the fold
    read before the person's erase is not written back after it (the person's evidence
    would outlive the erase). One who came back after their erase is folded as anyone."""
    engine = SignalsEngine(SignalsConfig(), types_for=lambda _space: TYPES)
    for one in _people(3):  # p0 erased during the fold; p1 erased before p0's events
        engine.offer(one, one.occurred_at)
    DerivationSink(store).write(engine.fire_all())
    # p1 was erased and came back: their tombstone is older than their state's events.
    record_tombstones(store, {("acme", "p1"): T0 - timedelta(days=1)})
    command, insert = store.command, store.insert
    erased: list[str] = []

    def erase_now() -> None:
        if not erased:
            erased.append("p0")
            record_tombstones(store, {("acme", "p0"): T0 + timedelta(days=1)})
            erase_subjects(store, [("acme", "p0")])

    def command_then(sql: str, *args: Any, **kwargs: Any) -> None:
        if sql.lstrip().startswith("INSERT INTO signal_state"):
            erase_now()
        command(sql, *args, **kwargs)

    def insert_then(table: str, *args: Any, **kwargs: Any) -> Any:
        if table == "signal_state":
            erase_now()
        return insert(table, *args, **kwargs)

    monkeypatch.setattr(store, "command", command_then)
    monkeypatch.setattr(store, "insert", insert_then)
    now = datetime.combine(AS_OF, datetime.min.time(), UTC)
    fold_states(store, now, SignalsConfig(), Folded(), in_store=in_store)
    assert erased  # between the fold's read and its write
    people = store.query("SELECT DISTINCT profile_id FROM signal_state ORDER BY 1").rows
    assert people == [("p1",), ("p2",)]
    folded = store.scalar("SELECT count() FROM signal_state WHERE evidence_from IS NULL")
    assert folded == 2  # both folded (p2 is of another space)
