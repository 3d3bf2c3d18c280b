"""``turnstream priors|retention|experiments|scheduler``: the scheduled jobs by hand."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from turnstream.entrypoints.cli.common import (
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
from turnstream.entrypoints.cli.config import refuse_to_start_unless_ready
from turnstream.entrypoints.preflight import CHECKS
from turnstream.jobs.runner import run_job

__all__ = ["analysts_sql", "experiments_app", "priors_app", "retention_app", "scheduler"]

priors_app = typer.Typer(
    help="Priors: what each value's rate is across a space.", no_args_is_help=True
)
retention_app = typer.Typer(help="What each table keeps.", no_args_is_help=True)
experiments_app = typer.Typer(help="Experiments by element.", no_args_is_help=True)


class Kind(StrEnum):
    auto = "auto"
    binary = "binary"
    continuous = "continuous"


AsOfOpt = Annotated[
    str | None, typer.Option("--as-of", help="The day to compute for (YYYY-MM-DD; default today).")
]


def _params(**values: str | None) -> dict[str, str]:
    return {k: v for k, v in values.items() if v}


@priors_app.command("recompute")
def priors_recompute(as_of: AsOfOpt = None, config: ConfigOpt = None, dsn: DsnOpt = None) -> None:
    """Recompute the priors over the 90 days before the as-of day (floor: 10 people) and
    the field priors; then derive again, with them, each space's people whose priors
    changed and whose newest event is within jobs.rederive_days (45) of the as-of day,
    so their inferences reflect the new priors now, not at their next session."""
    settings = settings_from(config, dsn)
    report = guarded(lambda: run_job(settings, "priors", _params(as_of=as_of)))
    again = report.get("rederived") or {}
    out.print(
        f"priors v{report['version']} over {report['window_start']}..{report['window_end']}: "
        f"{report['priors']} priors from {report['values']} values "
        f"({report['below_floor']} under the floor of {report['floor']} people)"
        + f"; {sum(report.get('field_priors', {}).values())} fitted field priors"
        + (", unchanged" if report.get("unchanged") else "")
        + f"; {again.get('people', 0)} people derived again, "
        f"{again.get('inferences', 0)} inferences changed "
        f"({again.get('changed_people', 0)} people) in {again.get('seconds', 0)}s"
        + f"; in all {report['seconds']}s"
    )


def _print_retention(report: dict, fmt: Format) -> int:
    """Print the tables against their promise and the coverage of expired days; how many
    problems (tables past their window, gaps)."""
    tables = report["tables"]
    if tables:
        print_rows(
            list(tables[0]), [list(t.values()) for t in tables], fmt, title="what each table keeps"
        )
    past = report["past_window"]
    for t in past:
        out.print(
            f"{t['table']}: holds rows from {t['oldest']}, older than the {t['kept_days']} "
            f"days it keeps (by {t['dated_by']}): run `turnstream retention fold`",
            highlight=False,
        )
    out.print(f"{len(tables) - len(past)} of {len(tables)} tables within what they promise to keep")
    gaps = report["gaps"]
    out.print(
        f"expired raw days {report['window_start']}..{report['window_end']}: "
        f"{report['covered_days']} covered by the daily aggregates, {len(gaps)} gaps"
    )
    if gaps:
        print_rows(list(gaps[0]), [list(g.values()) for g in gaps], fmt, title="gaps")
    return len(past) + len(gaps)


@retention_app.command("check")
def retention_check(
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Per table, the oldest row against what it promises to keep (per-person evidence:
    45 days), and whether the aggregates cover the expired raw days; changes nothing.
    Exit 1 when a table holds rows past its window or a day is not covered."""
    settings = settings_from(config, dsn)
    report = guarded(lambda: run_job(settings, "retention", _params(as_of=as_of, fold="0")))
    if _print_retention(report, fmt):
        raise typer.Exit(1)


