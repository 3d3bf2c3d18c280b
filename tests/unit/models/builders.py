"""An accepted interaction item, as the models' tests vary it."""

from __future__ import annotations

from typing import Any


def interaction_item(ref: str = "item:1") -> dict[str, Any]:
    """A click on ``ref`` in space acme."""
    return {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": "k-1",
        "profile_id": "p-1",
        "source": "web",
        "occurred_at": "2026-12-04T11:00:00Z",
        "interaction": {"kind": "engaged", "ref": ref, "action": "click"},
    }
