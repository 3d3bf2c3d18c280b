"""A sloppy producer's file through ``turnstream replay`` into chDB: each line lands or is a
dead letter naming its field, and no raw handle reaches any table of the store, the
``dead_letters`` table included (its message and its type and space columns)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

PHONE = "+5511988887777"
EMAIL = "maria.zq@example.com"
RTL = "שלום 👋🏽 مرحبا"  # free text: kept as sent
HOUR_AGO = (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S")
CONFIG = """
[identity]
secret = "s"
[spaces.acme]
features = ["signals", "turns"]
"""

#: Every table of the store, each row as text, and the dead letters: read in a process
#: of its own (chDB opens one path per process).
_DUMP = """
import json, sys
from turnstream.adapters.clickhouse.store import Store
store = Store(sys.argv[1], "turnstream")
names = [r[0] for r in store.query(
    "SELECT name FROM system.tables WHERE database = 'turnstream' AND engine NOT LIKE '%View%'"
).rows]
text = {name: repr(store.query(f"SELECT * FROM {name}").rows) for name in names}
letters = store.query(
    "SELECT idempotency_key, reason, field_path, message, item_type, space_id "
    "FROM dead_letters ORDER BY idempotency_key"
).rows
json.dump({"text": text, "letters": [list(r) for r in letters]}, sys.stdout)
store.close()
"""


def _line(key: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "interaction",
        "space_id": "acme",
        "idempotency_key": key,
        "handle": {"type": "phone_e164", "value": PHONE},
        "source": "web",
        "occurred_at": f"{HOUR_AGO}Z",
        "interaction": {"kind": "engaged", "ref": "item:1", "action": "click"},
    } | fields


#: key → (the line, the reason and the path it is refused with; None: accepted).
LINES: dict[str, tuple[dict[str, Any], tuple[str, str] | None]] = {
    "a-ok": (_line("a-ok"), None),
    "b-type": (_line("b-type", type=EMAIL), ("invalid", "type")),
    "c-kind": (_line("c-kind", interaction={"kind": PHONE}), ("invalid", "interaction.kind")),
    "d-zone": (_line("d-zone", occurred_at=f"{HOUR_AGO}+00:60"), ("invalid", "occurred_at")),
    "e-huge": (
        _line(
            "e-huge",
            interaction={
                "kind": "preference",
                "attr": "item.price",
                "op": "lt",
                "values": [10**400],
                "strength": "must",
                "scope": "persistent",
                "source": "stated",
            },
        ),
        ("invalid", "interaction.values[0]"),
    ),
    "f-space": (_line("f-space", space_id=EMAIL), ("invalid", "space_id")),
    "g-rtl": (
        _line(
            "g-rtl",
            handle={"type": "external_id", "value": "مريم-١٢٣"},
            interaction={"kind": "feedback", "ref": "item:1", "polarity": "like", "reason": RTL},
        ),
        None,
    ),
}


def test_a_sloppy_file_lands_or_is_refused_by_field_and_leaves_no_handle(tmp_path: Path) -> None:
    config = tmp_path / "turnstream.toml"
    config.write_text(CONFIG)
    events = tmp_path / "sloppy.jsonl"
    # CRLF line ends, as an editor on Windows writes them, and its byte order mark: the
    # first line is refused whole, at <body>.
    body = b"\r\n".join(json.dumps(line, ensure_ascii=False).encode() for line, _ in LINES.values())
    events.write_bytes(b"\xef\xbb\xbf" + json.dumps(_line("0-bom")).encode() + b"\r\n" + body)
    dsn = f"chdb://{tmp_path / 'store'}"
    out = subprocess.run(
        [sys.executable, "-m", "turnstream", "replay", "--config", str(config), "--dsn", dsn,
         str(events)],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    refused = {key: why for key, (_, why) in LINES.items() if why}
    refused["0-bom"] = ("invalid", "<body>")
    assert f"{len(LINES) + 1 - len(refused)} accepted, {len(refused)} dead letters" in " ".join(
        out.split()
    )
    dumped = json.loads(
        subprocess.run(
            [sys.executable, "-c", _DUMP, dsn], check=True, capture_output=True, text=True
        ).stdout
    )
    letters = dumped["letters"]
    assert {key: (reason, path) for key, reason, path, *_ in letters} == refused
    for key, _, _, message, item_type, space in letters:
        assert item_type in ("", "interaction"), key
        assert space in ("", "acme"), key
        assert message, key
    assert "byte order mark" in letters[0][3]
    assert RTL in dumped["text"]["interactions"]  # free text in other scripts, as sent
    for table, text in dumped["text"].items():
        for handle in (PHONE, PHONE[1:], EMAIL, "مريم-١٢٣"):
            assert handle not in text, (table, handle)
