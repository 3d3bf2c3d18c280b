"""Pictures of arm comparisons: each arm's difference from control, raw and CUPED-adjusted
intervals side by side (matplotlib, Agg: no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from turnstream.jobs.experiments.analysis import Analysis, Effect
from turnstream.jobs.experiments.enrolment import Comparison

__all__ = [
    "draw_differences",
    "draw_interval",
    "new_figure",
    "plot_analysis",
    "plot_comparison",
    "save",
]

_RAW, _CUPED = "tab:blue", "tab:orange"


def new_figure(width: float, height: float = 4.0) -> Any:
    """A matplotlib figure on the Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def draw_interval(
    ax: Any,
    x: float,
    value: float | None,
    low: float | None,
    high: float | None,
    colour: str,
    label: str | None = None,
) -> bool:
    """A point with its interval at ``x``; nothing (False) when a figure is missing."""
    if value is None or low is None or high is None:
        return False
    ax.errorbar(
        [x], [value], yerr=[[value - low], [high - value]], fmt="o", capsize=6, color=colour,
        label=label,
    )  # fmt: skip
    return True


def draw_differences(
    ax: Any, arms: Sequence[tuple[str, Effect | None, Effect | None]], ylabel: str
) -> None:
    """On ``ax``: per arm ``(name, raw, cuped)``, the raw interval and, beside it, the
    CUPED-adjusted one (95%), around a line at no difference."""
    labelled = set()
    for i, (_, raw, cuped) in enumerate(arms):
        shift = 0.12 if cuped is not None else 0.0
        for effect, x, colour, name in (
            (raw, i - shift, _RAW, "raw"),
            (cuped, i + shift, _CUPED, "CUPED"),
        ):
            if effect is not None and draw_interval(
                ax, x, effect.diff, effect.diff_low, effect.diff_high, colour,
                None if name in labelled else name,
            ):  # fmt: skip
                labelled.add(name)
    ax.axhline(0.0, color="tab:gray", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(arms)), [name for name, _, _ in arms])
    ax.set_xlim(-0.6, len(arms) - 0.4)
    ax.set_ylabel(ylabel)
    if labelled:
        ax.legend(fontsize=8, loc="best")


def save(figure: Any, path: str | Path) -> Path:
    """Lay out and write ``figure`` as a PNG."""
    figure.tight_layout()
    out = Path(path)
    figure.savefig(out, format="png")
    return out


def plot_analysis(analysis: Analysis, path: str | Path, title: str) -> Path:
    """Every arm's difference from control, raw and CUPED intervals side by side."""
    others = [(a.name, a.raw, a.cuped) for a in analysis.arms if a.name != analysis.control]
    figure = new_figure(max(4.0, 1.8 * len(others) + 2))
    ax = figure.add_subplot()
    draw_differences(ax, others, f"difference from {analysis.control} (95% CI)")
    srm = analysis.srm
    if srm.flagged:
        title += f"\nsample-ratio mismatch (p = {srm.p_value:.2g})"
    ax.set_title(title, fontsize=10)
    return save(figure, path)


def plot_comparison(comparison: Comparison, path: str | Path) -> Path:
    """Draw to a PNG each arm's rate with its 95% Wilson interval and, beside it, each
    arm's difference from the baseline with the raw and CUPED-adjusted intervals."""
    c = comparison
    figure = new_figure(max(8.0, 3.2 * len(c.arms) + 2))
    ax, right = figure.subplots(1, 2)
    for i, a in enumerate(c.arms):
        colour = "tab:gray" if a.name == c.baseline else "tab:blue"
        if not draw_interval(ax, i, a.rate, a.rate_low, a.rate_high, colour):
            continue
        ax.annotate(
            f"{a.successes}/{a.people}",
            (i, a.rate_high),
            textcoords="offset points",
            xytext=(0, 6),
            ha="center",
            fontsize=8,
        )
    base = next((a for a in c.arms if a.name == c.baseline), None)
    if base is not None and base.rate is not None:
        ax.axhline(base.rate, color="tab:gray", linestyle="--", linewidth=0.8)
    ax.set_xticks(range(len(c.arms)), [a.name for a in c.arms])
    ax.set_xlim(-0.6, len(c.arms) - 0.4)
    ax.set_ylabel(f"{c.outcome} rate within {c.window_days} days (95% CI)")
    title = f"{c.experiment_id}, as of {c.as_of.date().isoformat()}"
    if c.srm.flagged:
        title += f"\nsample-ratio mismatch (p = {c.srm.p_value:.2g})"
    ax.set_title(title, fontsize=10)

    others = []
    for a in c.arms:
        if a.name == c.baseline:
            continue
        raw = Effect(a.diff, a.diff_low, a.diff_high, a.lift, a.lift_low, a.lift_high, a.p_value)
        adjusted = c.look.arm(a.name).cuped if c.look is not None else None
        others.append((a.name, raw, adjusted))
    draw_differences(right, others, f"rate - {c.baseline} rate (95% CI)")
    if c.look is not None:
        right.set_title(c.look.verdict, fontsize=9)
    return save(figure, path)
