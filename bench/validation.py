"""Prepare's Python per item, piece by piece: validation per item type, the ingest rule,
the accepted message. No broker, no store.

    .venv/bin/python bench/validation.py [ITEMS] [--repeat 5] [--profile]

Builds ITEMS (default 20,000) ``mixed_items`` lines and times, in CPU time of this thread
(``thread_time``, the least of ``--repeat`` runs), in µs per item:

* ``parse_item`` per item type (``turn``, ``interaction``, ``outcome``, ``command``, and the
  invalid lines), i.e. pydantic-core's ``validate_json`` and the Python validators it calls;
* ``judge`` (validation, gating, the profile id's HMAC, the token check) over all lines;
* ``accepted_for`` (the fan-out message) over the accepted decisions;
* ``prepare_batch`` (all of the above plus rows and dead letters) in batches of 5,000.

``--profile`` prints cProfile's top functions for one ``prepare_batch`` pass. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import SPACES, load, machine
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import load_settings
from turnstream.core.ingest import Source, judge
from turnstream.core.messages import accepted_for
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream.errors import InvalidItem
from turnstream.models import parse_item
from turnstream_dev.sample import mixed_items


def _least(fn: Callable[[], None], repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls of ``fn`` on this thread."""
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        best = min(best, time.thread_time() - start)
    return best


def _parse_all(lines: list[bytes]) -> None:
    for line in lines:
        with contextlib.suppress(InvalidItem):
            parse_item(line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    lines = mixed_items(args.items, bad=args.items // 40).lines
    by_type: defaultdict[str, list[bytes]] = defaultdict(list)
    for line in lines:
        try:
            parse_item(line)
        except InvalidItem:
            by_type["invalid"].append(line)
            continue
        by_type[json.loads(line)["type"]].append(line)
    with tempfile.TemporaryDirectory(prefix="ts-validation-") as tmp:
        config = Path(tmp) / "turnstream.toml"
        config.write_text(
            f'[broker]\nbootstrap = "127.0.0.1:9"\n[store]\ndsn = "chdb://{tmp}/store"\n'
            f'[identity]\nsecret = "bench"\n[worker]\napp_id = "b"\ntopic_prefix = "b"\n{SPACES}'
        )
        settings = load_settings(config, environ={})
    names = TopicNames(settings.worker.topic_prefix)
    topic = names.input("turn")
    sources = [Source(topic, n % 4, n) for n in range(len(lines))]
    records = [
        SimpleNamespace(topic=topic, partition=n % 4, offset=n, value=line, key=None)
        for n, line in enumerate(lines)
    ]
    judged = [judge(line, src, settings) for line, src in zip(lines, sources, strict=True)]
    accepted = [d for d in judged if d.item is not None and d.profile_id is not None]

    print(machine())
    print(f"{len(lines)} mixed_items lines; least of {args.repeat} runs; load {load()}")
    print(f"{'what':<28}{'count':>8}{'µs per item':>14}")
    for kind in ("turn", "interaction", "outcome", "command", "invalid"):
        group = by_type.get(kind, [])
        if group:
            spent = _least(lambda g=group: _parse_all(g), args.repeat)
            print(f"{'parse_item ' + kind:<28}{len(group):>8}{spent / len(group) * 1e6:>14.2f}")
    spent = _least(lambda: _parse_all(lines), args.repeat)
    print(f"{'parse_item (all)':<28}{len(lines):>8}{spent / len(lines) * 1e6:>14.2f}")

    def judge_all() -> None:
        for line, src in zip(lines, sources, strict=True):
            judge(line, src, settings)

    spent = _least(judge_all, args.repeat)
    print(f"{'judge (all)':<28}{len(lines):>8}{spent / len(lines) * 1e6:>14.2f}")

    def accept_all() -> None:
        for decision in accepted:
            accepted_for(decision)

    spent = _least(accept_all, args.repeat)
    print(f"{'accepted_for':<28}{len(accepted):>8}{spent / len(accepted) * 1e6:>14.2f}")

    def prepare_all() -> None:
        for at in range(0, len(records), 5000):
            prepare_batch(records[at : at + 5000], settings, names, 1 << 20)

    spent = _least(prepare_all, args.repeat)
    print(f"{'prepare_batch (5,000)':<28}{len(lines):>8}{spent / len(lines) * 1e6:>14.2f}")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        prepare_all()
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
