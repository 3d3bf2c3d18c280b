"""Crash-restart trials: SIGKILL the worker at 300 of 1,000 messages, restart it, and
check that it drains with exact counts. Prints one line per trial and the tally.

    .venv/bin/python bench/restart_trials.py [TRIALS]

Starts its own Kafka broker (free ports, temporary directory) and stops it at the end.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turnstream_dev import LocalKafka, free_ports
from turnstream_dev.deployment import new_deployment
from turnstream_dev.sample import mixed_items


def trial(broker: str, home: Path, seed: int) -> tuple[bool, str]:
    deployment = new_deployment(broker, home, batch_size=10, batch_seconds=0.05)
    worker = deployment.worker
    batch = mixed_items(n=1000, bad=50, seed=seed)
    expected = sum(batch.accepted.values()) + sum(batch.refused.values())
    deployment.publish(batch.lines)
    worker.start()
    while worker.stats()["messages"] < 300:
        time.sleep(0.02)
    worker.kill()
    worker.start()
    try:
        deployment.drain(timeout=60)
        counts = deployment.counts()
        landed = sum(counts[t] for t in ("turns", "interactions", "outcomes", "commands"))
        landed += counts["dead_letters"]
        return landed == expected, f"{landed} of {expected} rows"
    except TimeoutError as exc:
        return False, f"stuck: {exc}"
    finally:
        worker.stop()


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        port, controller = free_ports(2)
        kafka = LocalKafka(home=Path(tmp) / "kafka", port=port, controller_port=controller)
        kafka.up(timeout=120)
        try:
            good = 0
            for n in range(trials):
                ok, detail = trial(kafka.bootstrap, Path(tmp), seed=100 + n)
                good += ok
                print(f"trial {n + 1}: {'ok' if ok else 'FAILED'} ({detail})", flush=True)
            print(f"{good} of {trials} restarts drained with exact counts")
        finally:
            kafka.down()


if __name__ == "__main__":
    main()
