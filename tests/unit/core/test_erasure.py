"""The erase policy: which decisions erase whom (live and replay call the same rule)."""

from __future__ import annotations

import json

from turnstream.config import Settings, SpaceConfig
from turnstream.core.erasure import erases, erasure_subjects
from turnstream.core.ingest import Source, decide

SETTINGS = Settings(
    identity={"secret": "test"},
    spaces={"acme": SpaceConfig(features={"signals"}), "lumen": SpaceConfig(language="es")},
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
    assert erasure_subjects(decisions) == [("acme", "p_bia"), ("acme", "p_ana")]
    assert erasure_subjects([]) == []
