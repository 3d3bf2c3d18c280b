"""The rules of an experiment's look, pure: who is in which arm (enrolment and the one
population every figure reads), who succeeded (attribution), the CUPED covariate, the
arms' statistics, the warnings and the rows of ``experiment_results``. Plain data in and
out; :mod:`.compare` reads and writes the store around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from turnstream.core.experiment_warnings import (
    MIN_UNITS,
    AnalysisWarning,
    ArmCounts,
    arm_warnings,
    excluded_warnings,
    horizon_warning,
    sample_ratio_warning,
)
from turnstream.core.experiments import assign
from turnstream.jobs.experiments.analysis import Analysis, analyze
from turnstream.jobs.experiments.looks import Earlier, Look, assess, information, look_number
from turnstream.jobs.experiments.stats import (
    ArmCount,
    ArmStats,
    SampleRatio,
    compare_arms,
    sample_ratio_mismatch,
)
from turnstream.models.measurement import Experiment

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
    "as_utc",
    "attribute",
    "earlier_looks",
    "enrol",
    "per_person_outcomes",
    "population",
    "pre_period_counts",
    "result_rows",
    "summarize",
]

ASSIGNMENT_COLUMNS = (
    "experiment_id",
    "space_id",
    "profile_id",
    "arm",
    "source",
    "method",
    "assigned_at",
    "recorded_at",
)
RESULT_COLUMNS = (
    "experiment_id",
    "space_id",
    "arm",
    "day",
    "baseline",
    "outcome",
    "window_days",
    "people",
    "successes",
    "rate",
    "rate_low",
    "rate_high",
    "diff",
    "diff_low",
    "diff_high",
    "lift",
    "lift_low",
    "lift_high",
    "p_value",
    "srm_p_value",
    "srm_flag",
    "computed_at",
    # migration 8: CUPED, Holm and the sequential look
    "p_holm",
    "cuped_days",
    "cuped_theta",
    "cuped_diff",
    "cuped_diff_low",
    "cuped_diff_high",
    "cuped_lift",
    "cuped_lift_low",
    "cuped_lift_high",
    "cuped_p_value",
    "cuped_p_holm",
    "method",
    "basis",
    "look",
    "horizon_days",
    "boundary",
    "seq_p_value",
    "seq_p_holm",
    "seq_diff_low",
    "seq_diff_high",
    "may_act",
    "verdict",
    "per_person",
    "per_person_diff",
    "per_person_diff_low",
    "per_person_diff_high",
    "per_person_p_value",
    "per_person_cuped_diff",
    "per_person_cuped_diff_low",
    "per_person_cuped_diff_high",
    "per_person_cuped_p_value",
)


@dataclass(frozen=True)
class Cited:
    """A person's first turn citing the experiment."""

    profile_id: str
    arm: str
    source: str
    first_at: datetime
    arms_cited: int = 1


@dataclass(frozen=True)
class Sighting:
    """A person's first event (turn or interaction) in the space since the start."""

    profile_id: str
    source: str
    first_at: datetime


@dataclass(frozen=True)
class Assignment:
    """A person's arm: ``cited`` by a turn, or ``hashed`` by :func:`assign`."""

    profile_id: str
    arm: str
    source: str
    assigned_at: datetime
    method: str


@dataclass(frozen=True)
class OutcomeEvent:
    """An outcome of the experiment's kind; ``exposure_id`` is '' without a token."""

    profile_id: str
    occurred_at: datetime
    exposure_id: str = ""


@dataclass(frozen=True)
class Attribution:
    """Who succeeded, and how the outcomes with a token were judged."""

    successes: frozenset[str]
    by_token: int = 0
    by_person: int = 0
    token_other_person: int = 0
    token_unknown: int = 0
    #: Outcomes that counted, per person who succeeded (the per-person outcome count).
    outcomes: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Comparison:
    """An experiment's arms compared as of a time."""

    experiment_id: str
    space_id: str
    outcome: str
    window_days: int
    as_of: datetime
    baseline: str
    arms: tuple[ArmStats, ...]
    srm: SampleRatio
    diagnostics: Mapping[str, int] = field(default_factory=dict)
    look: Look | None = None
    #: Outcomes per person within the window, a continuous metric beside the rate.
    per_person: Analysis | None = None
    #: What the figures must be read with (``core/experiment_warnings.py``).
    warnings: tuple[AnalysisWarning, ...] = ()

    def arm(self, name: str) -> ArmStats:
        """The statistics of one arm."""
        for stats in self.arms:
            if stats.name == name:
                return stats
        raise KeyError(name)


