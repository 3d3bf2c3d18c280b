"""What an erase leaves, searched as a privacy auditor would (docs/erasure.md).

One person (a phone number) sends what a real conversation sends: a turn with a presented
list, a click, a claim and a constraint measurement; pages, a look, a cart; a stated
colour, size and diet (a sensitive field); a dislike with a reason, a watch, a purchase, a
correction with a diet, a delete; and an item refused as invalid that carries their
handle and a diet. Another person sends the same. Once derived, the first is erased with
an ``erase`` command on the commands topic. Then:

- the read side (the block and the reviewable profile) knows nothing of them, and an old
  item of theirs arriving late, or sent again, brings nothing back;
- every table of every database of the store (``system.tables``: the raw, derived and
  aggregate tables, dead letters, idempotency keys, tombstones, experiments, webhooks;
  the words of sensitive values too, read here without the worker's SQL gate) is
  searched, every column as text, for their handle (with and without its ``+``), profile
  id, session and conversation ids, turn, list and order ids, inference ids named in
  commands, the words they stated and their idempotency keys: what is found is exactly
  what docs/erasure.md says an erase keeps (the retained review request and its webhook
  event, the erase tombstone, the items' idempotency keys, and the dead letter's key);
  the other person is found where their rows are (the search finds what is there);
- the worker's topics are the ones docs/erasure.md lists, none compacted, and the erase
  sends nothing on ``turnstream.inferences`` (its consumers are told nothing);
- after a restart, items of theirs from after the erase start a new profile that holds
  them alone: nothing of the erased past comes back into the block or the inferences.

The parts a mutation replaced, left on disk until ClickHouse's cleanup, are not searched:
docs/erasure.md says how long they stay.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.chaos.helpers import Factory, q, read_topic, wait_for
from turnstream.adapters.clickhouse.erasure import RETAINED
from turnstream.core.identity import resolve_profile
from turnstream.models import parse_item
from turnstream_dev.deployment import Deployment

pytestmark = pytest.mark.integration

SIGNALS = """
[signals]
quiet_seconds = 1.0
oldest_pending_seconds = 3.0
"""
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)

#: Where an erased person's needles may be found, and which (docs/erasure.md, "What it
#: does not reach"): the retained tables (and the view writing the webhook events) hold
#: the profile id; the idempotency keys and the dead letter hold the items' keys.
KEPT = {
    **{f"turnstream.{t}.profile_id": "profile" for t in RETAINED},
    "turnstream.webhook_events_mv.profile_id": "profile",
    "turnstream.idempotency_keys.dedup_key": "key",
    "turnstream.dead_letters.idempotency_key": "key",
}


def _at(minutes: float) -> str:
    at = T0 + timedelta(minutes=minutes)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _uuid7(n: int) -> str:
    ms = int(time.time() * 1000) - n
    value = ms << 80 | 0x7 << 76 | n << 64 | 0b10 << 62 | n
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Person:
    """Items of one person of acme, known by a phone number; every value of theirs that
    could name them carries their name (a needle of the search)."""

    def __init__(self, name: str, phone: str) -> None:
        self.name, self.handle = name, {"type": "phone_e164", "value": phone}
        self.n = 0

    def item(self, minutes: float, kind: str, **fields: Any) -> bytes:
        self.n += 1
        body = {
            "type": kind,
            "space_id": "acme",
            "idempotency_key": f"{self.name}-key-{self.n}",
            "handle": self.handle,
            "source": "whatsapp",
            "conversation_id": f"conv-{self.name}",
            "session_id": f"sess-{self.name}",
            "occurred_at": _at(minutes),
        }
        return json.dumps(body | fields, separators=(",", ":")).encode()

    def interaction(self, minutes: float, body: dict[str, Any]) -> bytes:
        return self.item(minutes, "interaction", interaction=body)

    def presented(self, minutes: float, exposure: str, refs: list[int]) -> dict[str, Any]:
        return {
            "kind": "presented",
            "exposure_id": exposure,
            "list_id": f"list-{self.name}-{exposure[-4:]}",
            "list_kind": "search",
            "delivered_at": _at(minutes),
            "visible_k": len(refs),
            "items": [
                {"pos": i + 1, "ref": f"item_variant:acme:{r}", "shown": {"color": "navy"}}
                for i, r in enumerate(refs)
            ],
        }

    def lines(self, first: str, second: str) -> list[bytes]:
        n = self.name
        claim = {
            "category": "price",
            "class": "money",
            "nature": "quoted",
            "value": "61.90",
            "verdict": "matched",
            "action": "none",
        }
        measured = {"tool": "search_products", "sent": 1, "results_checked": 3}
        click = {"kind": "engaged", "exposure_id": first, "ref": "item_variant:acme:1002"}
        cart = {"kind": "engaged", "exposure_id": second, "ref": "item_variant:acme:1004"}
        return [
            self.item(
                0,
                "turn",
                turn_id=f"turn-{n}-1",
                agent="sales-assistant",
                interactions=[self.presented(0, first, [1001, 1002]), click | {"action": "click"}],
                claims=[claim],
                constraints=[measured | {"violations": 0, "unverifiable": 0}],
            ),
            self.interaction(2, self.presented(2, second, [1004, 1005])),
            self.interaction(3, {"kind": "seen", "exposure_id": second, "max_index_seen": 2}),
            self.interaction(4, cart | {"pos": 1, "action": "cart"}),
            self.interaction(
                6,
                {
                    "kind": "preference",
                    "attr": "item_variant.color",
                    "op": "not_in",
                    "values": [f"black{n}"],
                    "strength": "must_not",
                    "scope": "persistent",
                    "source": "stated",
                },
            ),
            self.interaction(
                7,
                {
                    "kind": "attribute",
                    "attr": "item_variant.size",
                    "value": "M",
                    "source": "stated",
                },
            ),
            self.interaction(
                8,
                {
                    "kind": "attribute",
                    "attr": "person.diet",
                    "value": f"celíaco {n}diet",
                    "source": "stated",
                },
            ),
            self.interaction(
                9,
                {
                    "kind": "feedback",
                    "ref": "item_variant:acme:1005",
                    "polarity": "dislike",
                    "reason": f"too dark {n}reason",
                },
            ),
            self.interaction(
                10,
                {
                    "kind": "watch",
                    "condition": {"ref": "item_variant:acme:1004", "note": f"{n}watch"},
                    "consent_event": f"consent-{n}",
                },
            ),
            self.item(
                20,
                "outcome",
                outcome="purchase",
                ref="item_variant:acme:1004",
                order_id=f"ord-{n}-1",
                attrs={"size": "M"},
            ),
            self.item(
                21,
                "command",
                command="correct",
                inference_id=f"inf-{n}-0",
                replacement={
                    "kind": "attribute",
                    "attr": "person.diet",
                    "value": f"vegano {n}correct",
                    "source": "correction",
                },
            ),
            self.item(22, "command", command="delete", inference_id=f"inf-{n}-1"),
        ]

    def refused(self) -> bytes:
        """An invalid item (no such day) carrying the handle and a diet."""
        diet = {"kind": "attribute", "attr": "person.diet", "value": f"celíaco {self.name}dead"}
        return self.interaction(11, diet | {"source": "stated"}).replace(
            _at(11).encode(), b"2026-02-30T10:00:00Z", 1
        )

    def needles(self, profile_id: str) -> dict[str, str]:
        """What could name the person -> what it is (``KEPT``'s kinds)."""
        n, phone = self.name, self.handle["value"]
        found = dict.fromkeys([phone, phone.lstrip("+"), f"conv-{n}", f"sess-{n}"], "handle")
        found |= dict.fromkeys([f"turn-{n}-", f"list-{n}-", f"ord-{n}-", f"inf-{n}-"], "id")
        words = ["diet", "reason", "watch", "correct", "dead"]
        found |= {f"black{n}": "words", f"consent-{n}": "words"}
        found |= {f"{n}{w}": "words" for w in words}
        return found | {profile_id: "profile", f"{n}-key-": "key"}


#: Run in a process of its own (chDB opens one path per process), with the worker stopped:
#: every table of every database but the server's own settings and metadata, every
#: column as text; the columns where a needle is, and the needles found in each.
_SCAN = r"""
import json, sys
from turnstream.adapters.clickhouse.store import Store
store = Store(sys.argv[1], sys.argv[2])
needles = json.loads(sys.argv[3])
tables = store.query(
    "SELECT database, name FROM system.tables WHERE database NOT IN "
    "('INFORMATION_SCHEMA', 'information_schema') AND engine != 'View' "
    "AND (database != 'system' OR engine LIKE '%MergeTree%' OR name = 'mutations')"
).rows
found, searched = {}, []
for database, table in tables:
    columns = [c for (c,) in store.query(
        "SELECT name FROM system.columns WHERE database = {d:String} AND table = {t:String}",
        {"d": database, "t": table}).rows]
    searched.append(f"{database}.{table}")
    for column in columns:
        text = f"lower(toString(`{column}`))"
        hits = store.query(
            f"SELECT arrayFilter(n -> position({text}, lower(n)) > 0, {{n:Array(String)}}) AS h "
            f"FROM `{database}`.`{table}` WHERE notEmpty(h)", {"n": needles}).rows
        for (h,) in hits:
            found.setdefault(f"{database}.{table}.{column}", set()).update(h)
store.close()
print(json.dumps({"found": {k: sorted(v) for k, v in found.items()}, "searched": searched}))
"""


def _scan_store(
    deployment: Deployment, needles: list[str]
) -> tuple[dict[str, list[str]], list[str]]:
    """The columns where needles are (and which), and the tables searched."""
    store = deployment.settings.store
    done = subprocess.run(
        [sys.executable, "-c", _SCAN, store.dsn, store.database, json.dumps(needles)],
        check=True,
        capture_output=True,
        text=True,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    return out["found"], out["searched"]


def _topics(deployment: Deployment) -> dict[str, str]:
    """The broker's topics under the deployment's prefix -> their cleanup policy."""
    bootstrap, prefix = (
        deployment.settings.broker.bootstrap,
        deployment.settings.worker.topic_prefix,
    )

    async def read() -> dict[str, str]:
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
        await admin.start()
        try:
            names = [t for t in await admin.list_topics() if t.startswith(prefix)]
            wanted = {"cleanup.policy": None}
            responses = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, t, wanted) for t in names]
            )
        finally:
            await admin.close()
        return {
            resource[3]: dict((e[0], e[1]) for e in resource[4])["cleanup.policy"]
            for response in responses
            for resource in response.resources
        }

    return asyncio.run(read())


