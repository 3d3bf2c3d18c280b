"""APScheduler jobs: nightly priors, retention checks, experiment comparisons (issue #5)."""

from turnstream.jobs.priors import PriorsReport, recompute_priors
from turnstream.jobs.retention import RetentionReport, retention_check

__all__ = [
    "PriorsReport",
    "RetentionReport",
    "recompute_priors",
    "retention_check",
]