def enrol(
    experiment: Experiment,
    cited: Iterable[Cited],
    recorded: Mapping[str, Assignment],
    seen: Iterable[Sighting],
) -> tuple[dict[str, Assignment], dict[str, int], frozenset[str]]:
    """Everyone's arm (cited beats recorded beats hashed), counts of what was odd, and the
    people found in more than one arm: their turns cite two arms or more, or a turn now
    cites another arm than the one recorded for them (the population rule leaves them
    out of every figure: :func:`population`)."""
    known = {a.name for a in experiment.arms}
    out: dict[str, Assignment] = dict(recorded)
    unknown: set[str] = set()
    several: set[str] = set()
    conflicting = 0
    for c in cited:
        if not c.arm:
            continue  # the turn left the arm to the memory: hash it below
        if c.arm not in known:
            unknown.add(c.profile_id)
            out.pop(c.profile_id, None)
            continue
        conflicting += c.arms_cited > 1
        before = recorded.get(c.profile_id)
        if c.arms_cited > 1 or (before is not None and before.arm != c.arm):
            several.add(c.profile_id)
        out[c.profile_id] = Assignment(c.profile_id, c.arm, c.source, c.first_at, "cited")
    for s in seen:
        if s.profile_id in out or s.profile_id in unknown:
            continue
        arm = assign(experiment, s.profile_id, s.source)
        out[s.profile_id] = Assignment(s.profile_id, arm, s.source, s.first_at, "hashed")
    notes = {"cited_unknown_arm": len(unknown), "cited_conflicting_arms": conflicting}
    return out, notes, frozenset(several)


def population(
    experiment: Experiment, assignments: Mapping[str, Assignment], several: frozenset[str]
) -> tuple[dict[str, Assignment], int, int]:
    """The one population every figure reads (the SRM check and every estimate alike):
    the assigned people, less those found in more than one arm and those who came
    through a critical source (they never go to control, so they follow neither the
    split nor the comparison). With how many of each were left out."""
    critical = set(experiment.critical_sources)
    kept: dict[str, Assignment] = {}
    in_several = from_critical = 0
    for person, a in assignments.items():
        if person in several:
            in_several += 1
        elif a.source in critical:
            from_critical += 1
        else:
            kept[person] = a
    return kept, in_several, from_critical


def attribute(
    experiment: Experiment,
    assignments: Mapping[str, Assignment],
    outcomes: Iterable[OutcomeEvent],
    owners: Mapping[str, frozenset[str]],
    as_of: datetime,
) -> Attribution:
    """People with an outcome after their assignment, within the window and by ``as_of``.

    ``owners`` maps an exposure id to the profiles it was delivered to.
    """
    window = timedelta(days=experiment.window_days)
    successes: dict[str, int] = {}
    counts = {"by_token": 0, "by_person": 0, "token_other_person": 0, "token_unknown": 0}
    for o in outcomes:
        a = assignments.get(o.profile_id)
        if a is None or not (a.assigned_at < o.occurred_at <= min(a.assigned_at + window, as_of)):
            continue
        if o.exposure_id:
            holders = owners.get(o.exposure_id)
            if holders is None:
                counts["token_unknown"] += 1
            elif o.profile_id not in holders:
                counts["token_other_person"] += 1
                continue
            else:
                counts["by_token"] += 1
        else:
            counts["by_person"] += 1
        successes[o.profile_id] = successes.get(o.profile_id, 0) + 1
    return Attribution(frozenset(successes), **counts, outcomes=successes)


def pre_period_counts(
    assignments: Mapping[str, Assignment], outcomes: Iterable[OutcomeEvent], days: int
) -> dict[str, int]:
    """Per person, outcomes in the ``days`` before their assignment (the CUPED covariate)."""
    before = timedelta(days=days)
    counts: dict[str, int] = {}
    for o in outcomes:
        a = assignments.get(o.profile_id)
        if a is not None and a.assigned_at - before <= o.occurred_at < a.assigned_at:
            counts[o.profile_id] = counts.get(o.profile_id, 0) + 1
    return counts


def arm_units(
    experiment: Experiment,
    assignments: Iterable[Assignment],
    outcomes: Mapping[str, int],
    covariate: Mapping[str, int],
) -> dict[str, tuple[list[int], list[int], list[int]]]:
    """Per arm, its people's success (0/1), covariate and outcome count, in one order."""
    units: dict[str, tuple[list[int], list[int], list[int]]] = {
        a.name: ([], [], []) for a in experiment.arms
    }
    for a in assignments:
        if a.arm in units:
            count = outcomes.get(a.profile_id, 0)
            units[a.arm][0].append(int(count > 0))
            units[a.arm][1].append(covariate.get(a.profile_id, 0))
            units[a.arm][2].append(count)
    return units


