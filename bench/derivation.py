"""Derivation lateness: how late a session's trigger fires against its due time, under load,
measured from the outside.

    .venv/bin/python bench/derivation.py [--quiet 2] [--seconds 40] [--background 200]
                                         [--probes-per-second 4]

The worker runs with its default batch settings and short triggers
(``[signals] quiet_seconds = 2``, ``oldest_pending_seconds = 60``, so the quiet window is
what fires). For SECONDS seconds it takes

* a background load of BACKGROUND items a second (valid ``mixed_items``, re-keyed to
  5,000 people per space so that no one's history grows without bound; each item is its own
  session, so each one fires a derivation 2 s later), and
* PROBES_PER_SECOND probe sessions a second: a new person (``profile_id``) whose session
  is three interactions published back to back: a list presented, then a click and a
  detail view on its first item, which derive an ``interest`` inference.

A probe's derivation is due ``quiet`` seconds after its last item was *received* by the
derivation driver; from the outside, lateness = (``version`` of its first ``inferences`` row,
the worker's ``time_ns`` when it writes the derivation) - (the send time of its last item
+ ``quiet``). It includes the ingest path (send -> raw write -> fan-out -> signals
consumer), the derivation driver's 1 s tick and the derivation itself.
At the end: the derivations a second the worker kept during the load (below the
sessions offered a second, the lateness is a growing backlog), the store thread's CPU per
derivation (``derivation_cpu_seconds`` of ``/v1/status``) and the worker's CPU per item;
first, the CPU of one chDB point query on this machine (:func:`store_query_ms`): the
same code gave p50 1.4 s before the machine's reboot of 2026-11-30 05:43 and 11.5 s
after it, with the same libraries, and nothing printed what had changed.
Starts its own broker on free ports in a temporary directory and stops it at the end.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._harness import (
    DEFAULT_BATCH_SECONDS,
    DEFAULT_BATCH_SIZE,
    add_prepare_process,
    cpu_seconds,
    deploy,
    dumps,
    load,
    machine,
    percentile,
    prepare_process_line,
    publish,
    run_broker,
    sql,
    store_query_ms,
    wait_drained,
    worker_pid,
)
from turnstream.adapters.kafka.producer import Producer
from turnstream_dev.deployment import Deployment
from turnstream_dev.sample import mixed_items, uuid7

BACKGROUND_PEOPLE = 5000


def _ts(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def probe_items(n: int, at: float, rand: random.Random) -> tuple[str, list[bytes]]:
    """A new person's session: presented, then a click and a detail on the first item."""
    profile = f"p_probe{n:025d}"
    exposure = uuid7(int(at * 1000), rand)
    base = {
        "type": "interaction",
        "space_id": "acme",
        "profile_id": profile,
        "source": "web",
        "conversation_id": f"probe-{n}",
        "session_id": f"probe-{n}",
        "occurred_at": _ts(at),
    }
    refs = [f"item_variant:acme:{1000 + (n * 3 + i) % 60}" for i in range(3)]
    presented = {
        "kind": "presented",
        "exposure_id": exposure,
        "list_id": f"probe-{n}-l1",
        "list_kind": "search",
        "delivered_at": _ts(at),
        "visible_k": 3,
        "items": [
            {"pos": i + 1, "ref": ref, "shown": {"color": "navy", "price_sale": 59.9 + i}}
            for i, ref in enumerate(refs)
        ],
    }
    click = {"kind": "engaged", "exposure_id": exposure, "ref": refs[0], "pos": 1}
    steps = [presented, click | {"action": "click"}, click | {"action": "detail"}]
    return profile, [
        dumps(base | {"idempotency_key": f"probe-{n}-{i}", "interaction": step})
        for i, step in enumerate(steps)
    ]


def background_lines(count: int) -> list[bytes]:
    out = []
    for n, line in enumerate(mixed_items(n=count, bad=0, seed=21).lines):
        item = json.loads(line)
        item.pop("handle", None)
        # One id per space: an id seen in two spaces stops the derivation driver (see the docs).
        item["profile_id"] = f"p_bg_{item['space_id']}_{n % BACKGROUND_PEOPLE:05d}"
        out.append(dumps(item))
    return out


