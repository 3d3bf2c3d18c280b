"""What one turn collects: tool calls and their values, state reads, documents, anchors,
interactions, constraint measurements and the agent's output.

The frame of the turn in progress is in a context variable (``current_frame()``), so code
that never sees the conversation can still record into its turn: issue 13's bound tools
(``@tool``) call ``current_frame().record_call(...)`` and ``.measure(...)`` after each call.
A context variable follows the code: within one thread, and within one asyncio task and
the tasks it creates (``asyncio.to_thread`` copies it too; a bare ``ThreadPoolExecutor``
does not: pass the frame to such threads, or use ``contextvars.copy_context().run``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, get_args

from pydantic import TypeAdapter, ValidationError

from turnstream.core.constraints.block import breaks, value_words_of
from turnstream.core.constraints.changes import (
    UnreadableState,
    changes_since_shown,
    read_state,
    state_shown,
)
from turnstream.core.constraints.text import LANGUAGES, changes_said, language_of
from turnstream.core.value_ids import value_ids
from turnstream.errors import TurnstreamError
from turnstream.models.common import Scalar
from turnstream.models.interactions import Interaction
from turnstream.models.object_types import ObjectTypes
from turnstream.models.turns import ConstraintMeasurement
from turnstream.sdk.claims import (
    Anchor,
    Document,
    Evidence,
    EvidenceValue,
    Guarded,
    GuardStream,
    StateRead,
    ToolCall,
)
from turnstream.sdk.claims.contract import Language
from turnstream.sdk.claims.evidence import ValueClass
from turnstream.sdk.ids import uuid7


@dataclass(frozen=True)
class SeenChanges:
    """What a state read says changed since the person saw the object (``record_read``'s
    result): each change (``field``, ``change``, ``shown``, ``now``, ``values``) and the
    same in words in the turn's language (empty when nothing changed, or when the person
    was never shown the object as far as the turn knows)."""

    object: str
    changed: list[dict[str, Any]]
    text: str

    def __bool__(self) -> bool:
        return bool(self.changed)


class Owner(Protocol):
    """What a frame needs of its conversation (``turnstream.sdk.Conversation``)."""

    space: str
    #: The space's object types document: a value read from an object of a declared type
    #: takes its field's ``class`` and claim age from it (a value may still say its own).
    types: ObjectTypes | None

    def now(self) -> datetime: ...

    def exposure_token(self, exposure_id: str, pos: int) -> str: ...


__all__ = [
    "Output",
    "Owner",
    "RecordedCall",
    "SeenChanges",
    "TurnFrame",
    "activate",
    "current_frame",
    "deactivate",
]

_CURRENT: ContextVar[TurnFrame | None] = ContextVar("turnstream_turn_frame", default=None)
_INTERACTION: TypeAdapter[Any] = TypeAdapter(Interaction)


def _iso(at: datetime) -> str:
    """The wire's form of a time (the models read RFC 3339 strings, with a zone)."""
    if at.tzinfo is None:
        raise TurnstreamError(f"a time without a zone: {at.isoformat()}")
    return at.isoformat()


_REFUSED = " (the turn will not be published: fix the interaction and run the turn again)"


def _bad_value(
    where: str, i: int, data: Mapping[str, Any], exc: ValidationError, typed: bool
) -> str:
    """What is wrong with ``values[i]`` of a call or a read, and what to do: a missing
    class names the classes and ``type=``."""
    name = f"{where}: values.{i} (field {data.get('field')!r})"
    problems = []
    for error in exc.errors():
        loc = ".".join(str(p) for p in error["loc"])
        if error["type"] == "missing" and loc == "class":
            hint = "give its class"
            if not typed:
                hint += ", or pass type= to take it from the conversation's object types"
            problems.append(f"class required: {hint} ({', '.join(get_args(ValueClass))})")
        elif error["loc"][:1] == ("value",):  # one error per member of the union
            got = type(data.get("value")).__name__
            problems.append(f"value: a number, a text or a pair of numbers, not a {got}")
        else:
            problems.append(f"{loc}: {error['msg']}")
    return f"{name}: {'; '.join(dict.fromkeys(problems))}"


