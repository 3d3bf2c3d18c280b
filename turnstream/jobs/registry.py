"""The jobs by name, as the runner, the scheduler, the worker and the CLI call them.

A job is a blocking function ``(store, settings, params) -> report``: it takes string
parameters (they travel as JSON to the worker) and returns a JSON-able report.
:mod:`turnstream.jobs.runner` runs them; this module imports nothing of it.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, time
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from turnstream.adapters.clickhouse.retention import enforce_retention
from turnstream.adapters.clickhouse.store import Store
from turnstream.config import Settings
from turnstream.core.derivation.first_fit import fit_day
from turnstream.core.experiment_warnings import AnalysisWarning
from turnstream.core.object_types import sensitive_names, types_for_space
from turnstream.errors import BadJobParameter, ConfigError
from turnstream.jobs.experiments import compare_experiment, write_results
from turnstream.jobs.experiments.analysis import Analysis, ArmResult, Effect
from turnstream.jobs.experiments.compare import Comparison
from turnstream.jobs.experiments.looks import ArmLook, Look
from turnstream.jobs.experiments.stats import ArmStats, SampleRatio
from turnstream.jobs.priors import PriorsLimits, recompute_priors
from turnstream.jobs.rederive import Rederive, rederive_here, rederive_spaces
from turnstream.jobs.retention import retention_check
from turnstream.models.measurement import load_measurement

__all__ = ["JOBS", "Job", "comparison_from_dict", "comparison_to_dict"]


class Job(Protocol):
    """A job: ``rederive`` is how the priors job derives people again (the worker's
    engine; none: one built here); the other jobs take no notice of it."""

    def __call__(
        self,
        store: Store,
        settings: Settings,
        params: dict[str, str],
        *,
        rederive: Rederive | None = None,
    ) -> dict[str, Any]: ...


#: Each job's parameters: text, as they travel as JSON to the worker.
PARAMETERS = {
    "priors": ("as_of", "spaces"),
    "retention": ("as_of", "fold"),
    "experiments": ("as_of", "experiment", "measurement", "write"),
}


def _checked(job: str, params: dict[str, str]) -> dict[str, str]:
    """``params``, refused naming the first parameter the job does not take or whose
    value is not text."""
    for name, value in params.items():
        if name not in PARAMETERS[job]:
            taken = ", ".join(PARAMETERS[job])
            raise BadJobParameter(name, f"unknown parameter of the {job} job (it takes {taken})")
        if not isinstance(value, str):
            raise BadJobParameter(name, f"must be text, not {type(value).__name__}")
    return params


def _as_of(params: dict[str, str], today: date, latest: date, why: str) -> date:
    """The ``as_of`` day (default: ``today``), refused when not a date or after
    ``latest`` (``why`` says why that is the last day the job may take)."""
    value = params.get("as_of")
    if not value:
        return today
    try:
        day = date.fromisoformat(value)
    except ValueError:
        raise BadJobParameter("as_of", f"not a date (YYYY-MM-DD): {value!r}") from None
    if day > latest:
        raise BadJobParameter("as_of", f"{day}: {why}")
    return day


def _spaces(params: dict[str, str], settings: Settings) -> list[str] | None:
    """The ``spaces`` asked for (comma-separated; none: every space), each configured."""
    if not params.get("spaces"):
        return None
    asked = [s for s in params["spaces"].split(",") if s]
    unknown = [s for s in asked if s not in settings.spaces]
    if unknown:
        known = ", ".join(sorted(settings.spaces)) or "none"
        raise BadJobParameter("spaces", f"no space {unknown[0]!r} (the spaces are: {known})")
    return asked


def _priors(
    store: Store, settings: Settings, params: dict[str, str], *, rederive: Rederive | None = None
) -> dict[str, Any]:
    """The priors and field priors, then the people whose priors changed derived again
    (:mod:`turnstream.jobs.rederive`); ``spaces`` (comma-separated): these alone."""
    _checked("priors", params)
    # A first fit's day at most (tomorrow: it counts through today); a later version
    # would be the latest until that day came.
    today = datetime.now(UTC).date()
    tomorrow = fit_day(today)
    as_of = _as_of(params, today, tomorrow, f"in the future (tomorrow, {tomorrow} UTC, at most)")
    only = _spaces(params, settings)
    jobs = settings.jobs
    report = recompute_priors(
        store,
        as_of,
        floor=jobs.priors_floor,
        sensitive=sensitive_names(settings),
        limits=PriorsLimits(max_memory=jobs.priors_max_memory, split_rows=jobs.priors_split_rows),
        signals=settings.signals,
        types_for=lambda space_id: types_for_space(settings.space(space_id)),
        only=only,
    ).as_dict()
    spaces = [
        s
        for (s,) in store.query("SELECT DISTINCT space_id FROM signal_state ORDER BY 1").rows
        if only is None or s in only
    ]
    again = rederive_spaces(
        store, spaces, rederive or rederive_here(store, settings), as_of, jobs.rederive_days
    )
    return {**report, "rederived": again.as_dict()}


def _retention(
    store: Store, settings: Settings, params: dict[str, str], *, rederive: Rederive | None = None
) -> dict[str, Any]:
    """Fold and delete what aged out (unless ``fold`` is ``0``: the check alone), then
    report what each table keeps against its promise."""
    _checked("retention", params)
    today = datetime.now(UTC).date()
    # The scheduler asks for today in jobs.timezone, which may be UTC's tomorrow; a
    # later day would fold and delete what is still within its window.
    latest = max(today, datetime.now(ZoneInfo(settings.jobs.timezone)).date())
    why = f"in the future ({latest}, today in UTC or jobs.timezone, at most)"
    as_of = _as_of(params, today, latest, why)
    fold = params.get("fold", "1")
    if fold not in ("0", "1"):
        raise BadJobParameter("fold", f"0 or 1, not {fold!r}")
    folded = None
    if fold == "1":
        # The as-of day's start: the moment the check then measures against.
        now = datetime.combine(as_of, time.min, tzinfo=UTC)
        folded = enforce_retention(
            store, now, settings.signals, lambda space_id: types_for_space(settings.space(space_id))
        ).as_dict()
    return {**retention_check(store, as_of).as_dict(), "folded": folded}


def comparison_to_dict(comparison: Comparison) -> dict[str, Any]:
    """A comparison as JSON-able values."""
    data = dataclasses.asdict(comparison)
    data["as_of"] = comparison.as_of.isoformat()
    data["diagnostics"] = dict(comparison.diagnostics)
    return data


def _look_from_dict(data: dict[str, Any] | None) -> Look | None:
    if data is None:
        return None
    arms = tuple(ArmLook(**{**arm, "cuped": _effect(arm.get("cuped"))}) for arm in data["arms"])
    return Look(**{**data, "arms": arms})


def _effect(data: dict[str, Any] | None) -> Effect | None:
    return Effect(**data) if data else None


def _analysis_from_dict(data: dict[str, Any] | None) -> Analysis | None:
    if data is None:
        return None
    arms = tuple(
        ArmResult(**{**arm, "raw": _effect(arm["raw"]), "cuped": _effect(arm["cuped"])})
        for arm in data["arms"]
    )
    return Analysis(**{**data, "arms": arms, "srm": SampleRatio(**data["srm"])})


def comparison_from_dict(data: dict[str, Any]) -> Comparison:
    """The comparison back from :func:`comparison_to_dict`."""
    return Comparison(
        experiment_id=data["experiment_id"],
        space_id=data["space_id"],
        outcome=data["outcome"],
        window_days=data["window_days"],
        as_of=datetime.fromisoformat(data["as_of"]),
        baseline=data["baseline"],
        arms=tuple(ArmStats(**arm) for arm in data["arms"]),
        srm=SampleRatio(**data["srm"]),
        diagnostics=data.get("diagnostics", {}),
        look=_look_from_dict(data.get("look")),
        per_person=_analysis_from_dict(data.get("per_person")),
        warnings=tuple(
            AnalysisWarning(w["code"], w["message"], tuple(w.get("arms", ())))
            for w in data.get("warnings", ())
        ),
    )


def _experiments(
    store: Store, settings: Settings, params: dict[str, str], *, rederive: Rederive | None = None
) -> dict[str, Any]:
    _checked("experiments", params)
    today = datetime.now(ZoneInfo(settings.jobs.timezone)).date()
    # A look at a day not yet over would be read (and written) as if it were.
    why = f"a look in the future (today is {today} in {settings.jobs.timezone}, jobs.timezone)"
    day = _as_of(params, today, today, why)
    path = params.get("measurement") or settings.jobs.measurement
    if not path:
        raise ConfigError("no measurement document: set jobs.measurement or pass --measurement")
    doc = load_measurement(path)
    as_of = datetime.combine(day, time.max, tzinfo=UTC)
    write = params.get("write") in ("1", "true")
    wanted = params.get("experiment")
    ids = [wanted] if wanted else [e.id for e in doc.experiments]
    comparisons = []
    rows = 0
    for experiment_id in ids:
        comparison = compare_experiment(store, doc, experiment_id, as_of, record=write)
        if write:
            rows += write_results(store, comparison, as_of)
        comparisons.append(comparison_to_dict(comparison))
    return {"experiments": comparisons, "written": write, "result_rows_written": rows}


#: Every job by name.
JOBS: dict[str, Job] = {"priors": _priors, "retention": _retention, "experiments": _experiments}
