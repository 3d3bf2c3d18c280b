"""What the read side reads about one person: stated constraints, inferences, what was
presented and disliked, and review requests. Blocking; plain values out."""

from __future__ import annotations

import json
from typing import Any

from turnstream.adapters.clickhouse.store import Store, store_time
from turnstream.core.constraints.inputs import (
    Disliked,
    Presented,
    StatedAttribute,
    StatedPreference,
)
from turnstream.core.derivation.inference import Evidence, Inference

__all__ = [
    "ProfileInputs",
    "inference_bucket",
    "inference_dicts",
    "load_inferences",
    "load_inputs",
    "profile_known",
]

_INFERENCE_COLUMNS = (
    "id, space_id, profile_id, `for`, kind, attr, value, polarity, weight, confidence, "
    "effective_exposure, weighted_signal, events, sessions, lift, exposures, origin_events, "
    "purposes, applies, status, created_at, updated_at"
)


#: One person: the ``space_id`` and ``profile_id`` parameters (:func:`_who`).
_WHO = "space_id = {space_id:String} AND profile_id = {profile_id:String}"


def _who(space_id: str, profile_id: str, **more: str) -> dict[str, str]:
    """The query parameters naming one person (and ``more``)."""
    return {"space_id": space_id, "profile_id": profile_id, **more}


def load_inferences(store: Store, space_id: str, profile_id: str) -> list[Inference]:
    """The person's inferences, one current row each (active, deleted and retracted)."""
    rows = store.query(
        f"SELECT {_INFERENCE_COLUMNS} FROM inferences FINAL WHERE {_WHO} ORDER BY id",
        _who(space_id, profile_id),
    ).as_dicts()
    return [
        Inference(
            id=r["id"],
            space_id=r["space_id"],
            profile_id=r["profile_id"],
            for_=r["for"],
            kind=r["kind"],
            attr=r["attr"],
            value=r["value"],
            polarity=r["polarity"] or None,
            weight=r["weight"],
            confidence=r["confidence"],
            evidence=Evidence(
                effective_exposure=r["effective_exposure"],
                weighted_signal=r["weighted_signal"],
                events=r["events"],
                sessions=r["sessions"],
                lift=r["lift"],
                exposures=r["exposures"],
            ),
            origin_events=tuple(r["origin_events"]),
            purposes=tuple(r["purposes"]),
            applies=r["applies"],
            status=r["status"],
            created_at=store_time(r["created_at"]),
            updated_at=store_time(r["updated_at"]),
        )
        for r in rows
    ]


def inference_bucket(store: Store, space_id: str, profile_id: str, inference_id: str) -> str | None:
    """The ``for`` of one of the person's inferences, or None when the store has none."""
    rows = store.query(
        f"SELECT `for` FROM inferences FINAL WHERE {_WHO} AND id = {{inference_id:String}}",
        _who(space_id, profile_id, inference_id=inference_id),
    ).rows
    return rows[0][0] if rows else None


#: The tables whose rows make a person known in a space: what they did and said (raw
#: items), what was derived or stated about them. Not ``review_requests``: an erase keeps
#: them, and an erased person is no longer known.
_KNOWN_FROM = ("interactions", "outcomes", "commands", "turns", "inferences", "stated")


def profile_known(store: Store, space_id: str, profile_id: str) -> bool:
    """Whether the store holds anything of this person in this space."""
    union = " UNION ALL ".join(
        f"(SELECT 1 FROM {table} WHERE {_WHO} LIMIT 1)" for table in _KNOWN_FROM
    )
    return bool(
        store.query(f"SELECT count() FROM ({union})", _who(space_id, profile_id)).rows[0][0]
    )


def inference_dicts(inferences: list[Inference]) -> list[dict[str, Any]]:
    """The reviewable profile's list: each inference with its evidence and origin."""
    return [
        {
            "id": i.id,
            "for": i.for_,
            "kind": i.kind,
            "attr": i.attr,
            "value": i.value,
            "polarity": i.polarity,
            "weight": i.weight,
            "confidence": i.confidence,
            "evidence": {
                "effective_exposure": i.evidence.effective_exposure,
                "weighted_signal": i.evidence.weighted_signal,
                "events": i.evidence.events,
                "sessions": i.evidence.sessions,
                "lift": i.evidence.lift,
            },
            "origin_events": list(i.origin_events),
            "purposes": list(i.purposes),
            "applies": i.applies,
            "status": i.status,
            "created_at": i.created_at.isoformat(),
            "updated_at": i.updated_at.isoformat(),
        }
        for i in inferences
        if i.status != "retracted"
    ]