def interaction_problems(exc: ValidationError) -> str:
    """A bad interaction's problems, each as ``interaction.<field>: <what to fix>``."""
    out: list[str] = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        if err["type"] == "union_tag_invalid":
            got = err["ctx"].get("tag") if err.get("ctx") else None
            wanted = err["ctx"].get("expected_tags") if err.get("ctx") else None
            out.append(f"interaction.kind: {got!r} is not a kind (one of {wanted})")
            continue
        if err["type"] == "union_tag_not_found":
            out.append("interaction.kind: required (presented, seen, engaged, feedback, "
                       "preference, attribute, watch or unwatch)")  # fmt: skip
            continue
        path = ".".join(["interaction", *loc[1:]]) if loc else "interaction"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "missing":
            msg = "required"
        elif "input" in err and err["type"] not in ("missing",):
            shown = repr(err["input"])
            msg += f" (got {shown if len(shown) <= 60 else shown[:57] + '...'})"
        out.append(f"{path}: {msg}")
    return "; ".join(out)


def current_frame() -> TurnFrame | None:
    """The frame of the turn in progress in this context, or None outside a turn."""
    return _CURRENT.get()


def activate(frame: TurnFrame) -> Token[TurnFrame | None]:
    """Make ``frame`` the current one (``conversation.turn()`` does, on entering)."""
    return _CURRENT.set(frame)


def deactivate(token: Token[TurnFrame | None]) -> None:
    """Give back the frame that was current before ``activate``."""
    _CURRENT.reset(token)


@dataclass(frozen=True)
class RecordedCall:
    """A tool call as the turn saw it: its evidence entry, and what the tool layer keeps
    beside it (arguments and the raw result: never published)."""

    evidence: ToolCall
    args: Mapping[str, Any] | None = None
    result: Any = None


@dataclass(frozen=True)
class Output:
    """The agent's output of the turn, and how it is to be read."""

    text: str
    context: str | None
    immutable: bool
    language: Language | None


