"""Experiments against real ClickHouse (chDB): enrolment, attribution, results, the plot."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from turnstream.adapters.clickhouse.erase_tombstones import record_tombstones
from turnstream.adapters.clickhouse.erasure import erase_subjects
from turnstream.adapters.clickhouse.store import Store
from turnstream.jobs.experiments import assign, compare_experiment, plot_comparison, write_results
from turnstream.jobs.experiments.sequential import METHOD, boundaries, sequential_p_value
from turnstream.models.measurement import MeasurementDocument

pytestmark = pytest.mark.integration

#: Day 1 of the experiment, recent enough that the interactions' 45-day TTL keeps the rows.
START = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=25)


def at(day: int, hour: int = 10) -> datetime:
    """Day ``day`` of the experiment (1 = its start) at ``hour`` UTC."""
    return START + timedelta(days=day - 1, hours=hour)


DOC = MeasurementDocument.model_validate(
    {
        "experiments": [
            {
                "id": "exp-1",
                "space_id": "acme",
                "starts_at": START.isoformat(),
                "ends_at": (START + timedelta(days=14)).isoformat(),
                "critical_sources": ["pharmacy"],
                "window_days": 14,
                "arms": [
                    {"name": "control", "allocation": 1},
                    {"name": "no_soft_signals", "allocation": 1, "drops": ["soft_signals"]},
                    {"name": "full", "allocation": 1},
                ],
            }
        ]
    }
)
EXPERIMENT = DOC.experiments[0]
AS_OF = at(20, 12)
MINE = "01890a5d-ac96-774b-bcce-b302099a8057"
THEIRS = "01890a5d-ac96-774b-bcce-b302099a8058"
GONE = "01890a5d-ac96-774b-bcce-b302099a8059"


def _turns(store: Store, rows: list[tuple[str, str, str, str, str, datetime]]) -> None:
    store.insert(
        "turns",
        [
            (space, p, src, f"t-{i}", "shopper", exp, arm, t)
            for i, (space, p, src, exp, arm, t) in enumerate(rows)
        ],
        [
            "space_id",
            "profile_id",
            "source",
            "turn_id",
            "agent",
            "experiment_id",
            "experiment_arm",
            "occurred_at",
        ],
    )


def _token(exposure_id: str) -> str:
    return f"nx1.{exposure_id}.1.{'A' * 22}" if exposure_id else ""


def _outcomes(store: Store, rows: list[tuple[str, str, str, str, datetime]]) -> None:
    store.insert(
        "outcomes",
        [
            # As the ingest rule writes a verified token: exposure_id only when valid.
            (space, p, "web", kind, "sku:1", f"o-{i}", _token(x), x, 1 if x else 0,
             "valid" if x else "absent", t)
            for i, (space, p, kind, x, t) in enumerate(rows)
        ],
        [
            "space_id", "profile_id", "source", "outcome", "ref", "order_id",
            "exposure_token", "exposure_id", "exposure_pos", "token_status", "occurred_at",
        ],
    )  # fmt: skip


def _seed(store: Store) -> list[str]:
    """The scenario; returns the people only seen in interactions (assigned by hash)."""
    e = "exp-1"
    _turns(
        store,
        [
            ("acme", "c1", "web", e, "control", at(2)),
            ("acme", "c1", "web", e, "control", at(4)),
            ("acme", "c2", "web", e, "control", at(2)),
            ("acme", "c3", "web", e, "control", at(2)),
            ("acme", "f1", "web", e, "full", at(3)),
            ("acme", "f2", "web", e, "full", at(3)),
            ("acme", "f3", "web", e, "full", at(3)),
            ("acme", "f4", "web", e, "full", at(3)),
            ("acme", "n1", "pharmacy", e, "no_soft_signals", at(4)),
            ("acme", "u1", "web", e, "bogus", at(4)),  # an arm the document does not know
            ("acme", "early", "web", e, "full", at(0)),
            ("acme", "late", "web", e, "full", at(16)),  # after ends_at
            ("lumen", "elsewhere", "web", e, "full", at(3)),
        ],
    )
    hashed = [f"h{i}" for i in range(12)]
    store.insert(
        "interactions",
        [
            ("acme", p, "pharmacy" if i % 2 else "web", "engaged", "", at(5 + i % 3))
            for i, p in enumerate(hashed)
        ]
        + [("acme", "x9", "web", "presented", THEIRS, at(2))]
        + [("acme", "f1", "web", "presented", MINE, at(3, 11))],
        ["space_id", "profile_id", "source", "kind", "exposure_id", "occurred_at"],
    )  # fmt: skip
    store.insert(
        "exposure_items",
        [("acme", "f1", "beneficiary:kid", MINE, 1, "sku:1", at(3, 11), 1)],
        ["space_id", "profile_id", "for", "exposure_id", "pos", "ref", "delivered_at", "version"],
    )
    _outcomes(
        store,
        [
            ("acme", "c1", "purchase", "", at(3)),  # after assignment: success
            ("acme", "c2", "purchase", "", at(2, 9)),  # before the first turn: no
            ("acme", "c3", "purchase", "", at(17)),  # 15 days later, outside the window: no
            ("acme", "f1", "purchase", MINE, at(4)),  # own exposure (for a beneficiary): yes
            ("acme", "f2", "purchase", THEIRS, at(4)),  # someone else's exposure: no
            ("acme", "f3", "purchase", GONE, at(4)),  # exposure not on record: by person
            ("acme", "f4", "delivery", "", at(4)),  # not the experiment's outcome
            ("lumen", "f4", "purchase", "", at(4)),  # another space
            ("acme", "n1", "purchase", "", at(21)),  # after as_of
            ("acme", "u1", "purchase", "", at(5)),  # not enrolled
            ("acme", "h0", "purchase", "", at(9)),
            ("acme", "h1", "purchase", "", at(9)),
            ("acme", "h2", "purchase", "", at(9)),
        ],
    )
    return hashed


def _expected(hashed: list[str]) -> tuple[Counter[str], Counter[str]]:
    """People and successes per arm of the one population every figure reads: people
    who came through the critical source (n1, the odd hashed ones) are left out."""
    people = Counter({"control": 3, "full": 4, "no_soft_signals": 0})
    successes = Counter({"control": 1, "full": 2})
    for i, p in enumerate(hashed):
        if i % 2:
            continue  # came through the pharmacy: a critical source
        arm = assign(EXPERIMENT, p, "web")
        people[arm] += 1
        successes[arm] += p in {"h0", "h1", "h2"}
    people[assign(EXPERIMENT, "x9", "web")] += 1  # seen when shown a list, never cited
    return people, successes


def test_compare_enrols_attributes_and_counts_by_hand(store: Store) -> None:
    hashed = _seed(store)
    people, successes = _expected(hashed)

    comparison = compare_experiment(store, DOC, "exp-1", AS_OF)

    assert comparison.baseline == "control"
    assert [a.name for a in comparison.arms] == ["control", "no_soft_signals", "full"]
    for arm in comparison.arms:
        assert (arm.name, arm.people, arm.successes) == (
            arm.name,
            people[arm.name],
            successes[arm.name],
        )
    d = comparison.diagnostics
    assert d["cited_unknown_arm"] == 1
    assert (d["cited"], d["hashed"]) == (8, len(hashed) + 1)
    assert (d["outcomes_by_token"], d["outcomes_token_other_person"]) == (1, 1)
    assert d["outcomes_token_unknown"] == 1
    # Critical sources never sit in control, whichever way they were assigned.
    rows = store.query(
        "SELECT profile_id, arm, source, method, assigned_at "
        "FROM experiment_assignments FINAL WHERE experiment_id = 'exp-1'"
    ).as_dicts()
    assert {r["profile_id"] for r in rows} == {
        "c1",
        "c2",
        "c3",
        "f1",
        "f2",
        "f3",
        "f4",
        "n1",
        "x9",
        *hashed,
    }
    assert not [r for r in rows if r["source"] == "pharmacy" and r["arm"] == "control"]
    c1 = next(r for r in rows if r["profile_id"] == "c1")
    assert (c1["arm"], c1["method"]) == ("control", "cited")
    assert c1["assigned_at"].replace(tzinfo=UTC) == at(2)  # the first turn


def test_assignments_stay_once_recorded(store: Store) -> None:
    _seed(store)
    first = compare_experiment(store, DOC, "exp-1", AS_OF)
    assert first.diagnostics["recorded_now"] == first.diagnostics["people"]
    # The interactions expire; the recorded assignments keep those people in their arms.
    store.command("DELETE FROM interactions WHERE kind = 'engaged'")
    assert store.scalar("SELECT count() FROM interactions") == 2
    again = compare_experiment(store, DOC, "exp-1", AS_OF)
    assert again.diagnostics["recorded_now"] == 0
    assert [(a.name, a.people, a.successes) for a in again.arms] == [
        (a.name, a.people, a.successes) for a in first.arms
    ]


def test_an_earlier_as_of_sees_less(store: Store) -> None:
    _seed(store)
    early = compare_experiment(store, DOC, "exp-1", at(2, 23))
    expected = Counter({"control": 3, "no_soft_signals": 0, "full": 0})
    expected[assign(EXPERIMENT, "x9", "web")] += 1  # shown a list on day 2
    assert {a.name: a.people for a in early.arms} == expected
    assert early.arm("control").successes == 0  # c1 bought on the 3rd


def test_write_results_is_idempotent_per_day(store: Store) -> None:
    _seed(store)
    comparison = compare_experiment(store, DOC, "exp-1", AS_OF)
    assert write_results(store, comparison, AS_OF) == 3
    assert write_results(store, comparison, AS_OF) == 3
    assert store.scalar("SELECT count() FROM experiment_results") == 3

    later = AS_OF + timedelta(hours=6)
    write_results(store, compare_experiment(store, DOC, "exp-1", later), later)
    rows = store.query(
        "SELECT arm, day, people, successes, rate, diff, p_value, srm_p_value, computed_at "
        "FROM experiment_results FINAL ORDER BY arm"
    ).as_dicts()
    assert len(rows) == 3
    assert {r["day"] for r in rows} == {AS_OF.date()}
    assert {r["computed_at"].replace(tzinfo=UTC) for r in rows} == {later}
    control = next(r for r in rows if r["arm"] == "control")
    full = next(r for r in rows if r["arm"] == "full")
    assert control["diff"] is None and control["p_value"] is None
    assert full["people"] == comparison.arm("full").people
    assert full["diff"] == pytest.approx(comparison.arm("full").diff)
    assert 0 <= full["srm_p_value"] <= 1

    next_day = AS_OF + timedelta(days=1)
    write_results(store, compare_experiment(store, DOC, "exp-1", next_day), next_day)
    assert store.scalar("SELECT count() FROM experiment_results FINAL") == 6


def test_plot_comparison_writes_a_png(store: Store, tmp_path: Path) -> None:
    _seed(store)
    comparison = compare_experiment(store, DOC, "exp-1", AS_OF)
    out = plot_comparison(comparison, tmp_path / "exp-1.png")
    data = out.read_bytes()
    assert len(data) > 1000
    assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_cuped_covariate_holm_and_the_look_land_in_the_results(store: Store) -> None:
    _seed(store)
    _outcomes(
        store,
        [
            ("acme", "c1", "purchase", "", at(5)),  # a second purchase in c1's window
            ("acme", "c1", "purchase", "", at(-3)),  # before the start, 4 days before c1's turn
            ("acme", "c1", "purchase", "", at(1)),
            ("acme", "f2", "purchase", "", at(2)),  # after the start, before f2's turn
            ("acme", "f1", "purchase", "", at(-40)),  # 42 days before: outside 28 days
            ("acme", "f3", "kept", "", at(1)),  # another outcome
            ("lumen", "f4", "purchase", "", at(1)),  # another space
        ],
    )
    comparison = compare_experiment(store, DOC, "exp-1", AS_OF)
    d = comparison.diagnostics
    # c1: 2, f2: 1, and c2's purchase of the seed, an hour before its first turn: 1.
    assert (d["pre_period_people"], d["pre_period_outcomes"]) == (3, 4)
    look = comparison.look
    assert (look.look, look.horizon_days, look.method, look.cuped_days) == (20, 28, METHOD, 28)
    # The first look written: it may spend all that 20/28 of the horizon allows.
    assert look.boundary == pytest.approx(boundaries([20 / 28])[-1])
    assert look.basis == "cuped" and look.theta is not None
    full = look.arm("full")
    assert full.seq_p_value == pytest.approx(sequential_p_value(full.z, [20 / 28]))
    assert full.cuped is not None and full.cuped.diff_low < full.cuped.diff < full.cuped.diff_high
    assert (
        not look.may_act and look.verdict == "wait: no arm has crossed its boundary (look 20 of 28)"
    )

    write_results(store, comparison, AS_OF)
    rows = {
        r["arm"]: r
        for r in store.query(
            "SELECT arm, p_holm, cuped_days, cuped_theta, cuped_diff, cuped_p_value, method, "
            "basis, look, horizon_days, boundary, seq_p_value, seq_p_holm, may_act, verdict, "
            "per_person, per_person_diff, per_person_cuped_diff "
            "FROM experiment_results FINAL"
        ).as_dicts()
    }
    assert rows["control"]["seq_p_value"] is None and rows["control"]["cuped_diff"] is None
    assert rows["control"]["look"] == 20 and rows["control"]["verdict"] == look.verdict
    assert rows["full"]["cuped_diff"] == pytest.approx(full.cuped.diff)
    assert rows["full"]["seq_p_holm"] == pytest.approx(full.seq_p_holm)
    assert rows["full"]["p_holm"] == pytest.approx(full.p_holm)
    assert rows["full"]["cuped_theta"] == pytest.approx(look.theta)
    assert (rows["full"]["basis"], rows["full"]["horizon_days"]) == ("cuped", 28)
    # Outcomes per person: each success bought once, but c1 twice.
    control = comparison.arm("control")
    assert rows["control"]["per_person"] == pytest.approx((control.successes + 1) / control.people)
    assert rows["full"]["per_person"] == pytest.approx(
        comparison.arm("full").successes / comparison.arm("full").people
    )
    assert rows["full"]["per_person_diff"] == pytest.approx(
        rows["full"]["per_person"] - rows["control"]["per_person"]
    )
    assert rows["full"]["per_person_cuped_diff"] is not None
    assert rows["full"]["may_act"] is False

    # A crossing recorded on an earlier day stands: the repeated p-value is the smallest.
    store.insert(
        "experiment_results",
        [("exp-1", "acme", "full", (AS_OF - timedelta(days=3)).date(), 0.0001, AS_OF)],
        ["experiment_id", "space_id", "arm", "day", "seq_p_value", "computed_at"],
    )
    later = compare_experiment(store, DOC, "exp-1", AS_OF + timedelta(days=1))
    assert later.look.look == 21
    assert later.look.arm("full").seq_p_value == 0.0001
    assert later.look.may_act and later.look.verdict.startswith("act: full differ")


def test_the_compare_command_prints_the_look(store: Store, tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from turnstream.entrypoints.cli.main import app

    _seed(store)
    arms = "\n".join(
        f'[[experiments.arms]]\nname = "{a.name}"\nallocation = {a.allocation}\n'
        for a in EXPERIMENT.arms
    )
    measurement = tmp_path / "measurement.toml"
    measurement.write_text(
        f'[[experiments]]\nid = "exp-1"\nspace_id = "acme"\nstarts_at = {START.isoformat()}\n'
        f'critical_sources = ["pharmacy"]\nhorizon_days = 21\n{arms}'
    )
    config = tmp_path / "turnstream.toml"
    config.write_text(f'[store]\ndsn = "{store.dsn}"\ndatabase = "{store.database}"\n')
    args = ["experiments", "compare", "exp-1", "--config", str(config),
            "--measurement", str(measurement), "--as-of", AS_OF.date().isoformat()]  # fmt: skip
    runner = CliRunner()
    table = runner.invoke(app, [*args, "--plot", str(tmp_path / "exp.png")])
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert "look 20 of 21" in text and "do not act yet" in text
    assert "Holm across arms" in text and "CUPED" in text
    assert "purchases per person within 14 days" in text
    assert (tmp_path / "exp.png").read_bytes()[:4] == b"\x89PNG"
    as_json = runner.invoke(app, [*args, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    rows = json.loads(as_json.output[: as_json.output.rindex("]") + 1])
    full = next(r for r in rows if r["arm"] == "full")
    assert {"p_holm", "cuped_diff", "seq_p_value", "seq_p_holm", "per_person"} <= set(full)
    assert full["per_person"] == pytest.approx(full["successes"] / full["people"])
    # Read only: neither the look nor the assignments were written.
    assert "read only: nothing written" in text
    assert store.scalar("SELECT count() FROM experiment_results") == 0
    assert store.scalar("SELECT count() FROM experiment_assignments") == 0
    written = runner.invoke(app, [*args, "--write"])
    assert written.exit_code == 0, written.output
    assert "wrote 3 rows to experiment_results" in " ".join(written.output.split())
    assert store.scalar("SELECT count() FROM experiment_results FINAL WHERE look = 20") == 3
    assert store.scalar("SELECT count() FROM experiment_assignments") > 0


def test_only_a_verified_token_attributes_an_outcome(store: Store) -> None:
    """A row from before signed tokens (migration 10 reads it 'unverified') or one whose
    token failed carries no exposure that counts: the outcome counts by person."""
    _seed(store)
    before = compare_experiment(store, DOC, "exp-1", AS_OF)
    store.insert(  # as written before migration 10: no token_status column
        "outcomes",
        [("acme", "c2", "web", "purchase", "sku:1", "o-legacy", _token(THEIRS), THEIRS, 1, at(4))],
        [
            "space_id", "profile_id", "source", "outcome", "ref", "order_id",
            "exposure_token", "exposure_id", "exposure_pos", "occurred_at",
        ],
    )  # fmt: skip
    status = store.query("SELECT token_status FROM outcomes WHERE order_id = 'o-legacy'").rows
    assert status == [("unverified",)]
    after = compare_experiment(store, DOC, "exp-1", AS_OF)
    d0, d1 = before.diagnostics, after.diagnostics
    # THEIRS was shown to someone else: read as a token, c2's purchase would not count.
    assert d1["outcomes_token_other_person"] == d0["outcomes_token_other_person"] == 1
    assert d1["outcomes_by_person"] == d0["outcomes_by_person"] + 1
    ((arm,),) = store.query(
        "SELECT arm FROM experiment_assignments FINAL "
        "WHERE experiment_id = 'exp-1' AND profile_id = 'c2'"
    ).rows
    assert after.arm(arm).successes == before.arm(arm).successes + 1


def test_a_person_erased_while_the_job_enrols_is_not_recorded_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the worker the job hands the store thread one statement at a time
    (``SharedStore``), and an ingest batch's erasure runs between them: c1, seen before
    their erase, is not recorded in an arm after it. c2, erased before their first turn
    and back since, is recorded as anyone."""
    _seed(store)
    record_tombstones(store, {("acme", "c2"): at(1)})
    command, insert = store.command, store.insert
    erased: list[str] = []

    def erase_now() -> None:
        if not erased:
            erased.append("c1")
            record_tombstones(store, {("acme", "c1"): at(10)})
            erase_subjects(store, [("acme", "c1")])

    def command_then(sql: str, *args: Any, **kwargs: Any) -> None:
        if "INSERT INTO experiment_assignments" in sql:
            erase_now()
        command(sql, *args, **kwargs)

    def insert_then(table: str, *args: Any, **kwargs: Any) -> Any:
        if table == "experiment_assignments":
            erase_now()
        return insert(table, *args, **kwargs)

    monkeypatch.setattr(store, "command", command_then)
    monkeypatch.setattr(store, "insert", insert_then)
    compare_experiment(store, DOC, "exp-1", AS_OF)
    assert erased  # between the job's reads and its write
    people = {r[0] for r in store.query("SELECT profile_id FROM experiment_assignments").rows}
    assert "c1" not in people and {"c2", "c3", "f1"} <= people
