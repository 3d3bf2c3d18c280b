"""``turnstream priors|retention|experiments|scheduler``: the scheduled jobs by hand."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path
from typing import Annotated

import typer

from turnstream.cli.common import (
    ConfigOpt,
    DsnOpt,
    Format,
    FormatOpt,
    err,
    guarded,
    out,
    print_rows,
    settings_from,
)
from turnstream.jobs.runner import run_job

__all__ = ["experiments_app", "priors_app", "retention_app", "scheduler"]

priors_app = typer.Typer(
    help="Priors: what each value's rate is across a space.", no_args_is_help=True
)
retention_app = typer.Typer(help="What each table keeps.", no_args_is_help=True)
experiments_app = typer.Typer(help="Experiments by element.", no_args_is_help=True)

AsOfOpt = Annotated[
    str | None, typer.Option("--as-of", help="The day to compute for (YYYY-MM-DD; default today).")
]


def _params(**values: str | None) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}


@priors_app.command("recompute")
def priors_recompute(as_of: AsOfOpt = None, config: ConfigOpt = None, dsn: DsnOpt = None) -> None:
    """Recompute the priors over the 90 days before the as-of day (floor: 10 people)."""
    settings = settings_from(config, dsn)
    report = guarded(lambda: run_job(settings, "priors", _params(as_of=as_of)))
    out.print(
        f"priors v{report['version']} over {report['window_start']}..{report['window_end']}: "
        f"{report['priors']} priors from {report['values']} values "
        f"({report['below_floor']} under the floor of {report['floor']} people)"
        + (", unchanged" if report.get("unchanged") else "")
        + f" in {report['seconds']}s"
    )


@retention_app.command("check")
def retention_check(
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """What each table keeps, and whether the aggregates cover the expired raw days."""
    settings = settings_from(config, dsn)
    report = guarded(lambda: run_job(settings, "retention", _params(as_of=as_of)))
    tables = report["tables"]
    if tables:
        print_rows(
            list(tables[0]), [list(t.values()) for t in tables], fmt, title="what each table keeps"
        )
    gaps = report["gaps"]
    out.print(
        f"expired raw days {report['window_start']}..{report['window_end']}: "
        f"{report['covered_days']} covered by the daily aggregates, {len(gaps)} gaps"
    )
    if gaps:
        print_rows(list(gaps[0]), [list(g.values()) for g in gaps], fmt, title="gaps")
        raise typer.Exit(1)


@experiments_app.command("compare")
def experiments_compare(
    experiment_id: Annotated[str, typer.Argument(help="The experiment's id.")],
    measurement: Annotated[
        str | None, typer.Option(help="The measurement document (default: jobs.measurement).")
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="Also draw the arms to this PNG.")] = None,
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Per arm: people, outcome rate, difference and lift against control (95% CI), p-value,
    and the sample-ratio-mismatch check."""
    from turnstream.jobs.experiments.compare import plot_comparison
    from turnstream.jobs.registry import comparison_from_dict

    settings = settings_from(config, dsn)
    params = _params(experiment=experiment_id, measurement=measurement, as_of=as_of)
    report = guarded(lambda: run_job(settings, "experiments", params))
    comparison = comparison_from_dict(report["experiments"][0])
    columns = ["arm", "people", "successes", "rate", "diff", "diff_low", "diff_high", "lift",
               "lift_low", "lift_high", "p_value"]  # fmt: skip
    rows = [
        [a.name, a.people, a.successes, *(_r(v) for v in (a.rate, a.diff, a.diff_low,
         a.diff_high, a.lift, a.lift_low, a.lift_high)), _r(a.p_value, 6)]
        for a in comparison.arms
    ]  # fmt: skip
    title = (
        f"{comparison.experiment_id}: {comparison.outcome} within {comparison.window_days} days "
        f"of assignment, against {comparison.baseline}, as of {comparison.as_of:%Y-%m-%d}"
    )
    print_rows(columns, rows, fmt, title=title)
    srm = comparison.srm
    verdict = "MISMATCH: check the assignment" if srm.flagged else "no mismatch"
    out.print(f"sample ratio: chi2 {srm.chi2:.3f}, df {srm.df}, p {srm.p_value:.4g} ({verdict})")
    if plot is not None:
        plot_comparison(comparison, plot)
        out.print(f"wrote {plot}")


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def scheduler(config: ConfigOpt = None, dsn: DsnOpt = None) -> None:
    """Run the nightly and daily jobs on their cron times until stopped."""
    from turnstream.jobs.scheduler import build_scheduler

    settings = settings_from(config, dsn)
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s %(message)s")
    sched = guarded(lambda: build_scheduler(settings))
    for job in sched.get_jobs():
        err.print(f"{job.name}: {job.trigger}")
    with contextlib.suppress(KeyboardInterrupt, SystemExit):  # Ctrl-C stops it cleanly
        sched.start()