def arm_counts(
    experiment: Experiment,
    assignments: Iterable[Assignment],
    successes: frozenset[str],
) -> list[ArmCount]:
    """People and successes per arm, in the document's order (of the population
    :func:`population` keeps)."""
    people = {a.name: 0 for a in experiment.arms}
    won = dict(people)
    for a in assignments:
        if a.arm not in people:
            continue
        people[a.arm] += 1
        won[a.arm] += a.profile_id in successes
    return [ArmCount(x.name, people[x.name], won[x.name], x.allocation) for x in experiment.arms]


def earlier_looks(
    experiment: Experiment, rows: Iterable[tuple[date, str, int, float | None]]
) -> dict[str, Earlier]:
    """Per arm, its earlier looks from ``experiment_results`` rows ``(day, arm, people,
    seq_p_value)``: the look and information of each day, the smallest repeated p-value."""
    baseline = experiment.baseline.name
    by_day: dict[date, dict[str, tuple[int, float | None]]] = {}
    for day, arm, people, p in rows:
        by_day.setdefault(day, {})[arm] = (int(people), p)
    looks: dict[str, list[tuple[int, float]]] = {}
    smallest: dict[str, float] = {}
    start = experiment.starts_at.date()
    for day, arms in by_day.items():
        n0 = arms.get(baseline, (0, None))[0]
        for arm, (n, p) in arms.items():
            if arm == baseline:
                continue
            info = information(n, n0)
            if info is not None:
                looks.setdefault(arm, []).append(((day - start).days + 1, info))
            if p is not None:
                smallest[arm] = min(p, smallest.get(arm, p))
    return {
        arm: Earlier(tuple(sorted(looks.get(arm, ()))), smallest.get(arm))
        for arm in set(looks) | set(smallest)
    }


def per_person_outcomes(
    experiment: Experiment, units: Mapping[str, tuple[Sequence[int], Sequence[int], Sequence[int]]]
) -> Analysis | None:
    """Outcomes per person within the window, arms against the baseline: Welch, and CUPED
    on the pre-period count when ``cuped_days`` is set; None while an arm has under 2."""
    if any(len(count) < 2 for _, _, count in units.values()):
        return None
    counts = {arm: count for arm, (_, _, count) in units.items()}
    covariates = {arm: x for arm, (_, x, _) in units.items()} if experiment.cuped_days else None
    allocation = {a.name: a.allocation for a in experiment.arms}
    return analyze(counts, experiment.baseline.name, covariates, allocation, "continuous")


def summarize(
    experiment: Experiment,
    assignments: Mapping[str, Assignment],
    attribution: Attribution,
    as_of: datetime,
    diagnostics: Mapping[str, int] | None = None,
    covariate: Mapping[str, int] | None = None,
    previous: Mapping[str, Earlier] | None = None,
    several: frozenset[str] = frozenset(),
    min_units: int = MIN_UNITS,
) -> Comparison:
    """The comparison: arm statistics against the baseline, the sample-ratio check, and the
    daily look (CUPED on ``covariate``, Holm, the sequential test after ``previous``), all
    on one population (:func:`population`), with the warnings they must be read with."""
    enrolled = assignments
    assignments, in_several, from_critical = population(experiment, enrolled, several)
    counts = arm_counts(experiment, assignments.values(), attribution.successes)
    srm = sample_ratio_mismatch([c.people for c in counts], [c.allocation for c in counts])
    notes = {
        **(diagnostics or {}),
        "people": len(enrolled),
        "analysed": len(assignments),
        "excluded_multiple_arms": in_several,
        "excluded_critical_source": from_critical,
        "cited": sum(a.method == "cited" for a in enrolled.values()),
        "hashed": sum(a.method == "hashed" for a in enrolled.values()),
        "outcomes_by_token": attribution.by_token,
        "outcomes_by_person": attribution.by_person,
        "outcomes_token_other_person": attribution.token_other_person,
        "outcomes_token_unknown": attribution.token_unknown,
    }
    arms = compare_arms(counts, experiment.baseline.name)
    units = arm_units(experiment, assignments.values(), attribution.outcomes, covariate or {})
    binary = {arm: (y, x) for arm, (y, x, _) in units.items()}
    look = assess(experiment, arms, binary, look_number(experiment.starts_at, as_of), previous)
    per_person = per_person_outcomes(experiment, units)
    warnings = [
        *excluded_warnings(in_several, from_critical),
        *arm_warnings([ArmCounts(c.name, c.people, c.successes) for c in counts], min_units,
                      "people"),
    ]  # fmt: skip
    mismatch = sample_ratio_warning(
        {c.name: c.people for c in counts},
        {c.name: c.allocation for c in counts},
        srm.p_value if srm.flagged else None,
    )
    past = horizon_warning(look.look, look.horizon_days) if look is not None else None
    warnings += [w for w in (mismatch, past) if w is not None]
    return Comparison(
        experiment_id=experiment.id,
        space_id=experiment.space_id,
        outcome=experiment.outcome,
        window_days=experiment.window_days,
        as_of=as_of,
        baseline=experiment.baseline.name,
        arms=arms,
        srm=srm,
        diagnostics=notes,
        look=look,
        per_person=per_person,
        warnings=tuple(warnings),
    )


