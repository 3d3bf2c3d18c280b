"""The ingest rule: bytes in, one decision out. Pure: no broker, no store, no clock."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from turnstream.config import Feature, Settings, SpaceConfig
from turnstream.core.exposure_tokens import TokenCheck, check_token
from turnstream.core.identity import resolve_profile
from turnstream.core.object_types import types_for_space
from turnstream.core.signing import verify
from turnstream.core.time_edges import Edge, inside, time_edge
from turnstream.errors import InvalidItem
from turnstream.models import (
    Command,
    InteractionItem,
    Item,
    Outcome,
    Turn,
    field_of,
    parse_item,
)
from turnstream.models.object_types import ObjectTypes

__all__ = [
    "REFUSED_PREFIX",
    "Decision",
    "Gate",
    "Reason",
    "Refusal",
    "Source",
    "decide",
    "dedup_key_for",
    "dedupe",
    "delivered_past_edge",
    "first_correction",
    "judge",
    "refused_by_store",
    "refused_key_for",
    "refused_length",
    "signature_refusal",
    "too_large_to_fan_out",
    "turn_scoped",
    "unknown_field",
]


@dataclass(frozen=True, order=True, init=False)
class Source:
    """Where a message came from: the unit of idempotent sinking."""

    topic: str
    partition: int
    offset: int

    def __init__(self, topic: str, partition: int, offset: int) -> None:
        # In one update of the instance's dict, as :class:`Decision`: 1.2 µs against 1.9
        # through the frozen dataclass's own __init__ (one per message, in the parent
        # too when the prepare process hands a batch back). Still frozen.
        self.__dict__.update(topic=topic, partition=partition, offset=offset)


class Reason(StrEnum):
    """Why an item (or part of one) went to dead letters."""

    invalid = "invalid"
    unknown_space = "unknown_space"
    signals_disabled = "signals_disabled"
    turns_disabled = "turns_disabled"
    #: A preference or an attribute names a ``type.field`` the space's types do not declare.
    unknown_field = "unknown_field"
    #: A preference of ``scope = "turn"``: it lives in the agent's turn and must never
    #: reach the server (a batch interaction or a correction is refused whole; a turn
    #: stands without those preferences). The dead letter keeps no bytes of it.
    turn_scope = "turn_scope"
    #: Valid, but its accepted message would pass what the accepted topic takes.
    too_large = "too_large"
    #: Valid, but the store refuses its rows, and would again (see
    #: ``adapters/clickhouse/failures.py``).
    store_refused = "store_refused"
    #: ``occurred_at`` (or a presented list's ``delivered_at``) is older than the raw
    #: tables keep (``core/time_edges.py``): its rows would be deleted on insert.
    past_retention = Edge.too_old
    #: ``occurred_at`` (or ``delivered_at``) is further ahead of the received time than
    #: the configured skew.
    ahead_of_clock = Edge.too_far_ahead
    #: The space has producer keys (an erase: erase keys) and the record carries no
    #: signature (``core/signing.py``).
    unsigned = "unsigned"
    #: The record's signature verifies with none of the space's keys for it: another
    #: space's key, a producer key on an erase, or bytes changed after signing.
    bad_signature = "bad_signature"


@dataclass(frozen=True)
class Refusal:
    reason: Reason
    field_path: str
    message: str


@dataclass(frozen=True, init=False)
class Decision:
    """What happens to one message.

    ``item`` is set when (some of) it is accepted; ``refusal`` when (some of) it goes to
    dead letters. A turn of a space whose ``signals`` feature is off is both: the turn is
    kept, its interactions are refused. ``duplicate`` means the idempotency key was
    already taken by another message: nothing is written. ``token`` is an accepted
    outcome's exposure token as the space's keys judge it (None for other items).
    ``erased``: the item occurred at or before its person's erase, and nothing of it is
    kept but its key (``core/erasure.forget_erased``).
    """

    source: Source
    raw: bytes
    dedup_key: str
    item: Item | None = None
    profile_id: str | None = None
    refusal: Refusal | None = None
    duplicate: bool = False
    token: TokenCheck | None = None
    erased: bool = False

    def __init__(
        self,
        source: Source,
        raw: bytes,
        dedup_key: str,
        item: Item | None = None,
        profile_id: str | None = None,
        refusal: Refusal | None = None,
        duplicate: bool = False,
        token: TokenCheck | None = None,
        erased: bool = False,
    ) -> None:
        # The fields in one update of the instance's dict: a frozen dataclass's own
        # __init__ sets each through object.__setattr__, ~2x the cost (one Decision per
        # message). Still frozen: assigning a field afterwards raises.
        self.__dict__.update(
            source=source,
            raw=raw,
            dedup_key=dedup_key,
            item=item,
            profile_id=profile_id,
            refusal=refusal,
            duplicate=duplicate,
            token=token,
            erased=erased,
        )

    @property
    def correctable(self) -> bool:
        """Whether the whole item is refused for something its sender can correct and
        send again with the same key (:data:`_CORRECTABLE`: its dates, its content, its
        space's settings, a value the store refuses); nothing of it is kept."""
        refusal = self.refusal
        # profile_id, not item: a decision the prepare process hands back has no item,
        # and a partial refusal (a turn kept without its interactions) keeps the person.
        return refusal is not None and self.profile_id is None and refusal.reason in _CORRECTABLE

    @property
    def taken_key(self) -> str | None:
        """The key the decision takes (a row of ``idempotency_keys``: a later message
        with it is a duplicate). None for a duplicate; for a refusal its sender can
        correct (:attr:`correctable`), a digest of its bytes, not its item's key: the
        same bytes again are a duplicate (one dead letter), the item corrected and sent
        with the same key is accepted (:func:`refused_key_for` for the store's refusals).
        Else its key (what is kept, whole or in part, forgotten, or refused for its
        bytes, whose key is their digest)."""
        if self.duplicate:
            return None
        if not self.correctable:
            return self.dedup_key
        assert self.refusal is not None
        if self.refusal.reason is Reason.store_refused:
            return refused_key_for(self.raw)
        return dedup_key_for(None, self.raw)

    @property
    def keep_interactions(self) -> bool:
        """Whether the item's interactions are accepted."""
        return self.item is not None and not (
            self.refusal is not None and self.refusal.reason in _DROPS_INTERACTIONS
        )


#: Refusals of a whole item that take the digest of its bytes, not its key: its dates,
#: its content or its space's settings were wrong, and the sender can correct them and
#: send it again with the same key (``check the producer's clock``; the SDK's keys are
#: deterministic). ``store_refused`` is known only once the batch is written: its
#: digest is another (:func:`refused_key_for`).
_CORRECTABLE = frozenset(
    {
        Reason.store_refused,
        Reason.unknown_space,
        Reason.signals_disabled,
        Reason.turns_disabled,
        Reason.unknown_field,
        Reason.turn_scope,
        Reason.too_large,
        Reason.past_retention,
        Reason.ahead_of_clock,
    }
)

#: A partial refusal of a turn with these reasons drops its interactions, keeps the rest.
_DROPS_INTERACTIONS = frozenset(
    {Reason.signals_disabled, Reason.unknown_field, Reason.past_retention, Reason.ahead_of_clock}
)


def unknown_field(item: Item, types: ObjectTypes) -> tuple[str, str] | None:
    """The path and message of the first ``type.field`` the item's preferences,
    attributes or correction name that ``types`` does not declare; ``None`` when all are
    declared. A turn's turn-scope preferences are skipped (they are dropped), and the
    path counts the producer's items, those included."""
    named: list[tuple[str, str]] = []
    if isinstance(item, InteractionItem):
        named.append(("interaction.attr", field_of(item.interaction, "attr")))
    elif isinstance(item, Turn):
        named.extend(
            (f"interactions.{i}.attr", field_of(one, "attr"))
            for i, one in enumerate(item.interactions)
            if field_of(one, "scope") != "turn"
        )
    elif isinstance(item, Command) and item.replacement is not None:
        named.append(("replacement.attr", item.replacement.attr))
    for path, attr in named:
        if attr is None:
            continue
        why = types.unknown(attr)
        if why is not None:
            return path, f"unknown field {attr}: {why}"
    return None


def turn_scoped(item: Item) -> list[str]:
    """The paths of the item's turn-scope preferences (``interaction.scope``,
    ``interactions.<i>.scope``, ``replacement.scope``): none may be kept."""
    # field_of, not getattr: most interactions have no ``scope``, and a missing name
    # goes through pydantic's __getattr__ (16 of prepare's ~190 µs per item, cProfile).
    if isinstance(item, InteractionItem):
        found = [("interaction.scope", item.interaction)]
    elif isinstance(item, Turn):
        return [
            f"interactions.{i}.scope"
            for i, one in enumerate(item.interactions)
            if field_of(one, "scope") == "turn"
        ]
    elif isinstance(item, Command) and item.replacement is not None:
        found = [("replacement.scope", item.replacement)]
    else:
        return []
    return [path for path, one in found if field_of(one, "scope") == "turn"]


def _without_turn_scope(item: Item) -> tuple[Item, Refusal | None]:
    """The item, and the refusal of its turn-scope preferences: a turn loses only them
    (the turn and its other interactions stand); anything else is refused whole."""
    paths = turn_scoped(item)
    if not paths:
        return item, None
    message = "a turn-scope constraint never reaches the server: keep it in the agent's turn"
    if len(paths) > 1:
        message += f" ({len(paths)} dropped)"
    refusal = Refusal(Reason.turn_scope, paths[0], message)
    if not isinstance(item, Turn):
        return item, refusal
    kept = [one for one in item.interactions if field_of(one, "scope") != "turn"]
    return item.model_copy(update={"interactions": kept}), refusal


def delivered_past_edge(item: Item, now: datetime, gate: Gate) -> Refusal | None:
    """The refusal of the first presented list whose ``delivered_at`` falls past the time
    edges judged at ``now`` (``core/time_edges.py``): it dates the list's
    ``exposure_items`` rows (their TTL) as ``occurred_at`` dates the raw rows. The path
    names it (``interaction.delivered_at``, ``interactions.<i>.delivered_at``); a turn's
    message says how many interactions its turn is refused with (the turn stands)."""
    if isinstance(item, InteractionItem):
        interactions, path = [item.interaction], "interaction.delivered_at"
    elif isinstance(item, Turn):
        interactions, path = item.interactions, "interactions.{}.delivered_at"
    else:
        return None
    oldest, latest = gate.edges(now)
    for i, one in enumerate(interactions):
        at = field_of(one, "delivered_at")
        if at is None or oldest < at <= latest:
            continue
        where = path.format(i)
        edge = time_edge(at, now, gate.max_ahead(), path=where)
        if edge is None:
            continue
        message = edge[1]
        if isinstance(item, Turn):
            message += f" ({len(interactions)} interactions refused)"
        return Refusal(Reason(edge[0]), where, message)
    return None


def dedup_key_for(item: Item | None, raw: bytes) -> str:
    """The idempotency key of a valid item; the digest of the bytes for an invalid one."""
    if item is not None:
        return f"k\x1f{item.space_id}\x1f{item.idempotency_key}"
    return "raw\x1f" + hashlib.sha256(raw).hexdigest()


def decide(
    raw: bytes,
    source: Source,
    settings: Settings,
    seen: Callable[[str], Source | None],
    now: datetime | None = None,
    gate: Gate | None = None,
    signature: bytes | None = None,
) -> Decision:
    """Validate, gate by the space's signature and features and de-duplicate one message.

    ``seen(key)`` returns the source that first took an idempotency key, or None. A key
    taken by this very message (a redelivery after a crash) is not a duplicate: the
    idempotent sinks make the second write a no-op. ``now``: the time the edges of
    ``occurred_at`` are judged at (:func:`judge`).
    """
    return dedupe(judge(raw, source, settings, gate, signature=signature, now=now), seen)


@dataclass(frozen=True)
class SpaceGate:
    """What the ingest rule reads of one configured space."""

    space: SpaceConfig
    signals: bool
    turns: bool
    types: ObjectTypes | None
    token_keys: tuple[bytes, ...]
    #: Keys that sign the space's items (none: an open space) and its erase commands.
    producer_keys: tuple[bytes, ...] = ()
    erase_keys: tuple[bytes, ...] = ()


class Gate:
    """The settings as the ingest rule reads them, each space's looked up once: a batch
    judges all its messages through one (``entrypoints/kafka/prepare.py``). The space's features,
    its types document (a path resolved against the working directory), its token keys
    and the hashing secret were read again for every message: ~2 µs of the prepare
    process's ~40 per item (issue 14, round nine). Pure: a cache of ``settings``.

    ``signed``: whether records must carry their space's signature (``core/signing.py``);
    false for a replay, which reads items the operator hands it, not a topic."""

    def __init__(self, settings: Settings, signed: bool = True) -> None:
        self.settings = settings
        self.signed = signed
        self._spaces: dict[str, SpaceGate | None] = {}
        self._secret: bytes | None = None
        self._max_ahead = timedelta(seconds=settings.worker.occurred_at_max_ahead)
        self._edges: tuple[datetime, tuple[datetime, datetime]] | None = None

    def space(self, space_id: str) -> SpaceGate | None:
        """The space's gate, or None for a space not configured."""
        try:
            return self._spaces[space_id]
        except KeyError:
            pass
        space = self.settings.space(space_id)
        gate = None
        if space is not None:
            gate = SpaceGate(
                space,
                space.has(Feature.signals),
                space.has(Feature.turns),
                types_for_space(space),  # raises ConfigError for a broken document
                space.token_keys(),
                space.signing_keys(),
                space.signing_keys(erase=True),
            )
        self._spaces[space_id] = gate
        return gate

    def max_ahead(self) -> timedelta:
        """How far ahead of its received time an item's ``occurred_at`` may be."""
        return self._max_ahead

    def edges(self, now: datetime) -> tuple[datetime, datetime]:
        """The time edges judged at ``now`` (``core/time_edges.inside``), worked out once
        for a batch's received time, not per item (two datetime sums and a timedelta)."""
        if self._edges is None or self._edges[0] is not now:
            self._edges = (now, inside(now, self._max_ahead))
        return self._edges[1]

    def secret(self) -> bytes:
        """The hashing secret (ConfigError when it is not configured)."""
        if self._secret is None:
            self._secret = self.settings.secret_bytes()
        return self._secret


def signature_refusal(
    item: Item, raw: bytes, signature: bytes | None, space: SpaceGate
) -> Refusal | None:
    """Why a record of a keyed space is refused for its signature (None: it verifies, or
    the space is open). An ``erase`` verifies with the space's erase keys only; a space
    with producer keys and no erase keys takes no erase."""
    erase = isinstance(item, Command) and item.command == "erase"
    keys = space.erase_keys if erase else space.producer_keys
    what = "an erase key" if erase else "a producer key"
    if not keys:
        if erase and space.producer_keys:
            return Refusal(
                Reason.unsigned, "command", "the space has no erase keys: it takes no erase"
            )
        return None
    if signature is None:
        return Refusal(
            Reason.unsigned,
            "",
            f"the space takes records signed with {what} (header turnstream-sig)",
        )
    if not verify(raw, signature, keys):
        return Refusal(
            Reason.bad_signature, "", f"the signature verifies with no {what[2:]} of the space"
        )
    return None


def judge(
    raw: bytes,
    source: Source,
    settings: Settings,
    gate: Gate | None = None,
    signature: bytes | None = None,
    now: datetime | None = None,
) -> Decision:
    """Validate and gate one message by its space's signature and features (no
    de-duplication yet); ``gate``: the settings as already read for the other messages
    of its batch; ``signature``: the record's ``turnstream-sig`` header.

    ``now``: when the message was received (live: its batch's received time; replay: the
    replay's start). A valid item whose ``occurred_at`` is past the raw tables' retention
    or further ahead of ``now`` than ``worker.occurred_at_max_ahead`` is refused whole
    (``past_retention``, ``ahead_of_clock``); so is an interaction whose list's
    ``delivered_at`` is, and a turn loses its interactions for one
    (:func:`delivered_past_edge`). ``None`` judges no edge (rule tests only)."""
    if gate is None:
        gate = Gate(settings)
    try:
        item = parse_item(raw)
    except InvalidItem as exc:
        key = dedup_key_for(None, raw)
        first, message = exc.errors[0]
        if len(exc.errors) > 1:
            message += f" (and {len(exc.errors) - 1} more)"
        return Decision(source, raw, key, refusal=Refusal(Reason.invalid, first, message))
    key = dedup_key_for(item, raw)
    space = gate.space(item.space_id)
    if space is None:
        refusal = Refusal(
            Reason.unknown_space, "space_id", f"space {item.space_id!r} is not configured"
        )
        return Decision(source, raw, key, refusal=refusal)
    if gate.signed and (space.producer_keys or space.erase_keys):
        refusal = signature_refusal(item, raw, signature, space)
        if refusal is not None:
            # The digest of the bytes as its key, not the item's: a record signed by no
            # one must not take the key its space's real item will come with.
            return Decision(source, raw, dedup_key_for(None, raw), refusal=refusal)
    if isinstance(item, InteractionItem) and not space.signals:
        refusal = Refusal(
            Reason.signals_disabled, "interaction", "the space's signals feature is off"
        )
        return Decision(source, raw, key, refusal=refusal)
    if isinstance(item, Turn) and not space.turns:
        refusal = Refusal(Reason.turns_disabled, "type", "the space's turns feature is off")
        return Decision(source, raw, key, refusal=refusal)
    partial = None
    if now is not None:
        oldest, latest = gate.edges(now)
        if not oldest < item.occurred_at <= latest:
            edge = time_edge(item.occurred_at, now, gate.max_ahead())
            if edge is not None:
                refusal = Refusal(Reason(edge[0]), "occurred_at", edge[1])
                return Decision(source, raw, key, refusal=refusal)
        if space.signals:
            partial = delivered_past_edge(item, now, gate)
            if partial is not None and not isinstance(item, Turn):
                return Decision(source, raw, key, refusal=partial)
    if isinstance(item, Turn) and item.interactions and not space.signals:
        partial = Refusal(
            Reason.signals_disabled,
            "interactions",
            f"the space's signals feature is off: {len(item.interactions)} interactions refused",
        )
    # Paths name the producer's items: checks after the turn-scope drop look at this.
    sent = item
    if partial is None:
        item, scoped = _without_turn_scope(item)
        if scoped is not None and not isinstance(item, Turn):
            return Decision(source, raw, key, refusal=scoped)
        partial = scoped
    types = space.types
    dropping = partial is not None and partial.reason in _DROPS_INTERACTIONS
    unknown = None if types is None or dropping else unknown_field(sent, types)
    if unknown is not None:
        path, message = unknown
        if not isinstance(item, Turn):
            return Decision(source, raw, key, refusal=Refusal(Reason.unknown_field, path, message))
        # The turn stands; its interactions go, as when the signals feature is off.
        message += f" ({len(item.interactions)} interactions refused)"
        partial = Refusal(Reason.unknown_field, path, message)
    profile_id = resolve_profile(item, gate.secret())
    token = None
    if isinstance(item, Outcome):
        # Verified here, in the one rule live and replay share: a token that fails never
        # attributes, in the raw table or in derivation (accepted_for drops it).
        token = check_token(item.exposure_token, item.space_id, space.token_keys)
    return Decision(source, raw, key, item, profile_id, partial, token=token)


def dedupe(
    decision: Decision,
    seen: Callable[[str], Source | None],
    refused_lengths: Container[int] = (),
) -> Decision:
    """The decision, or a duplicate when another message took its key first, or, for a
    refusal its sender can correct, the digest of its bytes. What would be written is
    also a duplicate of the same bytes the store refused (:func:`refused_key_for`),
    looked for only when a refused message had their length (``refused_lengths``)."""
    first = seen(decision.dedup_key)
    if first is None or first == decision.source:
        if decision.correctable:
            first = seen(dedup_key_for(None, decision.raw))  # the same refused bytes again
        elif len(decision.raw) in refused_lengths and (
            decision.refusal is None or decision.profile_id is not None
        ):
            first = seen(refused_key_for(decision.raw))  # the bytes the store refused
    if first is not None and first != decision.source:
        return Decision(decision.source, decision.raw, decision.dedup_key, duplicate=True)
    return decision


def first_correction(decisions: Sequence[Decision]) -> int | None:
    """The index of the first decision whose key an earlier one of ``decisions`` has,
    with other bytes (a correction, or another item sent with the key), None if there
    is none. Whether the store refuses the earlier one is known only once it is
    written: the correction is decided after it (a replay's batch ends before it)."""
    first: dict[str, bytes] = {}
    for i, decision in enumerate(decisions):
        raw = first.setdefault(decision.dedup_key, decision.raw)
        if raw != decision.raw:
            return i
    return None


def too_large_to_fan_out(decision: Decision, size: int, limit: int) -> Decision:
    """The decision for an item whose accepted message would be ``size`` bytes, past the
    ``limit`` the accepted topic takes: a dead letter, before anything is written. It
    takes the digest of its bytes, not the key its item would have taken
    (:attr:`Decision.taken_key`): a smaller item sent again with the key is accepted,
    here and in a replay."""
    message = f"its accepted message would be {size} bytes; the accepted topic takes {limit}"
    return Decision(
        decision.source,
        decision.raw,
        decision.dedup_key,
        refusal=Refusal(Reason.too_large, "", message),
    )


def refused_by_store(decision: Decision, message: str) -> Decision:
    """The decision for a message whose rows the store refused for good (``message``
    says which table and why): a dead letter. It takes :func:`refused_key_for` its bytes,
    not its item's key: a copy of it is a duplicate, here and in a replay, and the item
    corrected and sent again with the same key is accepted."""
    return Decision(
        decision.source,
        decision.raw,
        decision.dedup_key,
        refusal=Refusal(Reason.store_refused, "", message),
    )


#: How the key a message the store refused takes begins (:func:`refused_key_for`).
REFUSED_PREFIX = "refused\x1f"


def refused_key_for(raw: bytes) -> str:
    """The key a message the store refused takes: the length and digest of its bytes.
    Not the digest a refusal at the gate takes (:func:`dedup_key_for`): bytes the gate
    refused may be valid later (the space configured since) and are accepted then;
    bytes the store refused stay a duplicate. The length first: a message's bytes are
    hashed only when a refused message had their length (:func:`refused_length`)."""
    return f"{REFUSED_PREFIX}{len(raw)}\x1f{hashlib.sha256(raw).hexdigest()}"


def refused_length(key: str) -> int:
    """The length of the bytes a :func:`refused_key_for` key stands for."""
    return int(key.split("\x1f", 2)[1])
