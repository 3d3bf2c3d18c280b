"""The liveness record: failing since when, the last error, where a loop is stuck."""

from __future__ import annotations

from turnstream.streams.liveness import Liveness, first_offsets


def test_a_loop_fails_from_its_first_failure_until_it_progresses() -> None:
    live = Liveness()
    assert live.as_dict(100.0)["state"] == "ok" and live.failing_for(100.0) == 0.0
    live.failed("boom", "transient", 100.0, {("t.turns", 1): 41})
    live.failed("boom again", "transient", 130.0, {("t.turns", 1): 41, ("t.outcomes", 0): 7})
    shown = live.as_dict(145.0)
    assert shown["state"] == "failing"
    assert shown["failing_seconds"] == 45.0 and shown["failures"] == 2
    assert shown["failing_since"] == "1970-01-01T00:01:40+00:00"
    assert shown["last_error"] == "boom again" and shown["last_failure"] == "transient"
    assert shown["stuck_at"] == [
        {"topic": "t.outcomes", "partition": 0, "offset": 7},
        {"topic": "t.turns", "partition": 1, "offset": 41},
    ]
    live.progressed(150.0)
    shown = live.as_dict(160.0)
    assert shown["state"] == "ok" and shown["failing_seconds"] == 0.0
    assert shown["stuck_at"] == [] and shown["failures"] == 0
    # The last error stays on record.
    assert shown["last_error"] == "boom again"
    live.failed("crashed", "crash", 200.0)  # a crash knows no offsets
    assert live.as_dict(201.0)["failing_since"] == "1970-01-01T00:03:20+00:00"


def test_first_offsets_are_the_lowest_per_partition() -> None:
    positions = [("a", 0, 5), ("a", 0, 3), ("a", 1, 9), ("b", 0, 2), ("a", 0, 4)]
    assert first_offsets(positions) == {("a", 0): 3, ("a", 1): 9, ("b", 0): 2}
    assert first_offsets([]) == {}
