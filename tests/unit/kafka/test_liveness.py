"""The liveness record: failing since when, the last error, where a loop is stuck."""

from __future__ import annotations

from turnstream.core.liveness import PUBLIC_MESSAGES, Liveness, first_offsets, health


def test_a_loop_fails_from_its_first_failure_until_it_progresses() -> None:
    live = Liveness()
    assert live.as_dict(100.0)["state"] == "stopped"  # its task has not started
    live.started(100.0)
    assert live.as_dict(100.0)["state"] == "starting"  # it has not reached the broker
    live.reached(100.0)
    assert live.as_dict(100.0)["state"] == "running" and live.failing_for(100.0) == 0.0
    live.failed("boom", "transient", 100.0, {("t.turns", 1): 41})
    live.failed("boom again", "transient", 130.0, {("t.turns", 1): 41, ("t.outcomes", 0): 7})
    shown = live.as_dict(145.0)
    assert shown["state"] == "retrying"
    assert shown["failing_seconds"] == 45.0 and shown["failures"] == 2
    assert shown["failing_since"] == "1970-01-01T00:01:40+00:00"
    assert shown["last_error"] == "boom again" and shown["last_failure"] == "transient"
    assert shown["stuck_at"] == [
        {"topic": "t.outcomes", "partition": 0, "offset": 7},
        {"topic": "t.turns", "partition": 1, "offset": 41},
    ]
    live.progressed(150.0)
    shown = live.as_dict(160.0)
    assert shown["state"] == "running" and shown["failing_seconds"] == 0.0
    assert shown["stuck_at"] == [] and shown["failures"] == 0
    # The last error stays on record.
    assert shown["last_error"] == "boom again"
    live.failed("crashed", "crash", 200.0)  # a crash knows no offsets
    assert live.as_dict(201.0)["failing_since"] == "1970-01-01T00:03:20+00:00"


def test_first_offsets_are_the_lowest_per_partition() -> None:
    positions = [("a", 0, 5), ("a", 0, 3), ("a", 1, 9), ("b", 0, 2), ("a", 0, 4)]
    assert first_offsets(positions) == {("a", 0): 3, ("a", 1): 9, ("b", 0): 2}
    assert first_offsets([]) == {}


def _up() -> Liveness:
    """A loop that started and reached the broker at 0."""
    live = Liveness()
    live.started(0.0)
    live.reached(0.0)
    return live


def test_the_open_view_shows_the_class_and_the_kind_never_the_error_text() -> None:
    live = _up()
    text = "Cannot parse input: 'alice@example.com' at row 3"  # a store may quote data
    live.failed(text, "transient", 10.0, {("t.turns", 0): 4}, error_class="StoreError")
    shown = live.as_dict(20.0, detail=False)
    assert shown["last_error"] == PUBLIC_MESSAGES["transient"]
    assert shown["last_error_class"] == "StoreError"
    assert "alice" not in repr(shown)
    assert live.as_dict(20.0)["last_error"] == text  # an operator sees it


def test_reaching_the_broker_ends_a_broker_or_crash_failure_not_a_store_one() -> None:
    live = _up()
    live.failed("KafkaConnectionError: down", "broker", 10.0, error_class="KafkaConnectionError")
    live.reached(30.0)
    assert live.state() == "running" and live.last_contact_at == 30.0
    live.failed("RuntimeError: x", "crash", 40.0)
    live.reached(41.0, idle=False)  # restarted, and the batch that crashed it is back
    assert live.state() == "retrying"
    live.reached(42.0)  # restarted, nothing in flight
    assert live.state() == "running"
    # A store failure holds the batch: only its commit ends it.
    live.failed("timeout", "transient", 50.0, {("t.turns", 0): 9})
    live.reached(60.0)
    assert live.state() == "retrying" and live.failing_since == 50.0
    assert live.stuck_at == {("t.turns", 0): 9}
    live.progressed(70.0)
    assert live.state() == "running"
    live.stopped()
    assert live.state() == "stopped"


def test_health_is_503_past_the_grace_naming_what_fails() -> None:
    ingest, derivation, store = (_up() for _ in range(3))
    parts = {"ingest": ingest, "derivation": derivation, "store": store}
    assert health(parts, 100.0, grace=30.0).status == 200
    ingest.failed("down", "broker", 100.0)
    # Within the grace: behind, not broken.
    assert health(parts, 130.0, grace=30.0).status == 200
    verdict = health(parts, 130.5, grace=30.0)
    assert (verdict.status, verdict.failing) == (503, ("ingest",))
    store.failed("refused", "unreachable", 90.0)
    assert health(parts, 130.5, grace=30.0).failing == ("ingest", "store")
    ingest.reached(131.0)
    store.progressed(131.0)
    assert health(parts, 131.0, grace=30.0).status == 200
    # A stopped loop is not doing its work, whatever the grace.
    derivation.stopped()
    verdict = health(parts, 131.0, grace=30.0)
    assert (verdict.status, verdict.failing) == (503, ("derivation",))


def test_a_loop_that_never_reaches_the_broker_fails_from_its_start() -> None:
    live = Liveness()
    live.started(100.0)
    parts = {"ingest": live}
    assert live.state() == "starting" and health(parts, 120.0, grace=30.0).status == 200
    assert health(parts, 131.0, grace=30.0).failing == ("ingest",)
    live.reached(132.0)
    assert health(parts, 132.0, grace=30.0).status == 200