def result_rows(comparison: Comparison, as_of: datetime) -> list[tuple[Any, ...]]:
    """One ``experiment_results`` row per arm (columns in :data:`RESULT_COLUMNS`)."""
    as_of = as_utc(as_of)
    day: date = as_of.date()
    c = comparison
    return [
        (*_own_row(c, a, day, as_of), *_look_row(c.look, a.name), *_per_person_row(c, a.name))
        for a in c.arms
    ]


def _own_row(c: Comparison, a: ArmStats, day: date, as_of: datetime) -> tuple[Any, ...]:
    return (
        c.experiment_id,
        c.space_id,
        a.name,
        day,
        c.baseline,
        c.outcome,
        c.window_days,
        a.people,
        a.successes,
        a.rate,
        a.rate_low,
        a.rate_high,
        a.diff,
        a.diff_low,
        a.diff_high,
        a.lift,
        a.lift_low,
        a.lift_high,
        a.p_value,
        c.srm.p_value,
        c.srm.flagged,
        as_of,
    )


#: Values of the look's columns when there is nothing to say (the non-nullable ones).
_LOOK_DEFAULTS: dict[str, Any] = {
    "cuped_days": 0, "method": "", "basis": "", "look": 0, "horizon_days": 0,
    "may_act": False, "verdict": "",
}  # fmt: skip
_LOOK_COLUMNS = RESULT_COLUMNS[RESULT_COLUMNS.index("p_holm") : RESULT_COLUMNS.index("per_person")]


def _look_row(look: Look | None, arm: str) -> tuple[Any, ...]:
    values: dict[str, Any] = {}
    if look is not None:
        values.update(
            cuped_days=look.cuped_days, cuped_theta=look.theta, method=look.method,
            basis=look.basis, look=look.look, horizon_days=look.horizon_days,
            boundary=look.boundary, may_act=look.may_act, verdict=look.verdict,
        )  # fmt: skip
        mine = next((x for x in look.arms if x.name == arm), None)
        if mine is not None:
            values.update(
                p_holm=mine.p_holm, cuped_p_holm=mine.cuped_p_holm,
                boundary=mine.boundary,
                seq_p_value=mine.seq_p_value, seq_p_holm=mine.seq_p_holm,
                seq_diff_low=mine.seq_diff_low, seq_diff_high=mine.seq_diff_high,
            )  # fmt: skip
        if mine is not None and mine.cuped is not None:
            c = mine.cuped
            values.update(
                cuped_diff=c.diff, cuped_diff_low=c.diff_low, cuped_diff_high=c.diff_high,
                cuped_lift=c.rel, cuped_lift_low=c.rel_low, cuped_lift_high=c.rel_high,
                cuped_p_value=c.p_value,
            )  # fmt: skip
    return tuple(values.get(col, _LOOK_DEFAULTS.get(col)) for col in _LOOK_COLUMNS)


def _per_person_row(c: Comparison, arm: str) -> tuple[Any, ...]:
    if c.per_person is None:
        return (None,) * 9
    mine = c.per_person.arm(arm)
    raw, cuped = mine.raw, mine.cuped
    return (
        mine.mean,
        *((raw.diff, raw.diff_low, raw.diff_high, raw.p_value) if raw else (None,) * 4),
        *((cuped.diff, cuped.diff_low, cuped.diff_high, cuped.p_value) if cuped else (None,) * 4),
    )


def as_utc(value: datetime) -> datetime:
    """``value`` in UTC; ValueError for a naive datetime."""
    if value.tzinfo is None:
        raise ValueError("as_of must be an aware datetime")
    return value.astimezone(UTC)