class ProfileInputs:
    """Everything :func:`~turnstream.core.constraints.block.build_block` needs about one person."""

    def __init__(
        self,
        preferences: list[StatedPreference],
        attributes: list[StatedAttribute],
        inferences: list[Inference],
        presented: list[Presented],
        disliked: list[Disliked],
        shown: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.preferences = preferences
        self.attributes = attributes
        self.inferences = inferences
        self.presented = presented
        self.disliked = disliked
        #: ref -> the values its latest presentation showed (the block names objects by them).
        self.shown = shown or {}


def load_inputs(store: Store, space_id: str, profile_id: str, for_: str) -> ProfileInputs:
    """Read the person's stated constraints, inferences, presentations and dislikes."""
    who = _who(space_id, profile_id, for_=for_)
    preferences: list[StatedPreference] = []
    attributes: list[StatedAttribute] = []
    stated = store.query(
        "SELECT id, `for`, kind, payload, session_id, origin, occurred_at "
        f"FROM stated FINAL WHERE {_WHO} ORDER BY occurred_at, id",
        who,
    ).rows
    # The words of values said on sensitive fields, kept apart (migration 29): the block
    # reads them only to serve what they mean (and only for a person who said some).
    apart: dict[str, Any] = {}
    if any('"withheld":true' in row[3] for row in stated):
        apart = {
            sid: json.loads(words)
            for sid, words in store.query(
                f"SELECT id, value FROM stated_sensitive WHERE {_WHO}", who
            ).rows
        }
    for sid, bucket, kind, payload, session, origin, occurred_at in stated:
        data = json.loads(payload)
        if data.get("withheld"):
            if sid not in apart:
                continue  # nothing to serve without the words
            data = {**data, ("value" if kind == "attribute" else "values"): apart[sid]}
        when = store_time(occurred_at)
        if kind == "preference":
            preferences.append(
                StatedPreference.said(
                    data,
                    id=sid,
                    for_=bucket,
                    occurred_at=when,
                    session=session or "",
                    origin=origin,
                )
            )
        elif kind == "attribute":
            attributes.append(
                StatedAttribute(
                    id=sid,
                    attr=data["attr"],
                    value=data["value"],
                    system=data.get("system"),
                    source=data.get("source") or "stated",
                    for_=bucket,
                    occurred_at=when,
                    origin=origin,
                )
            )
    presented = [
        Presented(ref=ref, times=int(times))
        for ref, times in store.query(
            f"SELECT ref, times FROM already_presented WHERE {_WHO} "
            "AND `for` = {for_:String} ORDER BY ref",
            who,
        ).rows
    ]
    disliked = [
        Disliked(ref=ref)
        for (ref,) in store.query(
            f"SELECT DISTINCT ref FROM interactions WHERE {_WHO} AND `for` = {{for_:String}} "
            "AND kind = 'feedback' AND JSONExtractString(payload, 'polarity') = 'dislike' "
            "ORDER BY ref",
            who,
        ).rows
    ]
    shown: dict[str, dict[str, Any]] = {}
    for ref, raw in store.query(
        "SELECT JSONExtractString(it, 'ref') AS ref, JSONExtractRaw(it, 'shown') AS shown "
        "FROM interactions ARRAY JOIN JSONExtractArrayRaw(payload, 'items') AS it "
        f"WHERE {_WHO} AND `for` = {{for_:String}} AND kind = 'presented' "
        "ORDER BY occurred_at DESC LIMIT 1 BY ref",
        who,
    ).rows:
        values = json.loads(raw) if raw else {}
        if isinstance(values, dict):
            shown[ref] = values
    return ProfileInputs(
        preferences,
        attributes,
        load_inferences(store, space_id, profile_id),
        presented,
        disliked,
        shown,
    )
