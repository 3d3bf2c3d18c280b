"""The in-process benches still run on the code they measure (no broker: a throw-away chDB
store each). They print figures and assert nothing, so nothing else would notice when a
change to the hot path breaks one: three did (``'Block' object is not iterable``) until
this test. Tiny sizes: this checks that they run to their last line, not their figures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]

#: Each bench with small arguments, and a phrase its last part prints.
BENCHES = [
    (["store_calls.py", "300", "--batch-size", "100", "--views-rounds", "1"], "every migration:"),
    (["view_costs.py", "200", "--rounds", "1"], "all together:"),
    (["hot_path.py", "2000", "--batch-sizes", "1000", "--tuned-only"], "| 1,000 |"),
    (["handover.py", "2000", "--batch-size", "1000", "--rounds", "1"], "load average"),
]


@pytest.mark.parametrize(("args", "said"), BENCHES, ids=[b[0][0] for b in BENCHES])
def test_an_in_process_bench_runs_to_its_end(args: list[str], said: str, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert said in done.stdout, done.stdout[-2000:]