@retention_app.command("fold")
def retention_fold(
    as_of: AsOfOpt = None,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Keep the promise now (the nightly retention job does it): settle the derivation
    states' evidence older than the raw window into counts, delete every row past its
    table's window; then the check. Exit 1 when the check still finds a problem."""
    settings = settings_from(config, dsn)
    report = guarded(lambda: run_job(settings, "retention", _params(as_of=as_of)))
    folded = report["folded"]
    deleted = ", ".join(f"{t} {n}" for t, n in sorted(folded["deleted"].items())) or "none"
    out.print(
        f"folded {folded['states']} derivation states ({folded['signals']} signals settled, "
        f"{folded['pages']} pages dropped); rows deleted past their window: {deleted}",
        highlight=False,
    )
    if _print_retention(report, fmt):
        raise typer.Exit(1)


@experiments_app.command("compare")
def experiments_compare(
    experiment_id: Annotated[str, typer.Argument(help="The experiment's id.")],
    measurement: Annotated[
        str | None, typer.Option(help="The measurement document (default: jobs.measurement).")
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Also draw the arms (raw and CUPED) to this PNG.")
    ] = None,
    as_of: AsOfOpt = None,
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Record the assignments and write the look to experiment_results (what the "
            "scheduled job does). Default: read only.",
        ),
    ] = False,
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    fmt: FormatOpt = Format.table,
) -> None:
    """Per arm: people, outcome rate, difference and lift against control (95% CI), p-value
    (and Holm-adjusted), the CUPED-adjusted difference, the sequential test's repeated
    p-value; the sample-ratio-mismatch check, and whether the result may be acted on.
    Reads only, unless --write; a look at a day after today is refused."""
    from turnstream.jobs.experiments.compare import plot_comparison
    from turnstream.jobs.registry import comparison_from_dict

    settings = settings_from(config, dsn)
    params = _params(
        experiment=experiment_id, measurement=measurement, as_of=as_of, write="1" if write else None
    )
    report = guarded(lambda: run_job(settings, "experiments", params))
    comparison = comparison_from_dict(report["experiments"][0])
    look = comparison.look
    columns, rows = _comparison_rows(comparison, fmt)
    title = (
        f"{comparison.experiment_id}: {comparison.outcome} within {comparison.window_days} days "
        f"of assignment, against {comparison.baseline}, as of {comparison.as_of:%Y-%m-%d}"
    )
    print_rows(columns, rows, fmt, title=title)
    if fmt is Format.table and comparison.per_person is not None:
        print_rows(
            *_per_person_table(comparison),
            fmt,
            title=f"{comparison.outcome}s per person within {comparison.window_days} days "
            "(Welch; a secondary metric, outside Holm and the sequential test)",
        )
    srm = comparison.srm
    verdict = "MISMATCH: check the assignment" if srm.flagged else "no mismatch"
    out.print(f"sample ratio: chi2 {srm.chi2:.3f}, df {srm.df}, p {srm.p_value:.4g} ({verdict})")
    if look is not None:
        boundary = "none yet" if look.boundary is None else f"|z| >= {look.boundary:.3f}"
        cuped = (
            f"CUPED on the {comparison.outcome} count in the {look.cuped_days} days before "
            f"assignment (theta {look.theta:.4g})"
            if look.theta is not None
            else "no CUPED adjustment"
        )
        out.print(
            f"{look.method}, alpha {look.alpha:g}, Holm across arms; {_look_phrase(look)}, "
            f"boundary {boundary}, on the {look.basis} z; {cuped}"
        )
        out.print(f"{look.verdict} -> " + ("may be acted on" if look.may_act else "do not act yet"))
    notes = comparison.diagnostics
    out.print(
        f"counted: {notes.get('analysed', 0)} of the {notes.get('people', 0)} people assigned "
        f"by {comparison.as_of:%Y-%m-%d} ({notes.get('cited', 0)} by a turn citing an arm, "
        f"{notes.get('hashed', 0)} by the hash; left out: "
        f"{notes.get('excluded_multiple_arms', 0)} in more than one arm, "
        f"{notes.get('excluded_critical_source', 0)} from a critical source); a success is a "
        f"person with a {comparison.outcome} within {comparison.window_days} days after "
        "their assignment"
    )
    _print_warnings(comparison.warnings)
    if report.get("written"):
        out.print(
            f"wrote {report.get('result_rows_written', 0)} rows to experiment_results; recorded "
            f"{notes.get('recorded_now', 0)} new assignments in experiment_assignments"
        )
    else:
        out.print("read only: nothing written (--write records the assignments and the look)")
    if plot is not None:
        plot_comparison(comparison, plot)
        out.print(f"wrote {plot}")


