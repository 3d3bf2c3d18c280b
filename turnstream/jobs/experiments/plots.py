"""Pictures of arm comparisons: each arm's difference from control, raw and CUPED-adjusted
intervals side by side (matplotlib, Agg: no display needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from turnstream.jobs.experiments.analysis import Analysis, Effect

__all__ = ["draw_differences", "draw_interval", "new_figure", "plot_analysis", "save"]

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
