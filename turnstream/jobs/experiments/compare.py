"""Compare the arms of an experiment: who is in which arm, who succeeded, and the statistics.

Who is in the experiment, as of a time:

* a person with a turn citing the experiment is in the arm the first such turn names
  (the agent ran that arm); a turn citing an arm the document does not know is counted
  and its person left out; a turn citing no arm leaves the person to the hash;
* everyone else seen in the space (turns or interactions) since the start is assigned
  by :func:`~turnstream.core.experiments.assign` from the source of their
  first event;
* an assignment once recorded in ``experiment_assignments`` stays (interactions expire
  after 45 days, and a late event must not move a person), unless a turn now cites an arm.

The assignment time is the first turn (or event) time. A success is an outcome of the
experiment's kind after that time, within ``window_days`` and by the as-of time. With an
exposure token, the token's exposure must belong to the same person (by profile, whatever
the bucket: an order for a beneficiary through the customer's exposure counts for the
customer); a token whose exposure belongs to someone else does not count, and a token
whose exposure is not on record falls back to the person.

The CUPED covariate of a person is the number of outcomes of the experiment's kind in the
``cuped_days`` before their assignment. Each day's comparison is one look of the
group-sequential test (:mod:`.looks`); the smallest repeated p-values of the earlier days
and the people of each earlier look (the information the sequential test's boundaries
rest on) are read back from ``experiment_results``.

The rules are pure functions on plain data, in :mod:`.enrolment` (re-exported here);
this module only reads and writes the store (:func:`compare_experiment`,
:func:`write_results`); the picture is :func:`.plots.plot_comparison`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta

from turnstream.adapters.clickhouse.erase_tombstones import unless_erased
from turnstream.adapters.clickhouse.store import Store, store_time
from turnstream.jobs.experiments.enrolment import (
    ASSIGNMENT_COLUMNS,
    RESULT_COLUMNS,
    Assignment,
    Attribution,
    Cited,
    Comparison,
    OutcomeEvent,
    Sighting,
    arm_counts,
    arm_units,
    as_utc,
    attribute,
    earlier_looks,
    enrol,
    per_person_outcomes,
    population,
    pre_period_counts,
    result_rows,
    summarize,
)
from turnstream.jobs.experiments.looks import Earlier
from turnstream.jobs.experiments.plots import plot_comparison
from turnstream.models.measurement import Experiment, MeasurementDocument

__all__ = [
    "ASSIGNMENT_COLUMNS",
    "RESULT_COLUMNS",
    "Assignment",
    "Attribution",
    "Cited",
    "Comparison",
    "OutcomeEvent",
    "Sighting",
    "arm_counts",
    "arm_units",
    "attribute",
    "compare_experiment",
    "earlier_looks",
    "enrol",
    "per_person_outcomes",
    "plot_comparison",
    "population",
    "pre_period_counts",
    "result_rows",
    "summarize",
    "write_results",
]


def _ts(name: str) -> str:
    """The time parameter ``name`` (see :func:`_params`) as a DateTime64 in SQL."""
    return f"toDateTime64({{{name}:String}}, 3, 'UTC')"


def _params(e: Experiment, **times: datetime) -> dict[str, str]:
    """The query parameters: the experiment's space, id and outcome, and ``times``."""
    return {
        "space_id": e.space_id,
        "experiment_id": e.id,
        "outcome": e.outcome,
        **{
            name: value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
            for name, value in times.items()
        },
    }


def _cited(store: Store, e: Experiment, end: datetime) -> list[Cited]:
    rows = store.query(
        f"""SELECT profile_id, argMin(experiment_arm, occurred_at), argMin(source, occurred_at),
    min(occurred_at), uniqExactIf(experiment_arm, experiment_arm != '')
FROM turns
WHERE space_id = {{space_id:String}} AND experiment_id = {{experiment_id:String}}
    AND occurred_at >= {_ts("starts_at")} AND occurred_at <= {_ts("end")}
GROUP BY profile_id""",
        _params(e, starts_at=e.starts_at, end=end),
    ).rows
    return [Cited(p, arm, src, store_time(at), int(n)) for p, arm, src, at, n in rows]


def _seen(store: Store, e: Experiment, end: datetime) -> list[Sighting]:
    where = (
        f"space_id = {{space_id:String}} AND occurred_at >= {_ts('starts_at')}"
        f" AND occurred_at <= {_ts('end')}"
    )
    rows = store.query(
        f"""SELECT profile_id, argMin(source, occurred_at), min(occurred_at)
FROM (
    SELECT profile_id, source, occurred_at FROM turns WHERE {where}
    UNION ALL
    SELECT profile_id, source, occurred_at FROM interactions WHERE {where}
)
GROUP BY profile_id""",
        _params(e, starts_at=e.starts_at, end=end),
    ).rows
    return [Sighting(p, src, store_time(at)) for p, src, at in rows]


def _recorded(store: Store, e: Experiment, as_of: datetime) -> dict[str, Assignment]:
    rows = store.query(
        f"""SELECT profile_id, arm, source, assigned_at, method
FROM experiment_assignments FINAL
WHERE experiment_id = {{experiment_id:String}} AND assigned_at <= {_ts("as_of")}""",
        _params(e, as_of=as_of),
    ).rows
    return {p: Assignment(p, arm, src, store_time(at), m) for p, arm, src, at, m in rows}


