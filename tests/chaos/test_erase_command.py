"""An ``erase`` command removes the subject from every table with a ``profile_id``
column (views included), except ``review_requests``, which the law makes us keep, and
the webhook events that announce them (``webhook_events``).

A person known by a phone number sends every type of item, the derivation driver derives
(short triggers), a review request is opened; then an erase for the same handle. Another
person's rows must stay as they were.
"""

from __future__ import annotations

import json
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.chaos.helpers import Factory, q, scalar, store_rows, wait_for
from turnstream.adapters.clickhouse.current_views import current_view
from turnstream.adapters.clickhouse.erasure import RETAINED as ERASURE_RETAINED
from turnstream.adapters.worker_client import WorkerError
from turnstream.config import Settings
from turnstream.core.identity import resolve_profile
from turnstream.models import parse_item
from turnstream_dev.deployment import Deployment

pytestmark = pytest.mark.chaos(budget=240)

SIGNALS = """
[signals]
quiet_seconds = 1.0
oldest_pending_seconds = 3.0
"""
RETAINED = "review_requests"
#: What the erasure keeps: the review requests and their webhook events
#: (adapters/clickhouse/erasure.py).
#: (``webhook_events_mv`` is the view that writes them: reading it reads them; each
#: ``<table>_current`` view reads its table FINAL, so it shows what the table keeps.)
KEPT = (
    frozenset(ERASURE_RETAINED)
    | {"webhook_events_mv"}
    | {current_view(t) for t in ERASURE_RETAINED}
)
#: Plain MergeTree tables: their counts never change by merging.
RAW = ("turns", "interactions", "outcomes", "commands")
#: Tables the subject is in before the erase (the run writes each of them).
WRITTEN = {
    "turns",
    "interactions",
    "outcomes",
    "commands",
    "stated",
    "exposure_items",
    "inferences",
    "signal_state",
    "review_requests",
}
#: The words of the diet each person said (issue 36): no analyst reads them, nor their
#: count (the worker's SQL refuses the table and its parts), so they are read on the
#: store itself once the worker is stopped.
WORDS = "stated_sensitive"


class Person:
    """Items of one person of acme, known by a phone number."""

    def __init__(self, name: str, phone: str) -> None:
        self.name, self.handle = name, {"type": "phone_e164", "value": phone}
        self.n = 0
        self.t0 = datetime.now(UTC) - timedelta(hours=3)

    def item(self, minutes: float, kind: str, **fields: Any) -> bytes:
        self.n += 1
        at = self.t0 + timedelta(minutes=minutes)
        return json.dumps(
            {
                "type": kind,
                "space_id": "acme",
                "idempotency_key": f"{self.name}-{self.n}",
                "handle": self.handle,
                "source": "whatsapp",
                "conversation_id": f"wa-{self.name}",
                "occurred_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                **fields,
            },
            separators=(",", ":"),
        ).encode()

    def presented(self, minutes: float, exposure: str, refs: list[int]) -> dict[str, Any]:
        at = self.t0 + timedelta(minutes=minutes)
        return {
            "kind": "presented",
            "exposure_id": exposure,
            "list_id": f"list-{self.name}-{exposure[-4:]}",
            "list_kind": "search",
            "page": 1,
            "delivered_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "visible_k": len(refs),
            "items": [
                {
                    "pos": i + 1,
                    "ref": f"item_variant:acme:{ref}",
                    "shown": {"color": "navy", "size": "M", "price_sale": 59.9 + ref},
                }
                for i, ref in enumerate(refs)
            ],
        }

    def lines(self, exposures: tuple[str, str]) -> list[bytes]:
        first, second = exposures
        click = {"kind": "engaged", "exposure_id": first, "ref": "item_variant:acme:1002"}
        return [
            self.item(
                0,
                "turn",
                turn_id=f"{self.name}-t1",
                agent="sales-assistant",
                interactions=[
                    self.presented(0, first, [1001, 1002, 1003]),
                    click | {"pos": 2, "action": "click"},
                ],
                claims=[
                    {
                        "category": "price",
                        "class": "money",
                        "nature": "quoted",
                        "value": "61.90",
                        "verdict": "matched",
                        "action": "none",
                    }
                ],
                constraints=[
                    {
                        "tool": "search_products",
                        "sent": 1,
                        "results_checked": 3,
                        "violations": 0,
                        "unverifiable": 0,
                    }
                ],
            ),
            self.item(2, "interaction", interaction=self.presented(2, second, [1004, 1005])),
            self.item(
                3,
                "interaction",
                interaction={"kind": "seen", "exposure_id": second, "max_index_seen": 2},
            ),
            self.item(
                4,
                "interaction",
                interaction={
                    "kind": "engaged",
                    "exposure_id": second,
                    "ref": "item_variant:acme:1004",
                    "pos": 1,
                    "action": "cart",
                },
            ),
            self.item(
                5,
                "interaction",
                interaction={
                    "kind": "engaged",
                    "exposure_id": second,
                    "ref": "item_variant:acme:1004",
                    "pos": 1,
                    "action": "detail",
                },
            ),
            self.item(
                6,
                "interaction",
                interaction={
                    "kind": "preference",
                    "attr": "item_variant.color",
                    "op": "not_in",
                    "values": ["black"],
                    "strength": "must_not",
                    "scope": "persistent",
                    "source": "stated",
                },
            ),
            self.item(
                7,
                "interaction",
                interaction={
                    "kind": "attribute",
                    "attr": "item_variant.size",
                    "value": "M",
                    "source": "stated",
                },
            ),
            self.item(
                7.5,
                "interaction",
                interaction={
                    "kind": "attribute",
                    "attr": "person.diet",
                    "value": "celíaco (doença celíaca)",
                    "source": "stated",
                },
            ),
            self.item(
                8,
                "interaction",
                interaction={
                    "kind": "feedback",
                    "ref": "item_variant:acme:1005",
                    "polarity": "dislike",
                    "fields": ["color"],
                    "reason": "too dark",
                },
            ),
            self.item(
                20,
                "outcome",
                outcome="purchase",
                ref="item_variant:acme:1004",
                order_id=f"ord-{self.name}-1",
                attrs={"size": "M"},
            ),
            self.item(21, "command", command="delete", inference_id=f"inf-{self.name}-0"),
        ]

    def erase(self) -> bytes:
        return self.item(30, "command", command="erase")

    def profile_id(self, settings: Settings) -> str:
        item = parse_item(self.item(0, "command", command="opt_out"))
        return resolve_profile(item, settings.secret_bytes())


