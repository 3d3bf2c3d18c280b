"""The messages the ingest rule sends on: an accepted item (fanned out for derivation) and a
dead letter (a refusal with the original bytes). Pure: the time is passed in."""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime
from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from pydantic_core import SchemaSerializer, core_schema, to_json

from turnstream.core.ingest import Decision, Reason
from turnstream.models import Turn
from turnstream.models.deadletter import MAX_ORIGINAL_BYTES, DeadLetter

__all__ = ["accepted_for", "dead_letter_for", "fields_serializer"]


def dead_letter_for(decision: Decision, received_at: datetime) -> bytes:
    """The dead-letter topic's message for a refusal: reason, path and original bytes,
    stamped with ``received_at`` (when the driver took the message)."""
    assert decision.refusal is not None
    src = decision.source
    # A turn-scope constraint must not be kept anywhere: its letter has the digest only.
    keep = decision.refusal.reason is not Reason.turn_scope and len(decision.raw) <= (
        MAX_ORIGINAL_BYTES
    )
    letter = DeadLetter(
        reason=decision.refusal.reason.value,
        field_path=decision.refusal.field_path,
        message=decision.refusal.message,
        topic=src.topic,
        partition=src.partition,
        offset=src.offset,
        received_at=received_at,
        original=base64.b64encode(decision.raw).decode() if keep else "",
        original_size=len(decision.raw),
        original_sha256=hashlib.sha256(decision.raw).hexdigest(),
    )
    return letter.model_dump_json().encode()


def accepted_for(decision: Decision) -> bytes:
    """The fan-out message of an accepted item: the item without its handle, with its
    profile id (and without its interactions when they were refused). An outcome carries
    its ``token_status``, and its ``exposure_token`` only when valid, so that derivation
    never attributes through a token that failed."""
    assert decision.item is not None and decision.profile_id is not None
    item = decision.item
    exclude = _EXCLUDED
    drop_interactions = isinstance(item, Turn) and not decision.keep_interactions
    if drop_interactions:
        exclude = _EXCLUDED_WITH_INTERACTIONS
    token = decision.token
    if token is not None and not token.attributes:
        exclude = exclude | {"exposure_token"}
    body = fields_serializer(type(item), exclude).to_json(item.__dict__, by_alias=True)
    tail = b',"profile_id":' + to_json(decision.profile_id)
    if token is not None:
        tail += b',"token_status":' + to_json(token.status)
    if drop_interactions:
        tail += b',"interactions":[]'
    return body[:-1] + tail + b"}"  # an item always has fields: body is never "{}"


_EXCLUDED = frozenset({"handle", "profile_id"})
_EXCLUDED_WITH_INTERACTIONS = _EXCLUDED | {"interactions"}


@lru_cache(maxsize=64)
def fields_serializer(cls: type[BaseModel], exclude: frozenset[str]) -> SchemaSerializer:
    """A serializer of ``cls``'s fields (its instance's ``__dict__``) that leaves out
    ``exclude`` by itself: the same bytes as ``model_dump_json(by_alias=True,
    exclude=exclude)``, without the exclude set converted on every call nor pydantic's
    Python wrapper (a turn's accepted message 20 → 11 µs, an outcome's 11 → 4.5;
    ``bench/validation.py``). The fields' own schemas are ``cls``'s, so every nested
    value is serialized as before (``tests/unit/core/test_accepted_message.py``)."""
    root = cls.__pydantic_core_schema__
    definitions = root["definitions"] if root["type"] == "definitions" else None
    node: Any = root["schema"] if definitions is not None else root
    while node["type"] != "model":  # past the model validators' wrappers
        node = node["schema"]
    fields = node["schema"]["fields"]
    missing = exclude - fields.keys()
    if missing:
        raise ValueError(f"{cls.__name__} has no fields {sorted(missing)}")
    schema: core_schema.CoreSchema = core_schema.typed_dict_schema(
        {
            name: core_schema.typed_dict_field(
                field["schema"],
                serialization_alias=field.get("serialization_alias"),
                serialization_exclude=name in exclude,
            )
            for name, field in fields.items()
        }
    )
    if definitions is not None:
        schema = core_schema.definitions_schema(schema, definitions)
    return SchemaSerializer(schema, node.get("config"))