@experiments_app.command("plan")
def experiments_plan(
    units: Annotated[
        int | None, typer.Option(min=1, help="Control units planned: prints the MDE.")
    ] = None,
    effect: Annotated[
        float | None,
        typer.Option(help="The absolute difference to detect: prints the units it needs."),
    ] = None,
    rate: Annotated[
        float | None, typer.Option(help="A 0/1 metric's control rate (its sd: sqrt(p(1-p))).")
    ] = None,
    sd: Annotated[
        float | None, typer.Option(help="A metric's per-unit standard deviation.")
    ] = None,
    ratio: Annotated[
        float, typer.Option(help="Treatment units per control unit (the split).")
    ] = 1.0,
    alpha: Annotated[float, typer.Option(help="Two-sided level.")] = 0.05,
    power: Annotated[float, typer.Option(help="Probability of detecting the effect.")] = 0.8,
) -> None:
    """Plan a two-arm test: the minimum detectable effect of --units, or the units per arm
    --effect needs, from --rate (0/1 metric) or --sd (normal approximation)."""
    from turnstream.errors import DataError
    from turnstream.jobs.experiments.metrics import minimum_detectable_effect, units_per_arm

    def run() -> str:
        if (rate is None) == (sd is None):
            raise DataError("give one of --rate (a 0/1 metric) and --sd")
        if (units is None) == (effect is None):
            raise DataError("give one of --units (for the MDE) and --effect (for the units)")
        if rate is not None and not 0 < rate < 1:
            raise DataError(f"--rate: within (0, 1), not {rate}")
        spread = math.sqrt(rate * (1 - rate)) if rate is not None else float(sd or 0)
        try:
            if units is not None:
                n1 = max(1, round(units * ratio))
                mde = minimum_detectable_effect(n1, units, spread, alpha, power)
                rel = f" ({mde / rate:.1%} of the rate)" if rate else ""
                return (
                    f"with {n1} treatment and {units} control units, a two-sided test at "
                    f"{alpha:g} detects a difference of {mde:.4g}{rel} with power {power:g} "
                    f"(sd {spread:.4g}, normal approximation)"
                )
            n1, n0 = units_per_arm(float(effect or 0), spread, alpha, power, ratio)
            return (
                f"to detect a difference of {effect:g} with power {power:g} at {alpha:g} "
                f"(two-sided): {n1} treatment and {n0} control units (sd {spread:.4g})"
            )
        except ValueError as exc:
            raise DataError(str(exc)) from None

    out.print(guarded(run))


def _refuse(message: str) -> Any:
    """A callable raising a DataError with ``message`` (for :func:`guarded`)."""
    from turnstream.errors import DataError

    def fail() -> None:
        raise DataError(message)

    return fail


def _capped(values: Any, share: float) -> Any:
    """``values`` capped at the top ``share`` (metrics.cap_upper); a DataError naming --cap."""
    from turnstream.errors import DataError
    from turnstream.jobs.experiments.metrics import cap_upper

    try:
        return cap_upper(values, share)
    except ValueError as exc:
        raise DataError(f"--cap: {exc}") from None


def _parsed_look(text: str | None, parse: Any) -> tuple[int, int] | None:
    """``--sequential``'s look and looks, or None; a DataError naming the option."""
    from turnstream.errors import DataError

    if text is None:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        raise DataError(str(exc)) from None


def _print_warnings(warnings: Any) -> None:
    """One line per warning, its code first (the JSON carries the same)."""
    for w in warnings:
        out.print(escape(f"warning ({w.code}): {w.message}"), style="yellow")