def _call(deployment: Deployment, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **deployment.headers()},
        method="GET" if body is None else "POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _read_side(deployment: Deployment, person: Person, profile_id: str) -> dict[str, Any]:
    """What the block and the reviewable profile hold of the person."""
    block = _call(
        deployment,
        "/v1/constraints",
        {"space_id": "acme", "handle": person.handle, "session_id": f"sess-{person.name}"},
    )
    profile = _call(deployment, f"/v1/profiles/{profile_id}/inferences?space_id=acme")
    held = ("hard", "soft", "attributes", "exclude", "already_presented", "text")
    return {k: block[k] for k in held} | {"inferences": profile["inferences"]}


def _keyed(deployment: Deployment, topic: str, profile_id: str) -> int:
    """Messages of ``topic`` keyed by the profile id."""
    bootstrap = deployment.settings.broker.bootstrap
    return sum(key == profile_id.encode() for key, _ in read_topic(bootstrap, topic))


def test_an_erased_person_is_found_only_where_docs_say_an_erase_keeps_them(
    deployment_factory: Factory,
) -> None:
    subject, other = Person("zeferino", "+5531977770001"), Person("otacilia", "+5531977770002")
    lines = subject.lines(_uuid7(1), _uuid7(2)) + other.lines(_uuid7(3), _uuid7(4))
    for raw in lines:
        parse_item(raw)  # valid: Deployment.publish would send an invalid one raw
    deployment = deployment_factory(extra=SIGNALS)
    deployment.worker.start()
    secret = deployment.settings.secret_bytes()
    gone, kept = (
        resolve_profile(parse_item(p.item(0, "command", command="opt_out")), secret)
        for p in (subject, other)
    )
    needles = subject.needles(gone)

    deployment.publish([*lines, subject.refused()])
    deployment.drain()
    deployment.drain_signals()
    sql = "SELECT count() FROM inferences FINAL WHERE profile_id = {p:String}"
    wait_for(lambda: q(deployment, sql, {"p": gone})[0][0], 60, "the subject's inferences")
    before = _read_side(deployment, subject, gone)
    assert before["hard"] and before["attributes"] and before["already_presented"], before
    assert before["inferences"], before
    receipts = {"space_id": "acme", "receipts": ["rcpt-1"], "reason": "why"}
    _call(deployment, f"/v1/profiles/{gone}/review-requests", receipts)
    inferences_topic = deployment.topology.names.inferences
    sent = _keyed(deployment, inferences_topic, gone)
    assert sent

    deployment.publish([subject.item(30, "command", command="erase")])
    deployment.drain()
    deployment.drain_signals()
    empty = {k: [] for k in ("hard", "soft", "attributes", "exclude", "already_presented")}
    assert _read_side(deployment, subject, gone) == empty | {"text": "", "inferences": []}
    # An old item of theirs arriving late (a new key), and one sent again (its key).
    late = subject.interaction(5, subject.presented(5, _uuid7(5), [1006]))
    deployment.publish([late, lines[1]])
    deployment.drain()
    deployment.drain_signals()
    stats = deployment.worker.stats()
    assert (stats["erased_before_arrival"], stats["duplicates"]) == (1, 1)
    assert _read_side(deployment, subject, gone) == empty | {"text": "", "inferences": []}
    # The erase told the inferences topic's consumers nothing (docs/erasure.md).
    assert _keyed(deployment, inferences_topic, gone) == sent
    deployment.worker.stop()

    names = deployment.topology.names
    assert _topics(deployment) == dict.fromkeys(names.every, "delete")
    found, searched = _scan_store(deployment, [*needles, kept, f"{other.name}diet"])
    assert {"turnstream.stated_sensitive", "turnstream.dead_letters"} <= set(searched)
    left = {
        column: [n for n in hits if n in needles]
        for column, hits in found.items()
        if any(n in needles for n in hits)
    }
    assert {c: sorted({needles[n] for n in hits}) for c, hits in left.items()} == {
        c: [kind] for c, kind in KEPT.items() if c in left
    }, left
    assert set(KEPT) - {"turnstream.webhook_events_mv.profile_id"} <= set(left), left
    # The search finds what is there: the other person, in their rows.
    theirs = {c for c, hits in found.items() if kept in hits or f"{other.name}diet" in hits}
    assert {
        "turnstream.turns.profile_id",
        "turnstream.stated.profile_id",
        "turnstream.signal_state.profile_id",
        "turnstream.stated_sensitive.value",
    } <= theirs, sorted(theirs)

    # Back after their erase (the same phone, after a restart): only what they do now.
    deployment.worker.start()
    again = Person("renato", subject.handle["value"])
    deployment.publish(
        [
            again.interaction(40, again.presented(40, _uuid7(6), [1007])),
            again.item(
                41,
                "outcome",
                outcome="purchase",
                ref="item_variant:acme:1007",
                order_id="ord-renato-1",
                attrs={"size": "G"},
            ),
            again.interaction(
                42,
                {
                    "kind": "preference",
                    "attr": "item_variant.color",
                    "op": "in",
                    "values": ["teal"],
                    "strength": "must",
                    "scope": "persistent",
                    "source": "stated",
                },
            ),
        ]
    )
    deployment.drain()
    deployment.drain_signals()
    now = wait_for(
        lambda: (r := _read_side(deployment, again, gone))["inferences"] and r,
        60,
        "the inference of their purchase after the erase",
    )
    assert [(h["op"], h["values"]) for h in now["hard"]] == [("in", ["teal"])], now
    assert not now["attributes"] and not now["exclude"], now
    assert [p["ref"] for p in now["already_presented"]] == ["item_variant:acme:1007"]
    assert [(i["attr"], i["value"], i["evidence"]["events"]) for i in now["inferences"]] == [
        ("item_variant.size", "G", 1)
    ]
