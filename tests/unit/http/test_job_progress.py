"""What ``/v1/status`` says of the worker's jobs thread (entrypoints/worker_app.py):
a job asked while another runs waits, by name; the last one's end, its error's text to
an operator only."""

from __future__ import annotations

from turnstream.entrypoints.worker_app import JobProgress
from turnstream.errors import StoreError


def test_a_job_asked_twice_waits_behind_the_first_and_the_last_end_is_shown() -> None:
    jobs = JobProgress()
    assert jobs.as_dict(detail=False) == {
        "running": None, "running_since": None, "waiting": [], "last": None,
    }  # fmt: skip
    jobs.asked("priors")
    jobs.asked("priors")  # the same job again, at once
    jobs.started("priors")
    now = jobs.as_dict(detail=False)
    assert now["running"] == "priors" and now["running_since"] and now["waiting"] == ["priors"]
    jobs.ended("priors", StoreError("Code: 241. memory limit of 'p_secret' ..."))
    jobs.started("priors")
    jobs.ended("priors", None)
    assert jobs.as_dict(detail=False)["last"]["ok"] is True
    jobs.asked("retention")
    jobs.started("retention")
    jobs.ended("retention", StoreError("Code: 241. memory limit of 'p_secret' ..."))
    public, operator = jobs.as_dict(detail=False), jobs.as_dict(detail=True)
    assert public["running"] is None and public["waiting"] == []
    assert public["last"]["job"] == "retention" and public["last"]["ok"] is False
    assert public["last"]["error_class"] == "StoreError" and "p_secret" not in str(public)
    assert operator["last"]["error"].startswith("Code: 241")