@dataclass
class TurnFrame:
    """One turn in progress. Build it with ``conversation.turn()``; read it in the body."""

    conversation: Owner
    turn_id: str
    at: datetime
    build: str | None = None
    language: Language | None = None
    context: str | None = None
    experiment: Mapping[str, str] | None = None
    calls: list[RecordedCall] = field(default_factory=list)
    reads: list[StateRead] = field(default_factory=list)
    documents: list[Document] = field(default_factory=list)
    anchors: list[Anchor] = field(default_factory=list)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    measurements: list[ConstraintMeasurement] = field(default_factory=list)
    #: The constraints block the turn cites (``cite_block``): bound tools render it.
    block: Mapping[str, Any] | None = None
    #: Each bound tool's run in this turn (``turnstream.sdk.tools.ToolRun``): its
    #: suggestions, measurement and counterfactual.
    tool_runs: list[Any] = field(default_factory=list)
    output: Output | None = None
    #: The last guard that acted on an output in this turn (``conversation.claims.guard*``).
    guarded: Guarded | None = None
    stream: GuardStream | None = None
    #: The turn record, once the turn has ended (published or not).
    record: dict[str, Any] | None = None
    #: What was wrong with each invalid ``interact()`` of the turn: the turn is refused
    #: whole (never published without the interaction).
    invalid: list[str] = field(default_factory=list)

    # ----------------------------------------------------------------- evidence

    def record_call(
        self,
        tool: str,
        values: Iterable[EvidenceValue | Mapping[str, Any]] = (),
        *,
        id: str | None = None,
        at: datetime | None = None,
        args: Mapping[str, Any] | None = None,
        result: Any = None,
        type: str | None = None,
    ) -> str:
        """Record a tool call and the values of its result (each with its ``field``,
        ``class``, ``value``, and optionally ``object``, ``unit``, ``claim_age_s``,
        ``gaps``); returns the call's id (``c1``, ``c2``, ... unless given), which the
        claims' evidence cites. With ``type`` (an object type of the conversation's
        ``types``), a value without ``class`` or ``claim_age_s`` takes its field's."""
        call_id = id or f"c{len(self.calls) + 1}"
        if any(c.evidence.id == call_id for c in self.calls):
            raise TurnstreamError(f"record_call: the turn already has a call {call_id!r}")
        call = ToolCall(
            id=call_id,
            tool=tool,
            at=_iso(at or self.conversation.now()),
            values=self._values(values, type, "record_call"),
        )
        self.calls.append(RecordedCall(call, args, result))
        return call_id

    def record_read(
        self,
        object: str,
        values: Iterable[EvidenceValue | Mapping[str, Any]],
        *,
        at: datetime | None = None,
        type: str | None = None,
    ) -> SeenChanges:
        """Record a read of an object's state (the values as read, at ``at``); with
        ``type``, a value without ``class`` or ``claim_age_s`` takes its field's from the
        conversation's object types.

        Returns what changed since the person saw the object: the read against what it
        showed when presented (this turn's presentation, else the cited block's
        ``already_presented`` entry), in the turn's language (else the cited block's,
        else English). A price is read as the
        block reads ``current`` (text in the turn's language); one that is no price (a
        negative, ``NaN``, a list, unreadable text) raises :class:`TurnstreamError`
        naming it, and nothing is recorded."""
        types = self.conversation.types
        cited = (self.block or {}).get("language")
        language = (
            self.language
            or getattr(self.conversation, "language", None)
            or (cited if isinstance(cited, str) else None)
            or "en"
        )
        lang = language_of(language)
        given = _state_values(values)
        fields = {
            str(v.field if isinstance(v, EvidenceValue) else v.get("field")): (
                v.value if isinstance(v, EvidenceValue) else v.get("value")
            )
            for v in given
        }
        if types is not None:
            try:
                read_state(object, fields, types, lang)
            except UnreadableState as exc:
                raise TurnstreamError(f"record_read: {object}.{exc}") from None
        read = StateRead(
            object=object,
            at=_iso(at or self.conversation.now()),
            values=self._values(given, type, "record_read"),
        )
        self.reads.append(read)
        shown = self._shown_before(object)
        if shown is None or types is None:
            return SeenChanges(object, [], "")
        now = read_state(object, fields, types, lang)
        if self._unsaid(object, now):
            return SeenChanges(object, [], "")
        changes = [c.as_dict() for c in changes_since_shown(object, shown, now, types, lang)]
        type_name = object.split(":", 1)[0]
        values = value_words_of(types, lang)
        said = changes_said(language, type_name, changes, types.labels(lang), values)
        words = LANGUAGES[language_of(language)]
        return SeenChanges(object, changes, f"{words['changed_since']} {said}" if said else "")

    def _unsaid(self, ref: str, now: Mapping[str, Any]) -> bool:
        """Whether what changed of ``ref`` goes unsaid, as the block leaves it unsaid: the
        person excluded it (the cited block's ``exclude``, or a dislike in this turn),
        or, as it is now (``now`` over what it showed), it breaks a hard entry of the
        cited block (an interest in it is no interest the agent may offer again)."""
        block = self.block or {}
        disliked = {
            i.get("ref")
            for i in self.interactions
            if i.get("kind") == "feedback" and i.get("polarity") == "dislike"
        }
        if ref in block.get("exclude", ()) or ref in disliked:
            return True
        hard = block.get("hard", ())
        ids = value_ids(self.conversation.types)
        if breaks(ref, {**self._showed(ref), **now}, hard, ids):
            return True
        # A row the block found it breaking by a value this read does not carry (the
        # colour it was shown in, turns ago) still holds.
        entry = next((e for e in block.get("already_presented", ()) if e.get("ref") == ref), {})
        judged = set(entry.get("breaks", ()))
        return any(
            row.get("id") in judged and str(row.get("attr")).partition(".")[2] not in now
            for row in hard
        )

    def _presentation(self, ref: str) -> tuple[dict[str, Any], bool] | None:
        """What ``ref`` showed the person, and whether in this turn: its latest
        presentation in this turn (every value it showed), else the state the cited
        block's ``already_presented`` entry carries; ``None`` if neither has it."""
        for interaction in reversed(self.interactions):
            if interaction.get("kind") != "presented":
                continue
            for item in interaction.get("items", ()):
                if item.get("ref") == ref:
                    return dict(item.get("shown") or {}), True
        for entry in (self.block or {}).get("already_presented", ()):
            if entry.get("ref") == ref:
                return dict(entry.get("shown") or {}), False
        return None

    def _showed(self, ref: str) -> dict[str, Any]:
        """Every value ``ref`` showed the person (:meth:`_presentation`; none: empty)."""
        found = self._presentation(ref)
        return found[0] if found else {}

    def _shown_before(self, ref: str) -> dict[str, Any] | None:
        """The state ``ref`` showed the person (:meth:`_presentation`: a presentation in
        this turn by its state fields); ``None`` if it was not shown."""
        found = self._presentation(ref)
        if found is None:
            return None
        shown, this_turn = found
        return state_shown(ref, shown, self.conversation.types) if this_turn else shown

    def _values(
        self, values: Iterable[EvidenceValue | Mapping[str, Any]], type: str | None, where: str
    ) -> list[EvidenceValue]:
        """The values as evidence. With ``type``, a value takes its field's class and claim
        age from the conversation's object types; a field they declare without a class
        (a stock flag, the sizes in stock) is no evidence (no claim can be checked
        against it) and is left out. A bad value raises :class:`TurnstreamError` naming
        it and what to do."""
        types = self.conversation.types
        if type is not None and (types is None or type not in types.types):
            raise TurnstreamError(f"{where}: type {type!r} is not in the conversation's types")
        found: list[EvidenceValue] = []
        for i, value in enumerate(values):
            if isinstance(value, EvidenceValue):
                found.append(value)
                continue
            data = dict(value)
            if type is not None and types is not None:
                declared = types.field(f"{type}.{data.get('field')}")
                if declared is None:
                    raise TurnstreamError(
                        f"{where}: values.{i}.field: {type}.{data.get('field')} is not declared"
                    )
                if (
                    "class" not in data
                    and declared.class_ is None
                    and declared.role != "identifier"
                ):
                    _check_state_value(where, i, data)
                    continue
                if "class" not in data and declared.class_ is not None:
                    data["class"] = declared.class_
                if "claim_age_s" not in data and declared.claim_age is not None:
                    data["claim_age_s"] = declared.claim_age.total_seconds()
                if declared.role == "identifier":
                    data.setdefault("class", "label")
                    data.setdefault("identifies", True)
            try:
                found.append(EvidenceValue.model_validate(data))
            except ValidationError as exc:
                raise TurnstreamError(_bad_value(where, i, data, exc, type is not None)) from None
        return found

    def document(self, id: str, text: str) -> None:
        """A document the turn holds (quotes and anchors cite it)."""
        self.documents.append(Document(id=id, text=text))

    def anchor(self, start: int, end: int, document: str, quote: str | None = None) -> None:
        """Where the output cites a document (code points of the output, end exclusive)."""
        self.anchors.append(Anchor(start=start, end=end, document=document, quote=quote))

    def evidence(self) -> Evidence:
        """Everything the turn saw, as the claim check reads it."""
        return Evidence(
            calls=[c.evidence for c in self.calls],
            reads=list(self.reads),
            documents=list(self.documents),
            anchors=list(self.anchors),
        )

    # ----------------------------------------------------------------- the rest

    def interact(self, interaction: Mapping[str, Any]) -> dict[str, Any]:
        """Record an interaction (docs/wire.md); returns it as it goes in the record.

        A ``presented`` without ``exposure_id`` gets a new UUIDv7 (minted at delivery)
        and, without ``delivered_at``, the conversation's now: read them from the
        returned dict to sign the cards' tokens. Raises ``InvalidItem``-like
        ``TurnstreamError`` naming the field of a bad interaction, at the call.
        """
        data = dict(interaction)
        if data.get("kind") == "presented":
            if not data.get("exposure_id"):
                data["exposure_id"] = uuid7()
            data.setdefault("delivered_at", _iso(self.conversation.now()))
        try:
            model = _INTERACTION.validate_python(data)
        except ValidationError as exc:
            problem = f"interact: {interaction_problems(exc)}"
            self.invalid.append(problem)
            raise TurnstreamError(problem + _REFUSED) from None
        wire = model.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.interactions.append(wire)
        return wire

    def cite_block(self, block: Mapping[str, Any]) -> None:
        """The constraints block this turn uses (``POST /v1/constraints``'s answer): bound
        tools render it into their calls, and the record carries its ``version`` as
        ``constraints_version``; a block served to a person in an experiment's arm names
        it, and the record does too (unless the turn names its own ``experiment``)."""
        if not isinstance(block.get("version"), str):
            raise TurnstreamError("cite_block: the block has no version (is it a block?)")
        self.block = block
        served = block.get("experiment")
        if self.experiment is None and isinstance(served, Mapping):
            self.experiment = {"id": served["id"], "arm": served["arm"]}

    def measure(
        self,
        tool: str,
        *,
        sent: int,
        results_checked: int,
        violations: int,
        unverifiable: int,
        relaxed: bool = False,
    ) -> ConstraintMeasurement:
        """Record one tool call measured against the hard constraints sent to it."""
        try:
            measurement = ConstraintMeasurement(
                tool=tool,
                sent=sent,
                results_checked=results_checked,
                violations=violations,
                unverifiable=unverifiable,
                relaxed=relaxed,
            )
        except ValueError as exc:
            raise TurnstreamError(f"measure: {exc}") from None
        self.measurements.append(measurement)
        return measurement

    def say(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        language: Language | None = None,
    ) -> None:
        """The agent's output of the turn (``conversation.agent(reply)`` calls this)."""
        if self.output is not None:
            raise TurnstreamError("one output per turn: start a new turn for the next one")
        self.output = Output(text, context or self.context, immutable, language or self.language)


