"""What importing a part of turnstream loads: the SDK installs without the worker's packages
(`pip install turnstream`), and a command starts without the statistics stack.

Each check runs a fresh interpreter: this test process has long imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: The worker's packages (`turnstream[worker]`): the SDK and the producer import none.
WORKER_ONLY = (
    "scipy",
    "statsmodels",
    "numpy",
    "pandas",
    "matplotlib",
    "faust",
    "mode",
    "clickhouse_connect",
    "chdb",
    "apscheduler",
    "aiohttp",
    "msgspec",
    "typer",
    "rich",
)

#: Loaded by the commands that compute statistics only, not by starting the CLI.
STATISTICS = ("scipy", "statsmodels", "pandas", "matplotlib")


def loaded_by(*modules: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout))


@pytest.mark.parametrize(
    "modules",
    [
        ("turnstream.sdk",),
        (
            "turnstream.sdk",
            "turnstream.sdk.claims",
            "turnstream.adapters.kafka.producer",
            "turnstream.models",
        ),
    ],
    ids=["sdk", "sdk-claims-producer"],
)
def test_the_sdk_loads_none_of_the_workers_packages(modules: tuple[str, ...]) -> None:
    loaded = loaded_by(*modules)
    assert "turnstream" in loaded  # the probe did import something
    assert loaded.isdisjoint(WORKER_ONLY), sorted(loaded & set(WORKER_ONLY))


def test_the_cli_starts_without_the_statistics_stack() -> None:
    loaded = loaded_by("turnstream.entrypoints.cli.main")
    assert "typer" in loaded
    assert loaded.isdisjoint(STATISTICS), sorted(loaded & set(STATISTICS))


def test_the_experiments_load_statistics_on_use_and_still_compute() -> None:
    code = (
        "import sys\n"
        "from turnstream.jobs.experiments.stats import sample_ratio_mismatch, wilson_interval\n"
        "assert 'scipy' not in sys.modules and 'statsmodels' not in sys.modules\n"
        "low, high = wilson_interval(5, 10)\n"
        "srm = sample_ratio_mismatch([100, 100], [1, 1])\n"
        "print(round(low, 4), round(high, 4), srm.p_value)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    # Wilson's interval of 5/10 at 95%: 0.2366 to 0.7634; equal counts fit equal weights.
    assert done.stdout.split() == ["0.2366", "0.7634", "1.0"]
