"""A ``turnstream worker`` in a child process: for the main job, tests and benchmarks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turnstream.adapters.worker_client import WorkerClient
from turnstream_dev.kafka import InfraError

__all__ = ["WorkerProcess"]


@dataclass
class WorkerProcess:
    """Start, query, stop or kill a worker running ``config`` with the given overrides."""

    config: Path
    log_path: Path
    web_port: int
    dsn: str | None = None
    broker: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    #: The API key ``stats`` sends (an operator's shows the store and the errors' text).
    key: str | None = None
    _proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 90.0) -> None:
        """Start the worker and wait until its web server answers."""
        cmd = [sys.executable, "-m", "turnstream", "worker", "--config", str(self.config)]
        if self.dsn:
            cmd += ["--dsn", self.dsn]
        if self.broker:
            cmd += ["--broker", self.broker]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self._proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise InfraError(f"the worker exited at start-up; see {self.log_path}")
            try:
                self.stats()
                return
            except OSError:
                time.sleep(0.3)
        self.kill()
        raise InfraError(f"the worker did not answer within {timeout:.0f}s; see {self.log_path}")

    def wait_healthy(self, timeout: float = 60.0) -> dict[str, Any]:
        """Wait until ``/v1/status`` answers 200 with every loop ``running`` (each has
        reached the broker, none fails); the status. ``InfraError`` after ``timeout``."""
        deadline = time.monotonic() + timeout
        last: dict[str, Any] | str = "no answer"
        while time.monotonic() < deadline:
            try:
                last = self.stats()
                loops = [v for v in last.values() if isinstance(v, dict) and "stuck_at" in v]
                if last.get("healthy") and all(v["state"] == "running" for v in loops):
                    return last
            except OSError as exc:
                last = repr(exc)
            time.sleep(0.3)
        raise InfraError(f"the worker was not healthy within {timeout:.0f}s: {last}")

    @property
    def pid(self) -> int | None:
        """The worker's process id (its process group's too), once started."""
        return None if self._proc is None else self._proc.pid

    def alive(self) -> bool:
        """Whether the process is running."""
        return self._proc is not None and self._proc.poll() is None

    def stats(self) -> dict[str, Any]:
        """The worker's ``/v1/status`` counters (an ``OSError`` while it does not answer)."""
        return WorkerClient(f"http://127.0.0.1:{self.web_port}", self.key).status()

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM and wait (SIGKILL after ``timeout``); returns the exit code."""
        if self._proc is None:
            return None
        if self.alive():
            os.killpg(self._proc.pid, signal.SIGTERM)
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self._proc.returncode

    def kill(self) -> None:
        """SIGKILL the worker: no shutdown, no commit, no flush."""
        if self._proc is not None and self.alive():
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