async def _load(
    deployment: Deployment, background: list[bytes], seconds: float, probe_rate: float
) -> dict[str, float]:
    """Publish the background and the probes; returns each probe's last send time."""
    last_sent: dict[str, float] = {}
    rand = random.Random(5)
    async with Producer(deployment.settings) as producer:
        start = time.time()

        async def background_task() -> None:
            rate = len(background) / seconds
            for n, raw in enumerate(background):
                delay = start + n / rate - time.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                await producer.publish(raw)

        async def probe_task() -> None:
            for n in range(int(seconds * probe_rate)):
                delay = start + n / probe_rate - time.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                profile, lines = probe_items(n, time.time(), rand)
                for raw in lines:
                    await producer.publish(raw)
                last_sent[profile] = time.time()

        await asyncio.gather(background_task(), probe_task())
        await producer.flush()
    return last_sent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quiet", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--background", type=float, default=200.0)
    parser.add_argument("--probes-per-second", type=float, default=4.0)
    add_prepare_process(parser)
    args = parser.parse_args()
    extra = f"[signals]\nquiet_seconds = {args.quiet}\noldest_pending_seconds = 60\n"
    print(machine())
    print(
        f"quiet_seconds {args.quiet}; {args.seconds:.0f} s of {args.background:.0f} background "
        f"items/s ({BACKGROUND_PEOPLE:,} people per space) and {args.probes_per_second:g} probe "
        "sessions/s (3 items each); worker batch_size "
        f"{DEFAULT_BATCH_SIZE}, batch_seconds {DEFAULT_BATCH_SECONDS}",
        flush=True,
    )
    # What each store query costs on this machine: the derivation driver made one per
    # person it had not seen (~4,500 a run) until it read a firing's states at once.
    print(f"  chDB point query (in-process, schema applied): {store_query_ms():.2f} ms CPU")
    background = background_lines(int(args.background * args.seconds))
    with run_broker() as broker:
        deployment = deploy(
            broker,
            extra=extra,
            worker_extra=prepare_process_line(args.prepare_process, args.prepare_children),
        )
        deployment.worker.start()
        publish(deployment, mixed_items(n=200, bad=0, seed=22).lines)
        wait_drained(deployment)
        time.sleep(args.quiet + 1.5)  # the warm-up's sessions fire before the clock starts
        before = deployment.worker.stats()
        pid = worker_pid(deployment)
        cpu_before, started = cpu_seconds(pid), time.time()
        last_sent = asyncio.run(_load(deployment, background, args.seconds, args.probes_per_second))
        time.sleep(args.quiet + 3)
        wait_drained(deployment)
        wait_drained(deployment, signals=True)
        cpu_after = cpu_seconds(pid)
        [(last_written,)] = sql(deployment, "SELECT max(version) FROM signal_state")
        fired = dict(
            sql(
                deployment,
                "SELECT profile_id, min(version) FROM inferences "
                "WHERE startsWith(profile_id, 'p_probe') GROUP BY profile_id",
            )
        )
        states = dict(
            sql(
                deployment,
                "SELECT profile_id, min(version) FROM signal_state "
                "WHERE startsWith(profile_id, 'p_probe') GROUP BY profile_id",
            )
        )
        stats = deployment.worker.stats()
    late = [
        int(fired[p]) / 1e9 - (sent + args.quiet) for p, sent in last_sent.items() if p in fired
    ]
    print(
        f"  {len(last_sent)} probe sessions; {len(fired)} with inferences, {len(states)} with a "
        f"signal_state row; the worker made {stats['derivations']:,} derivations in all"
    )
    ms = [v * 1000 for v in late]
    print(
        "  lateness (inference written - last item sent - quiet): "
        f"p50 {percentile(ms, 50):.0f} ms, p90 {percentile(ms, 90):.0f} ms, "
        f"p99 {percentile(ms, 99):.0f} ms, max {max(ms):.0f} ms, min {min(ms):.0f} ms"
    )
    # The rate the driver kept: on time, the load's derivations end `quiet` seconds after
    # the load; a longer span is the backlog the lateness shows.
    derived = stats["derivations"] - before["derivations"]
    span = int(last_written) / 1e9 - started
    # (absent from a worker older than the figure: then 0)
    driver_cpu = stats.get("derivation_cpu_seconds", 0) - before.get("derivation_cpu_seconds", 0)
    items = len(background) + 3 * len(last_sent)
    print(
        f"  derivations during the load: {derived:,} in {span:.1f} s from its start "
        f"({derived / span:.0f}/s; the load lasted {args.seconds:.0f} s); the driver's "
        f"store-thread CPU {driver_cpu * 1000 / max(derived, 1):.2f} ms per derivation "
        f"({driver_cpu:.1f} s); the worker's CPU {cpu_after - cpu_before:.1f} s, "
        f"{(cpu_after - cpu_before) * 1000 / items:.2f} ms per item sent; {load()}"
    )


if __name__ == "__main__":
    main()