def _outcomes(store: Store, e: Experiment, as_of: datetime) -> list[OutcomeEvent]:
    rows = store.query(
        # Only a verified token names an exposure (the ingest rule fills exposure_id only
        # then; rows from before signed tokens read 'unverified' and count by person).
        f"""SELECT profile_id, occurred_at, if(token_status = 'valid', exposure_id, '')
FROM outcomes
WHERE space_id = {{space_id:String}} AND outcome = {{outcome:String}}
    AND occurred_at > {_ts("starts_at")} AND occurred_at <= {_ts("as_of")}""",
        _params(e, starts_at=e.starts_at, as_of=as_of),
    ).rows
    return [OutcomeEvent(p, store_time(at), x) for p, at, x in rows]


def _owners(store: Store, e: Experiment, as_of: datetime) -> dict[str, frozenset[str]]:
    tokens = f"""SELECT exposure_id FROM outcomes
    WHERE space_id = {{space_id:String}} AND outcome = {{outcome:String}} AND exposure_id != ''
        AND token_status = 'valid'
        AND occurred_at > {_ts("starts_at")} AND occurred_at <= {_ts("as_of")}"""
    rows = store.query(
        f"""SELECT exposure_id, groupUniqArray(profile_id)
FROM (
    SELECT exposure_id, profile_id FROM exposure_items
    WHERE space_id = {{space_id:String}} AND exposure_id IN ({tokens})
    UNION ALL
    SELECT exposure_id, profile_id FROM interactions
    WHERE space_id = {{space_id:String}} AND kind = 'presented' AND exposure_id IN ({tokens})
)
GROUP BY exposure_id""",
        _params(e, starts_at=e.starts_at, as_of=as_of),
    ).rows
    return {x: frozenset(people) for x, people in rows}


def _pre_period(store: Store, e: Experiment, end: datetime) -> list[OutcomeEvent]:
    # Outcomes from cuped_days before the start to the last assignment time; the rule that
    # keeps those before each person's own assignment is pre_period_counts.
    if e.cuped_days <= 0:
        return []
    rows = store.query(
        """SELECT profile_id, occurred_at
FROM outcomes
WHERE space_id = {space:String} AND outcome = {outcome:String}
    AND occurred_at >= {since:DateTime64(3, 'UTC')}
    AND occurred_at < {until:DateTime64(3, 'UTC')}""",
        parameters={
            "space": e.space_id,
            "outcome": e.outcome,
            "since": e.starts_at - timedelta(days=e.cuped_days),
            "until": end,
        },
    ).rows
    return [OutcomeEvent(p, store_time(at)) for p, at in rows]


def _previous_looks(store: Store, e: Experiment, day: date) -> dict[str, Earlier]:
    rows = store.query(
        """SELECT day, arm, people, seq_p_value
FROM experiment_results FINAL
WHERE experiment_id = {experiment:String} AND day < {day:Date}""",
        parameters={"experiment": e.id, "day": day},
    ).rows
    return earlier_looks(e, rows)


def _record(
    store: Store,
    e: Experiment,
    assignments: Mapping[str, Assignment],
    recorded: Mapping[str, Assignment],
    as_of: datetime,
) -> int:
    """Record the assignments not recorded yet; how many there were. Not those of a
    person erased since the job read their rows (an erasure runs between the job's
    statements): a person's assignment stems from their events up to ``assigned_at``;
    such an assignment is left out, yet counted."""
    fresh = [a for p, a in assignments.items() if recorded.get(p) != a]
    if fresh:
        store.stage(
            _FRESH,
            _FRESH_COLUMNS,
            [
                (e.id, e.space_id, a.profile_id, a.arm, a.source, a.method, a.assigned_at, as_of)
                for a in fresh
            ],
        )
        store.command(
            f"INSERT INTO experiment_assignments ({', '.join(ASSIGNMENT_COLUMNS)}) "
            + unless_erased(f"SELECT * FROM {_FRESH}", ASSIGNMENT_COLUMNS, "w.assigned_at")
        )
        store.stage(_FRESH, _FRESH_COLUMNS, [])
    return len(fresh)


#: The assignments :func:`_record` writes, staged.
_FRESH = "_fresh_assignments"
_FRESH_COLUMNS = [
    (c, "DateTime64(3, 'UTC')" if c.endswith("_at") else "String") for c in ASSIGNMENT_COLUMNS
]


def compare_experiment(
    store: Store,
    doc: MeasurementDocument,
    experiment_id: str,
    as_of: datetime,
    record: bool = True,
) -> Comparison:
    """Enrol, attribute the outcomes and compare the arms; ``record``: also record the new
    assignments in ``experiment_assignments`` (the scheduled job's path; a read-only
    ``experiments compare`` passes False and the counts are the same)."""
    as_of = as_utc(as_of)
    e = doc.experiment(experiment_id)
    end = min(e.ends_at, as_of) if e.ends_at else as_of
    recorded = _recorded(store, e, as_of)
    assignments, notes, several = enrol(e, _cited(store, e, end), recorded, _seen(store, e, end))
    fresh = _record(store, e, assignments, recorded, as_of) if record else 0
    notes = {**notes, "recorded_now": fresh}
    attribution = attribute(
        e, assignments, _outcomes(store, e, as_of), _owners(store, e, as_of), as_of
    )
    covariate = pre_period_counts(assignments, _pre_period(store, e, end), e.cuped_days)
    notes["pre_period_people"] = len(covariate)
    notes["pre_period_outcomes"] = sum(covariate.values())
    previous = _previous_looks(store, e, as_of.date())
    return summarize(e, assignments, attribution, as_of, notes, covariate, previous, several)


def write_results(store: Store, comparison: Comparison, as_of: datetime) -> int:
    """Write one row per arm for the as-of day; writing the same day again replaces it."""
    rows = result_rows(comparison, as_of)
    digest = hashlib.sha256(json.dumps(rows, default=str).encode()).hexdigest()[:32]
    store.insert("experiment_results", rows, RESULT_COLUMNS, token=f"experiment_results:{digest}")
    return len(rows)
