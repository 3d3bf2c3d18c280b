"""What binding producers to their space costs the ingest path: each record's signature
(HMAC-SHA256 over its value, ``core/signing.py``) verified at the gate. No broker, no store.

    .venv/bin/python bench/signing.py [ITEMS] [--pairs 6]

Builds ITEMS (default 20,000) ``mixed_items`` lines, each signed with its space's producer
key (an erase with the erase key) as the producer SDK signs it, and times, in CPU time of
this thread, in µs per item:

* ``sign`` and ``verify`` alone (the first key; and the second key, as during a rotation);
* ``prepare_batch`` in batches of 5,000 (what the prepare process runs per batch: the
  signatures read from the headers, validation, the gate, rows, fan-out messages), the
  spaces open (no keys, no headers) against the spaces keyed (signed records), in
  alternating pairs, so the machine's load falls on both alike. The figure is the median
  of the pairs' differences and ratios.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import SPACES, load, machine
from turnstream.adapters.kafka.topology import TopicNames
from turnstream.config import Settings, load_settings
from turnstream.core.signing import HEADER, sign, verify
from turnstream.entrypoints.kafka.prepare import prepare_batch
from turnstream.errors import InvalidItem
from turnstream.models import Command, parse_item
from turnstream_dev.sample import mixed_items

_KEYED = ("acme", "lumen", "vida")


def _settings(tmp: str, keyed: bool) -> Settings:
    spaces = SPACES
    env: dict[str, str] = {}
    if keyed:
        for space in _KEYED:
            env[f"TURNSTREAM_PRODUCER_KEYS_{space.upper()}"] = f"bench-{space}-producer-key-0001"
            env[f"TURNSTREAM_ERASE_KEYS_{space.upper()}"] = f"bench-{space}-erase-key-00001"
    config = Path(tmp) / f"turnstream-{keyed}.toml"
    config.write_text(
        f'[broker]\nbootstrap = "127.0.0.1:9"\n[store]\ndsn = "chdb://{tmp}/store"\n'
        f'[identity]\nsecret = "bench"\n[worker]\napp_id = "b"\ntopic_prefix = "b"\n{spaces}'
    )
    return load_settings(config, environ=env)


def _headers(line: bytes, settings: Settings) -> tuple[tuple[str, bytes], ...]:
    """The header the producer SDK would send with ``line`` (none for an invalid line)."""
    try:
        item = parse_item(line)
    except InvalidItem:
        return ()
    space = settings.space(item.space_id)
    keys = (
        space.signing_keys(isinstance(item, Command) and item.command == "erase") if space else ()
    )
    return ((HEADER, sign(line, keys[0])),) if keys else ()


def _cpu(fn: Callable[[], Any]) -> float:
    start = time.thread_time()
    fn()
    return time.thread_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("items", nargs="?", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=6)
    args = parser.parse_args()
    lines = mixed_items(args.items, bad=args.items // 40).lines
    with tempfile.TemporaryDirectory(prefix="ts-signing-") as tmp:
        open_settings = _settings(tmp, keyed=False)
        keyed_settings = _settings(tmp, keyed=True)
    names = TopicNames("b")
    topic = names.input("turn")

    def records(signed: bool) -> list[Any]:
        return [
            SimpleNamespace(
                topic=topic,
                partition=n % 4,
                offset=n,
                value=line,
                key=None,
                headers=_headers(line, keyed_settings) if signed else (),
            )
            for n, line in enumerate(lines)
        ]

    plain, signed = records(False), records(True)
    signed_count = sum(1 for r in signed if r.headers)

    def prepare_all(settings: Settings, recs: list[Any]) -> None:
        for at in range(0, len(recs), 5000):
            prepare_batch(recs[at : at + 5000], settings, names, 1 << 20)

    # The decisions must be the same: no record of the keyed run refused for its signature.
    for at in range(0, len(lines), 5000):
        a = prepare_batch(plain[at : at + 5000], open_settings, names, 1 << 20).judged
        b = prepare_batch(signed[at : at + 5000], keyed_settings, names, 1 << 20).judged
        assert [d.refusal for d in a] == [d.refusal for d in b], "the keyed run refused more"

    key, old = b"bench-acme-producer-key-0001", b"bench-acme-producer-key-0000"
    sigs = [sign(line, key) for line in lines]
    mean_bytes = sum(map(len, lines)) / len(lines)
    print(machine())
    print(
        f"{len(lines)} mixed_items lines ({mean_bytes:.0f} bytes on average), {signed_count} "
        f"signed; {load()}"
    )
    n = len(lines)
    best = min(_cpu(lambda: [sign(line, key) for line in lines]) for _ in range(5))
    print(f"sign                          {best / n * 1e6:8.2f} µs per item")
    best = min(
        _cpu(lambda: [verify(line, s, (key,)) for line, s in zip(lines, sigs, strict=True)])
        for _ in range(5)
    )
    print(f"verify (first key)            {best / n * 1e6:8.2f} µs per item")
    best = min(
        _cpu(lambda: [verify(line, s, (old, key)) for line, s in zip(lines, sigs, strict=True)])
        for _ in range(5)
    )
    print(f"verify (second key: rotation) {best / n * 1e6:8.2f} µs per item")

    prepare_all(open_settings, plain)  # warm both paths once
    prepare_all(keyed_settings, signed)
    diffs, ratios = [], []
    for pair in range(args.pairs):
        runs = [("open", open_settings, plain), ("keyed", keyed_settings, signed)]
        if pair % 2:
            runs.reverse()
        spent = {name: _cpu(lambda s=s, r=r: prepare_all(s, r)) / n * 1e6 for name, s, r in runs}
        diffs.append(spent["keyed"] - spent["open"])
        ratios.append(spent["keyed"] / spent["open"])
        print(
            f"pair {pair + 1}: prepare_batch open {spent['open']:.2f}, keyed "
            f"{spent['keyed']:.2f} µs per item"
        )
    print(
        f"prepare_batch, keyed - open: median {statistics.median(diffs):+.2f} µs per item, "
        f"ratio x{statistics.median(ratios):.3f} (median of {args.pairs} alternating pairs)"
    )


if __name__ == "__main__":
    main()
