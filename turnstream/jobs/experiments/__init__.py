"""Experiments by element: assign people to arms, attribute outcomes, compare the arms."""

from turnstream.core.experiments import assign, pick_arm, unit_point
from turnstream.jobs.experiments.analysis import Analysis, analyze
from turnstream.jobs.experiments.compare import (
    Assignment,
    Comparison,
    compare_experiment,
    plot_comparison,
    write_results,
)
from turnstream.jobs.experiments.looks import Look
from turnstream.jobs.experiments.stats import (
    ArmCount,
    ArmStats,
    SampleRatio,
    compare_arms,
    sample_ratio_mismatch,
)

__all__ = [
    "Analysis",
    "ArmCount",
    "ArmStats",
    "Assignment",
    "Comparison",
    "Look",
    "SampleRatio",
    "analyze",
    "assign",
    "compare_arms",
    "compare_experiment",
    "pick_arm",
    "plot_comparison",
    "sample_ratio_mismatch",
    "unit_point",
    "write_results",
]
