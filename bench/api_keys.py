"""What a key check costs the worker per request, and how soon a revocation holds.

    .venv/bin/python bench/api_keys.py [--keys 1000] [--calls 100000]

In this process, no worker: a keys file of ``--keys`` keys; per request the middleware
does ``KeyFile.current()`` (one ``stat``, the file read again only when it changed) and
``authenticate`` (a SHA-256 and a constant-time compare). Prints the median microseconds
per check, the time to read the file again after a change, and the time from a
``revoke`` returning to the first refused check (a second reader, as the worker is).
Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream.adapters.api_key_file import KeyFile
from turnstream.core.access import ALL_SPACES, Refusal, Role, authenticate


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "keys.json"
        writer = KeyFile(path)
        made = time.perf_counter()
        _ = [writer.create("acme", frozenset({Role.agent}))[0] for _ in range(args.keys - 1)]
        last, record = writer.create(ALL_SPACES, frozenset(Role))
        made = time.perf_counter() - made
        reader = KeyFile(path)
        header = f"Bearer {last}"
        assert authenticate(header, reader.current()) == record
        timings = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(args.calls):
                authenticate(header, reader.current())
            timings.append((time.perf_counter() - start) / args.calls * 1e6)
        reread = []
        for _ in range(20):
            path.touch()
            start = time.perf_counter()
            reader.current()
            reread.append((time.perf_counter() - start) * 1e3)
        writer.revoke(record.id)
        start = time.perf_counter()
        refused = isinstance(authenticate(header, reader.current()), Refusal)
        after = (time.perf_counter() - start) * 1e3
        print(
            f"{args.keys} keys in the file ({path.stat().st_size / 1024:.0f} KiB), "
            f"created in {made:.2f} s ({made / args.keys * 1e3:.2f} ms each, lock and rename)"
        )
        per_check = statistics.median(timings)
        print(f"check per request (stat + SHA-256 + compare): median {per_check:.1f} us")
        print(f"the file read again after a change: median {statistics.median(reread):.2f} ms")
        print(f"first check after revoke returned: refused={refused} in {after:.2f} ms")


if __name__ == "__main__":
    main()