def _uuid7(n: int) -> str:
    ms = int(time.time() * 1000) - n
    value = ms << 80 | 0x7 << 76 | n << 64 | 0b10 << 62 | n
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _profile_tables(deployment: Deployment) -> list[str]:
    """Every table and view of the database with a ``profile_id`` column."""
    database = deployment.settings.store.database
    return [
        table
        for (table,) in q(
            deployment,
            "SELECT table FROM system.columns WHERE database = {database:String} "
            "AND name = 'profile_id' ORDER BY table",
            {"database": database},
        )
    ]


def _rows_of(deployment: Deployment, tables: list[str], profile_id: str) -> dict[str, int]:
    database = deployment.settings.store.database
    tables = [t for t in tables if t != WORDS]
    union = " UNION ALL ".join(
        f"SELECT {{t{i}:String}}, count() FROM {database}.`{t}` "
        "WHERE profile_id = {profile_id:String}"
        for i, t in enumerate(tables)
    )
    params = {"profile_id": profile_id, **{f"t{i}": t for i, t in enumerate(tables)}}
    return {t: int(n) for t, n in q(deployment, union, params)}


def _open_review(deployment: Deployment, profile_id: str) -> None:
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.worker.web_port}/v1/profiles/{profile_id}/review-requests",
        data=json.dumps({"space_id": "acme", "receipts": ["rcpt-1"], "reason": "why"}).encode(),
        headers={"Content-Type": "application/json", **deployment.headers()},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 201


def test_erase_removes_the_subject_from_every_table_but_review_requests(
    deployment_factory: Factory,
) -> None:
    subject, other = Person("ines", "+5531988887777"), Person("otto", "+5531988886666")
    lines = subject.lines((_uuid7(1), _uuid7(2))) + other.lines((_uuid7(3), _uuid7(4)))
    for raw in lines:
        parse_item(raw)  # every item is valid: Deployment.publish would send a bad one raw
    deployment = deployment_factory(extra=SIGNALS)
    deployment.worker.start()
    settings = deployment.settings
    gone, kept = subject.profile_id(settings), other.profile_id(settings)

    deployment.publish(lines)
    deployment.drain()
    deployment.drain_signals()
    for pid in (gone, kept):
        _open_review(deployment, pid)
    tables = _profile_tables(deployment)
    assert set(tables) >= WRITTEN, tables

    def derived(pid: str) -> dict[str, int] | None:
        rows = _rows_of(deployment, tables, pid)
        return rows if all(rows[t] for t in WRITTEN) else None

    wait_for(lambda: derived(gone), 60, "the subject's rows in every table")
    before = wait_for(lambda: derived(kept), 60, "the other person's rows in every table")
    assert WORDS in tables  # each person's diet, apart: counted at the end
    with pytest.raises(WorkerError, match="stated_sensitive is not allowed"):
        q(deployment, f"SELECT value FROM {WORDS}")

    deployment.publish([subject.erase()])
    deployment.drain()
    deployment.drain_signals()

    def erased() -> dict[str, int] | None:
        rows = _rows_of(deployment, tables, gone)
        left = {t: n for t, n in rows.items() if n and t not in KEPT}
        return None if left else rows

    try:
        wait_for(erased, 60, "the erase")
    except AssertionError:
        left = {t: n for t, n in _rows_of(deployment, tables, gone).items() if n}
        raise AssertionError(f"rows of the erased subject left: {left}") from None
    # Late: an interaction of theirs from before the erase (minute 20 of 30) arrives now.
    late = subject.item(20, "interaction", interaction=subject.presented(20, _uuid7(5), [1006]))
    deployment.publish([late])
    deployment.drain()
    deployment.drain_signals()
    assert deployment.worker.stats()["erased_before_arrival"] == 1
    time.sleep(5)  # past every signals trigger: nothing comes back
    after = _rows_of(deployment, tables, gone)
    assert {t: n for t, n in after.items() if t not in KEPT} == dict.fromkeys(
        (t for t in tables if t not in KEPT and t != WORDS), 0
    )
    # Review requests are retained by law: the subject's one is still there, and the
    # event that announces it (review_request.created).
    assert after[RETAINED] == 1
    assert after["webhook_events"] == 1
    assert after["erase_tombstones"] >= 1  # the profile id and the erase's time, no more
    sql = f"SELECT count() FROM {RETAINED} WHERE profile_id = {{gone:String}}"
    assert scalar(deployment, sql, {"gone": gone}) == 1
    # The other person keeps every row: the same raw rows, and what was derived.
    still = _rows_of(deployment, tables, kept)
    assert {t: still[t] for t in RAW} == {t: before[t] for t in RAW}
    assert all(still[t] for t in WRITTEN), still
    # The words: the other person's only (both said a diet alike, so theirs shows that
    # the subject's were written before the erase).
    deployment.worker.stop()
    words = f"SELECT profile_id, count() FROM {WORDS} GROUP BY profile_id"
    assert store_rows(deployment, words) == [[kept, 1]]