#: A value of a state read: a scalar, a list of them (a field of many values), or unknown.
_STATE_VALUE = TypeAdapter(Scalar | list[Scalar] | None)


def _state_values(
    values: Iterable[EvidenceValue | Mapping[str, Any]],
) -> list[EvidenceValue | Mapping[str, Any]]:
    """``record_read``'s values, each checked to be a value of a state: a mapping (or an
    :class:`EvidenceValue`) with a ``field`` and a ``value``. Raises
    :class:`TurnstreamError` naming the first that is not."""
    if isinstance(values, Mapping | str | bytes):
        raise TurnstreamError(
            "record_read: values: a list of {field, value, ...}, one per field read, "
            f"not a {type(values).__name__}"
        )
    given = list(values)
    for i, value in enumerate(given):
        if isinstance(value, EvidenceValue):
            continue
        if not isinstance(value, Mapping):
            raise TurnstreamError(
                f"record_read: values.{i}: a mapping with field and value, "
                f"not a {type(value).__name__}"
            )
        if not isinstance(value.get("field"), str) or "value" not in value:
            raise TurnstreamError(f"record_read: values.{i}: needs a field (text) and a value")
    return given


def _check_state_value(where: str, i: int, data: Mapping[str, Any]) -> None:
    """Raise :class:`TurnstreamError` unless ``data``'s value, of a field that is state
    and no evidence (a stock flag, the sizes in stock), is a text, a number, a flag, a
    list of them or ``None``."""
    try:
        _STATE_VALUE.validate_python(data.get("value"))
    except ValidationError:
        raise TurnstreamError(
            f"{where}: values.{i} (field {data.get('field')!r}): value: a text, a number, "
            f"a flag, a list of them or None, not a {type(data.get('value')).__name__}"
        ) from None
