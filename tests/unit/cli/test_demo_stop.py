"""``turnstream demo --stop`` stops what ``--keep-running`` left: the worker its note
names (only if that process is still a turnstream worker) and removes the note."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from turnstream_dev.demo import stop_demo


def _fake_worker() -> subprocess.Popen[bytes]:
    """A process whose command line reads like a worker's, in its own session."""
    code = "import time; time.sleep(120)"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "turnstream", "worker"], start_new_session=True
    )
    # Until it has exec'd, /proc shows the forking test's command line.
    deadline = time.monotonic() + 10
    while b"worker" not in Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0"):
        assert time.monotonic() < deadline, "the process did not start"
        time.sleep(0.01)
    return proc


def _note(home: Path, pid: int) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    pointer = home / "demo.json"
    pointer.write_text(json.dumps({"config": "c.toml", "dsn": "chdb:///x", "worker_pid": pid}))
    return pointer


def test_stop_ends_the_noted_worker_and_removes_the_note(tmp_path: Path) -> None:
    proc = _fake_worker()
    try:
        pointer = _note(tmp_path / "demo", proc.pid)
        assert stop_demo(tmp_path / "demo", timeout=10) == [f"worker (pid {proc.pid})"]
        assert proc.wait(10) is not None
        assert not pointer.exists()
    finally:
        proc.kill()


def test_a_reused_pid_that_is_no_worker_is_left_alone(tmp_path: Path) -> None:
    pointer = _note(tmp_path / "demo", os.getpid())
    assert stop_demo(tmp_path / "demo", timeout=1) == []
    assert not pointer.exists()


def test_nothing_left_running_stops_nothing(tmp_path: Path) -> None:
    assert stop_demo(tmp_path / "nowhere") == []
