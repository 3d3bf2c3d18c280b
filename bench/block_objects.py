"""What the constraints block costs for a person with many objects to name: disliked,
shown and, for some, read again in ``current``.

    .venv/bin/python bench/block_objects.py [--objects 500,1000,2000,4000] [--src DIR]

In this process, no store: ``build_block`` for one person in the example clothing store,
three shapes of objects (each disliked, each presented once): ``mixed`` (three colours,
seven brands, a size and a price each), ``one look`` (one colour, prices apart: every
object a look-alike of every other until its price tells it apart), ``same`` (one
colour alone: nothing tells them apart, every one only counted). ``--src``: another
checkout's code on the same inputs (``--src /work/main`` for the figures before).
Prints the median milliseconds of three builds per shape and count. Asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SHAPES = {
    "mixed": lambda i: {
        "color": ("red", "blue", "black")[i % 3],
        "brand": f"b{i % 7}",
        "size": "M",
        "price_sale": 100 + i,
    },
    "one look": lambda i: {"color": "red", "price_sale": 100 + i},
    "same": lambda i: {"color": "red"},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", default="500,1000,2000,4000")
    parser.add_argument("--src", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    sys.path.insert(0, args.src)
    from turnstream.core.constraints import BlockRequest, Disliked, Presented, build_block
    from turnstream.models.object_types import load_types

    types = load_types(Path(args.src) / "examples" / "types.toml")
    request = BlockRequest(space_id="acme", profile_id="p1", language="pt")
    now = datetime(2026, 9, 29, 14, 0, tzinfo=UTC)
    print(f"code: {args.src}")
    print(f"{'shape':>9} {'objects':>8} {'ms':>9}")
    for shape, values in SHAPES.items():
        for n in (int(x) for x in args.objects.split(",")):
            refs = [f"item_variant:acme:{i}" for i in range(n)]
            shown: dict[str, Any] = {ref: values(i) for i, ref in enumerate(refs)}
            current = {ref: {"price_sale": 90} for ref in refs[:64] if "price_sale" in shown[ref]}
            times = []
            for _ in range(3):
                started = time.perf_counter()
                build_block(request, (), (), (), [Presented(r, 1) for r in refs],
                            [Disliked(r) for r in refs], (), now, types=types, soft_max=8,
                            shown=shown, current=current)  # fmt: skip
                times.append((time.perf_counter() - started) * 1000)
            print(f"{shape:>9} {n:>8} {statistics.median(times):>9.1f}")


if __name__ == "__main__":
    main()
