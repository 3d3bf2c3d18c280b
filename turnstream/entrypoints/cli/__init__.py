"""The ``turnstream`` command."""

import importlib.util
import sys

# The CLI runs the worker, the store and the jobs: an SDK-only install (`pip install
# turnstream`) lacks their packages; say which and how to add them, not a bare traceback.
_MISSING = [
    name
    for name in ("typer", "faust", "clickhouse_connect", "statsmodels")
    if name not in sys.modules and importlib.util.find_spec(name) is None
]
if _MISSING:
    raise ModuleNotFoundError(
        f"the turnstream command needs the worker's packages ({', '.join(_MISSING)} missing):"
        " pip install 'turnstream[worker]'",
        name=_MISSING[0],
    )
