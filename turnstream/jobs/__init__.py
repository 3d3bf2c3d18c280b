"""APScheduler jobs: nightly priors, retention checks, experiment comparisons (issue #5)."""