def _control_first(arms: Any, control: str) -> list[Any]:
    """The arms, the control (baseline) first, the others in their order."""
    return sorted(arms, key=lambda a: a.name != control)


def _look_phrase(look: Any) -> str:
    """``look 5 of 28`` within the horizon; past it, the day and the horizon apart."""
    if look.look <= look.horizon_days:
        return f"look {look.look} of {look.horizon_days} planned (one a day since the start)"
    return (
        f"day {look.look} since the start, past the {look.horizon_days}-day horizon "
        f"(the planned test ended at look {look.horizon_days})"
    )


@experiments_app.command("analyze")
def experiments_analyze(
    file: Annotated[Path, typer.Argument(help="CSV with a header line, one row per person.")],
    arm_column: Annotated[str, typer.Option("--arm-column", help="The column naming the arm.")],
    control: Annotated[str, typer.Option(help="The control arm's name.")],
    metric: Annotated[str, typer.Option(help="The numeric column to compare.")],
    covariates: Annotated[
        list[str] | None,
        typer.Option(
            "--covariate",
            help="A numeric pre-period column (the metric before assignment): CUPED. "
            "Repeat it for several covariates (one regression on all of them).",
        ),
    ] = None,
    denominator: Annotated[
        str | None,
        typer.Option(
            help="A ratio metric: the column dividing --metric (orders for revenue per order); "
            "each arm's sum(metric) / sum(denominator), delta-method variance."
        ),
    ] = None,
    cap: Annotated[
        float | None,
        typer.Option(
            help="Cap the largest share of --metric's values (e.g. 0.01: the top 1%), pooled "
            "over the arms, at the largest value below them (winsorising)."
        ),
    ] = None,
    kind: Annotated[
        Kind, typer.Option(help="binary (0/1: rates) or continuous (means); auto: by the values.")
    ] = Kind.auto,
    allocation: Annotated[
        str | None,
        typer.Option(help="Arm weights for the sample-ratio check, e.g. control=1,b=1 (equal)."),
    ] = None,
    plot: Annotated[
        Path | None, typer.Option(help="Also draw raw and CUPED intervals to this PNG.")
    ] = None,
    sequential: Annotated[
        str | None,
        typer.Option(
            help="LOOK/LOOKS, e.g. 3/10: this is look 3 of 10 planned, equally spaced; adds "
            "group-sequential p-values and repeated intervals (no peeking warning)."
        ),
    ] = None,
    min_count: Annotated[
        int, typer.Option(min=1, help="Warn about arms with fewer units than this.")
    ] = 100,
    fmt: FormatOpt = Format.table,
) -> None:
    """Compare arms on your own unit-level data: per arm against control, people, mean,
    difference and relative difference (95% CI), p-value (and Holm-adjusted), the same
    CUPED-adjusted with --covariate, and the sample-ratio check against --allocation;
    warnings (small arms, zero events, SRM, peeking). No broker or store."""
    from turnstream.errors import DataError
    from turnstream.jobs.experiments.analysis import analyze, as_report, cuped_fit
    from turnstream.jobs.experiments.analysis_checks import (
        analysis_warnings,
        parse_look,
        sequential_look,
    )
    from turnstream.jobs.experiments.metrics import analyze_ratio
    from turnstream.jobs.experiments.plots import plot_analysis
    from turnstream.jobs.experiments.unit_table import parse_allocation, read_units

    planned = guarded(lambda: _parsed_look(sequential, parse_look))

    import numpy as np

    covariate = covariates[0] if covariates else None
    more = list(covariates[1:]) if covariates else []
    if denominator and covariates:
        guarded(_refuse("--denominator with --covariate: CUPED of a ratio metric is not done"))

    def load() -> tuple[Any, dict[str, float] | None]:
        table = read_units(
            file, arm_column, metric, covariate, [*more, *([denominator] if denominator else [])]
        )
        arms = list(table.values)
        if control not in table.values:
            raise DataError(f"--control: no arm {control!r} in {file} (arms: {', '.join(arms)})")
        if len(arms) < 2:
            raise DataError(f"{file}: one arm only ({arms[0]}): nothing to compare")
        return table, parse_allocation(allocation, arms)

    table, weights = guarded(load)
    arms = list(table.values)

    values: dict[str, Any] = table.values
    capped = None
    if cap is not None:
        capped = guarded(lambda: _capped(table.values, cap))
        values = capped.values

    def run() -> Any:
        try:
            if denominator:
                return analyze_ratio(values, table.extra[denominator], control, weights)
            xs = table.covariates
            if xs is not None and more:
                xs = {a: np.column_stack([xs[a], *(table.extra[c][a] for c in more)])
                      for a in xs}  # fmt: skip
            return analyze(values, control, xs, weights, None if kind is Kind.auto else kind.value)
        except ValueError as exc:
            raise DataError(f"{file}, column {metric!r}: {exc}") from None

    result = guarded(run)
    label = ", ".join(covariates) if covariates else None
    report = as_report(result, metric, label)
    if more:
        xs = {a: np.column_stack([table.covariates[a], *(table.extra[c][a] for c in more)])
              for a in table.values}  # fmt: skip
        thetas, _ = cuped_fit({a: np.asarray(v) for a, v in values.items()}, xs, control)
        report["cuped_thetas"] = dict(zip(covariates or [], thetas, strict=False))
    report["denominator"] = denominator
    report["capped"] = (
        {"share": cap, "threshold": capped.threshold, "values_changed": capped.changed}
        if capped is not None
        else None
    )
    seq = sequential_look(result, *planned) if planned else None
    warnings = analysis_warnings(result, values, weights, min_count, planned is not None)
    report["warnings"] = [w.as_dict() for w in warnings]
    report["sequential"] = seq.as_dict() if seq else None
    if fmt is Format.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        columns, rows = _analysis_rows(result, covariate is not None, fmt)
        method = {
            "binary": "rates: Newcombe, log-ratio lift, pooled z-test",
            "ratio": f"sum({metric}) / sum({denominator}): delta method, normal z-test",
        }.get(result.kind, "means: Welch's t-test, log-ratio delta method")
        # Column and arm names come from the file: escaped, as rich reads [..] as markup.
        title = escape(f"{metric} ({result.kind}; {method}) against {control}, {table.rows} rows")
        print_rows(columns, rows, fmt, title=title)
        if fmt is Format.table:
            srm = result.srm
            verdict = "MISMATCH: check the assignment" if srm.flagged else "no mismatch"
            out.print(f"sample ratio: chi2 {srm.chi2:.3f}, df {srm.df}, p {srm.p_value:.4g} "
                      f"({verdict}); p_holm: Holm across {len(arms) - 1} arms")  # fmt: skip
            if covariate:
                thetas = report.get("cuped_thetas") or {covariate: result.theta}
                theta = ", ".join(
                    f"{name} {'none (no spread)' if t is None else f'{t:.4g}'}"
                    for name, t in thetas.items()
                )
                out.print(
                    escape(f"CUPED on {label}: regression adjustment, HC1 errors, theta {theta}")
                )
            if capped is not None:
                out.print(
                    f"capped: {capped.changed} values above {_g(capped.threshold)} (the top "
                    f"{cap:g} of {metric}, pooled over the arms) set to it"
                )
            if seq is not None:
                bound = f"|z| >= {seq.boundary:.3f}" if math.isfinite(seq.boundary) else "none"
                figures = "; ".join(
                    f"{a.name}: p {_g(a.p_value)}, Holm {_g(a.p_holm)}, repeated 95% CI "
                    f"[{_g(a.diff_low)}, {_g(a.diff_high)}]"
                    for a in seq.arms
                )
                line = (
                    f"sequential ({seq.method}), look {seq.look} of {seq.looks} planned, "
                    f"boundary {bound} on the {seq.basis} z: {figures}"
                )
                out.print(escape(line))
        _print_warnings(warnings)
    if plot is not None:
        plot_analysis(result, plot, f"{metric}: {file.name}")
        err.print(f"wrote {plot}")


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def _g(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _ci(value: float | None, low: float | None, high: float | None) -> str | None:
    """``value [low, high]`` in 4 significant digits: one column where a table is narrow."""
    return None if value is None else f"{_g(value)} [{_g(low)}, {_g(high)}]"


_PER_PERSON = ("per_person", "per_person_diff", "per_person_diff_low", "per_person_diff_high",
               "per_person_p_value", "per_person_cuped_diff", "per_person_cuped_diff_low",
               "per_person_cuped_diff_high", "per_person_cuped_p_value")  # fmt: skip


def _per_person_figures(comparison: Any, arm: str) -> list[Any]:
    """The arm's outcomes per person: mean, raw and CUPED difference, interval, p-value."""
    if comparison.per_person is None:
        return [None] * len(_PER_PERSON)
    mine = comparison.per_person.arm(arm)
    out: list[Any] = [mine.mean]
    for effect in (mine.raw, mine.cuped):
        out += (
            [effect.diff, effect.diff_low, effect.diff_high, effect.p_value]
            if effect
            else [None] * 4
        )
    return out


def _per_person_table(comparison: Any) -> tuple[list[str], list[list[Any]]]:
    """The table of outcomes per person (a continuous metric beside the rate)."""
    columns = ["arm", "outcomes per person", "diff [95% CI]", "p", "CUPED diff [95% CI]",
               "CUPED p"]  # fmt: skip
    rows = []
    for a in _control_first(comparison.arms, comparison.baseline):
        mean, d, lo, hi, p, cd, clo, chi, cp = _per_person_figures(comparison, a.name)
        rows.append([a.name, _g(mean), _ci(d, lo, hi), _g(p) if d is not None else None,
                     _ci(cd, clo, chi), _g(cp) if cd is not None else None])  # fmt: skip
    return columns, rows


def _comparison_rows(comparison: Any, fmt: Format) -> tuple[list[str], list[list[Any]]]:
    """Columns and rows of ``experiments compare``: intervals in one cell for a table."""
    wide = fmt is not Format.table
    if wide:
        columns = ["arm", "people", "successes", "rate", "diff", "diff_low", "diff_high",
                   "lift", "lift_low", "lift_high", "p_value", "p_holm", "cuped_diff",
                   "cuped_diff_low", "cuped_diff_high", "cuped_p_value", "cuped_p_holm",
                   "seq_p_value", "seq_p_holm", "seq_diff_low", "seq_diff_high",
                   *_PER_PERSON]  # fmt: skip
    else:
        columns = ["arm", "people", "successes", "rate", "diff [95% CI]", "lift [95% CI]", "p",
                   "p Holm", "CUPED diff [95% CI]", "CUPED p Holm", "seq. p Holm"]  # fmt: skip
    look = comparison.look
    rows = []
    codes: Any = [w.code for w in comparison.warnings]
    if fmt is Format.csv:
        codes = ";".join(codes)
    if wide:
        columns.append("warnings")
    for a in _control_first(comparison.arms, comparison.baseline):
        mine = next((x for x in look.arms if x.name == a.name), None) if look else None
        c = mine.cuped if mine else None
        seq = (
            (mine.seq_p_value, mine.seq_p_holm, mine.seq_diff_low, mine.seq_diff_high)
            if mine
            else (None,) * 4
        )
        holm = (mine.p_holm, mine.cuped_p_holm) if mine else (None, None)
        if wide:
            rows.append(
                [a.name, a.people, a.successes, a.rate, a.diff, a.diff_low, a.diff_high, a.lift,
                 a.lift_low, a.lift_high, a.p_value, holm[0],
                 *((c.diff, c.diff_low, c.diff_high, c.p_value) if c else (None,) * 4),
                 holm[1], *seq, *_per_person_figures(comparison, a.name), codes]
            )  # fmt: skip
        else:
            rows.append(
                [a.name, a.people, a.successes, _g(a.rate), _ci(a.diff, a.diff_low, a.diff_high),
                 _ci(a.lift, a.lift_low, a.lift_high), _g(a.p_value) if mine else None,
                 _g(holm[0]) if mine else None,
                 _ci(c.diff, c.diff_low, c.diff_high) if c else None,
                 _g(holm[1]) if mine else None, _g(seq[1]) if mine else None]
            )  # fmt: skip
    return columns, rows


_FIGURES = ("diff", "diff_low", "diff_high", "rel", "rel_low", "rel_high", "p_value")


def _analysis_rows(result: Any, cuped: bool, fmt: Format) -> tuple[list[str], list[list[Any]]]:
    """Columns and rows of ``experiments analyze``: intervals in one cell for a table,
    every figure in its own column for CSV."""
    wide = fmt is not Format.table
    prefixes = ["", "cuped_"] if cuped else [""]
    columns = ["arm", "people", "mean"]
    for prefix in prefixes:
        if wide:
            columns += [prefix + f for f in (*_FIGURES, "p_holm")]
        else:
            name = prefix.replace("cuped_", "CUPED ")
            columns += [f"{name}diff [95% CI]", f"{name}rel [95% CI]", f"{name}p", f"{name}p Holm"]
    rows = []
    for a in _control_first(result.arms, result.control):
        row: list[Any] = [a.name, a.people, a.mean if wide else _g(a.mean)]
        for effect, p_holm in [(a.raw, a.p_holm), (a.cuped, a.cuped_p_holm)][: len(prefixes)]:
            if wide:
                row += [getattr(effect, f) if effect else None for f in _FIGURES] + [p_holm]
            elif effect is None:
                row += [None] * 4
            else:
                row += [
                    _ci(effect.diff, effect.diff_low, effect.diff_high),
                    _ci(effect.rel, effect.rel_low, effect.rel_high),
                    _g(effect.p_value),
                    _g(p_holm),
                ]
        rows.append(row)
    return columns, rows


def scheduler(
    config: ConfigOpt = None,
    dsn: DsnOpt = None,
    alone: Annotated[
        bool,
        typer.Option(
            "--alone",
            help="Run every job without asking the broker which scheduler owns them "
            "(only when no other scheduler runs on this store).",
        ),
    ] = False,
) -> None:
    """Run the nightly and daily jobs on their cron times until stopped. Several may run:
    the one the broker gives the control topic runs the jobs (another takes over when it
    stops or fails)."""
    from turnstream.entrypoints.kafka.singleton import BrokerSingleton
    from turnstream.jobs.scheduler import build_scheduler

    settings = settings_from(config, dsn)
    # The jobs' checks of `turnstream config check` (the worker needs the rest).
    refuse_to_start_unless_ready(settings, [c for c in CHECKS if c.setting.startswith("jobs")])
    logging.basicConfig(level="INFO", format="%(asctime)s %(levelname)s %(name)s %(message)s")
    owner = None if alone else BrokerSingleton(settings, "scheduler")
    sched = guarded(lambda: build_scheduler(settings, None if owner is None else owner.held))
    for job in sched.get_jobs():
        err.print(f"{job.name}: {job.trigger}")
    if owner is not None:
        err.print(f"jobs run while this scheduler owns the topic {owner.topic}")
        owner.start()
    try:
        with contextlib.suppress(KeyboardInterrupt, SystemExit):  # Ctrl-C stops it cleanly
            sched.start()
    finally:
        if owner is not None:
            owner.stop()  # leaves the group: another scheduler takes the jobs at once


def analysts_sql(config: ConfigOpt = None, dsn: DsnOpt = None) -> None:
    """Print the SQL giving each configured space's analysts a role that reads only the
    space's rows (row policies, grants), for an administrator to run on the ClickHouse
    server; re-run it after adding a space (docs/scaling.md)."""
    from turnstream.adapters.clickhouse.analysts import analyst_sql

    settings = settings_from(config, dsn)
    statements = guarded(lambda: analyst_sql(settings.spaces, settings.store.database))
    for statement in statements:
        out.print(escape(statement) + ";", soft_wrap=True, highlight=False)
