"""The erase policy: which decisions erase whom (live and replay call the same rule)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from turnstream.config import Settings, SpaceConfig
from turnstream.core.erasure import (
    erases,
    erasure_tombstones,
    facts_of,
    forget_erased,
    forgotten,
    merge_tombstones,
    tombstones_left,
)
from turnstream.core.ingest import Source, decide
from turnstream.core.rows import rows_for

SETTINGS = Settings(
    identity={"secret": "test"},
    spaces={
        "acme": SpaceConfig(features={"signals"}),
        "lumen": SpaceConfig(language="es", features={"signals"}),
    },
)


def _command(command: str, profile: str, space: str = "acme", key: str | None = None) -> bytes:
    item = {
        "type": "command",
        "space_id": space,
        "idempotency_key": key or f"{command}-{profile}",
        "profile_id": profile,
        "source": "privacy-desk",
        "occurred_at": "2026-09-29T14:02:11Z",
        "command": command,
    }
    if command == "delete":
        item["inference_id"] = "inf_1"
    return json.dumps(item).encode()


def _decide(raw: bytes, offset: int, taken: dict | None = None):  # type: ignore[no-untyped-def]
    return decide(raw, Source("t.commands", 0, offset), SETTINGS, (taken or {}).get)


def test_an_accepted_erase_erases_its_subject_and_nothing_else_does() -> None:
    assert erases(_decide(_command("erase", "p_ana"), 1)) == ("acme", "p_ana")
    assert erases(_decide(_command("erase", "p_ana", space="lumen"), 2)) == ("lumen", "p_ana")
    assert erases(_decide(_command("opt_out", "p_ana"), 3)) is None
    assert erases(_decide(_command("delete", "p_ana"), 4)) is None
    # refused (a space not configured) or a repeat of a key already taken: no erasure
    assert erases(_decide(_command("erase", "p_ana", space="ghost"), 5)) is None
    first = _decide(_command("erase", "p_bia"), 6)
    again = _decide(_command("erase", "p_bia"), 7, {first.dedup_key: first.source})
    assert again.duplicate and erases(again) is None


def test_a_batch_erases_each_subject_once_in_order() -> None:
    decisions = [
        _decide(_command("erase", "p_bia", key="e1"), 1),
        _decide(_command("opt_out", "p_ana"), 2),
        _decide(_command("erase", "p_ana", key="e2"), 3),
        _decide(_command("erase", "p_bia", key="e3"), 4),  # a second erase, another key
    ]
    assert list(erasure_tombstones(decisions)) == [("acme", "p_bia"), ("acme", "p_ana")]
    assert erasure_tombstones([]) == {}


def _click(profile: str, occurred_at: str, key: str, space: str = "acme") -> bytes:
    return json.dumps(
        {
            "type": "interaction",
            "space_id": space,
            "idempotency_key": key,
            "profile_id": profile,
            "source": "web",
            "occurred_at": occurred_at,
            "interaction": {"kind": "engaged", "ref": "item_variant:acme:1", "action": "click"},
        }
    ).encode()


def test_each_erase_leaves_a_tombstone_at_its_latest_time() -> None:
    later = json.loads(_command("erase", "p_bia", key="e3"))
    later["occurred_at"] = "2026-09-30T08:00:00Z"
    decisions = [
        _decide(_command("erase", "p_bia", key="e1"), 1),
        _decide(json.dumps(later).encode(), 2),
        _decide(_command("erase", "p_ana", key="e2"), 3),
        _decide(_command("opt_out", "p_cid"), 4),
    ]
    tombstones = erasure_tombstones(decisions)
    assert tombstones == {
        ("acme", "p_bia"): datetime(2026, 9, 30, 8, tzinfo=UTC),
        ("acme", "p_ana"): datetime(2026, 9, 29, 14, 2, 11, tzinfo=UTC),
    }
    known = {("acme", "p_ana"): datetime(2026, 10, 1, tzinfo=UTC)}
    merge_tombstones(known, tombstones)
    assert known[("acme", "p_ana")] == datetime(2026, 10, 1, tzinfo=UTC)  # the later stays
    assert known[("acme", "p_bia")] == datetime(2026, 9, 30, 8, tzinfo=UTC)


def test_what_occurred_at_or_before_the_erase_is_forgotten_whole() -> None:
    tombstones = {("acme", "p_ana"): datetime(2026, 9, 29, 14, 2, 11, tzinfo=UTC)}
    before = _decide(_click("p_ana", "2026-09-29T14:02:10.999Z", "c1"), 1)
    at_it = _decide(_click("p_ana", "2026-09-29T14:02:11Z", "c2"), 2)
    after = _decide(_click("p_ana", "2026-09-29T14:02:11.001Z", "c3"), 3)
    other_space = _decide(_click("p_ana", "2026-09-29T14:00:00Z", "c4", space="lumen"), 4)
    other_person = _decide(_click("p_bia", "2026-09-29T14:00:00Z", "c5"), 5)
    for decision in (before, at_it):
        gone = forget_erased(decision, tombstones)
        assert gone.erased and gone.item is None and gone.profile_id is None
        assert gone.refusal is None and gone.dedup_key == decision.dedup_key
        # Only its key is written (so a copy of it stays a duplicate); no dead letter.
        assert set(rows_for(gone, SETTINGS, datetime.now(UTC))) == {"idempotency_keys"}
    for decision in (after, other_space, other_person):
        assert forget_erased(decision, tombstones) is decision
    # An erase is never forgotten (erasing again is harmless), a duplicate stays one.
    again = _decide(_command("erase", "p_ana", key="e9"), 6)
    assert forget_erased(again, tombstones) is again
    dup = _decide(
        _click("p_ana", "2026-09-29T14:00:00Z", "c1"), 7, {before.dedup_key: Source("x", 0, 0)}
    )
    assert forget_erased(dup, tombstones) is dup
    assert forget_erased(before, {}) is before


def test_the_rules_on_erasure_facts_decide_as_on_decisions() -> None:
    """The prepare process hands back erasure facts, not items: the same rule on them."""
    through = datetime(2026, 9, 29, 14, 2, 11, tzinfo=UTC)
    tombstones = {("acme", "p_ana"): through}
    erase = _decide(_command("erase", "p_ana", key="e1"), 1)
    decisions = [
        _decide(_click("p_ana", "2026-09-29T14:02:11Z", "c1"), 2),
        _decide(_click("p_ana", "2026-09-29T14:02:11.001Z", "c2"), 3),
        _decide(_click("p_ana", "2026-09-29T14:00:00Z", "c3", space="lumen"), 4),
        erase,
        _decide(_command("opt_out", "p_ana"), 5),
        _decide(b"{", 6),
    ]
    assert facts_of(erase) == (("acme", "p_ana"), through)
    assert facts_of(decisions[-1]) is None  # refused: no item
    for d in decisions:
        on_facts = forgotten(facts_of(d), erases(d) is not None, tombstones)
        assert on_facts == forget_erased(d, tombstones).erased
    assert [forgotten(facts_of(d), False, tombstones) for d in decisions[:3]] == [
        True,
        False,
        False,
    ]
    assert tombstones_left((facts_of(d), erases(d) is not None) for d in decisions) == {
        ("acme", "p_ana"): through
    }
    # An erase without its facts (a duplicate, a refusal) leaves nothing.
    assert tombstones_left([(None, True)]) == {}
