"""A conversation of an agent with one person, turn by turn (``docs/sdk.md``).

```python
conversation = Conversation(space="acme", source="whatsapp", agent="sales-assistant",
                            handle={"type": "phone_e164", "value": "+5511900005678"},
                            conversation_id="wa-8812", contract=contract, producer=producer)
async with conversation.turn(build="sales@2026.11") as frame:     # or `with` (sync agent)
    frame.record_call("search_products", [{"object": "item_variant:acme:991",
                      "field": "price_sale", "class": "money", "value": 199.9}])
    conversation.agent(reply)
```

On leaving the block the turn's output is checked in count mode against the evidence the
frame collected, and ONE turn record goes out: through ``recorder`` (any callable taking
the record: a list's ``append`` in tests and in the sample day) and/or ``producer``.
``async with`` awaits the producer; a sync ``with`` hands the publish to the producer's
event loop running in another thread and waits for it (inside that loop, use
``async with``). A body that raises still publishes what the turn collected (a list that
was shown was shown), then the exception goes on; a cancelled task or an interrupt
publishes nothing (``frame.record`` still holds the record, with the same idempotency key).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol

from pydantic import SecretStr

from turnstream.config import Settings
from turnstream.core.constraints import BindingsDocument, SdkProfile, ToolBinding, parse_profile
from turnstream.core.exposure_tokens import mint_token
from turnstream.errors import TurnstreamError
from turnstream.models import parse_item
from turnstream.models.object_types import ObjectTypes, parse_types
from turnstream.sdk.claims import (
    ClaimRecord,
    Claims,
    Contract,
    Evidence,
    Guarded,
    GuardStream,
)
from turnstream.sdk.claims.check import NumberReader, Resolver
from turnstream.sdk.claims.contract import ContractError, Language, parse_contract
from turnstream.sdk.claims.guard import unguarded
from turnstream.sdk.exposure import key_bytes, uuid7
from turnstream.sdk.frame import TurnFrame, activate, current_frame, deactivate
from turnstream.sdk.turn_record import build_turn_record


class Publisher(Protocol):
    """What the conversation needs of ``turnstream.adapters.kafka.producer.Producer`` (started): its
    ``publish``, the event loop it runs on, and its settings (for the space's keys)."""

    loop: asyncio.AbstractEventLoop | None
    settings: Settings | None

    def publish(self, item: dict[str, Any]) -> Awaitable[Any]: ...


__all__ = ["Conversation", "ConversationClaims", "Publisher", "Recorder", "TurnScope"]

#: Takes each finished turn record (may return an awaitable under ``async with``).
Recorder = Callable[[dict[str, Any]], object]
_log = logging.getLogger(__name__)
#: How long a sync ``with`` waits for the producer's acknowledgement.
_PUBLISH_TIMEOUT_S = 30.0


def _utc_now() -> datetime:
    return datetime.now(UTC)


_NO_CONTRACT = (
    "the conversation has no claim contract: pass contract=load_contract(PATH), or "
    "profile= a profile whose space serves one ([spaces.SPACE] claims_contract)"
)


def _served_contract(profile: SdkProfile) -> Contract | None:
    """The profile's claim contract (its corpus only by version), or None when the space
    serves none; a served version without its contract is an error, never a silent
    turn without claims."""
    if profile.claim_contract is None:
        if profile.contract_version is not None:
            raise TurnstreamError(
                f"sdk profile: contract_version {profile.contract_version!r} without "
                "claim_contract: the server did not serve the contract"
            )
        return None
    try:
        return parse_contract(profile.claim_contract)
    except ContractError as exc:
        raise TurnstreamError(f"sdk profile: claim_contract: {exc}") from None


def _served_types(profile: SdkProfile) -> ObjectTypes:
    """The profile's object types document."""
    try:
        return parse_types(profile.types)
    except ValueError as exc:
        raise TurnstreamError(f"sdk profile: types: {exc}") from None


class ConversationClaims:
    """The claim contract bound to the turn in progress: its evidence, language and context.

    Outside a turn the evidence is empty. ``guard_text`` and ``guard`` remember what they
    let out, and the turn record then cites their claims and ``guard_acted`` /
    ``guard_budget_exceeded`` instead of a count-mode check.
    """

    def __init__(self, conversation: Conversation) -> None:
        self._conversation = conversation

    @property
    def bound(self) -> Claims:
        """The ``Claims`` the conversation checks with."""
        claims = self._conversation._claims
        if claims is None:
            raise TurnstreamError(_NO_CONTRACT)
        return claims

    def _frame(self) -> TurnFrame | None:
        frame = current_frame()
        return frame if frame is not None and frame.conversation is self._conversation else None

    def _defaults(
        self, context: str | None, language: Language | None
    ) -> tuple[Evidence, str | None, Language | None]:
        frame = self._frame()
        if frame is None:
            conv = self._conversation
            return Evidence(), context or conv.context, language or conv.language
        return frame.evidence(), context or frame.context, language or frame.language

    def check(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        language: Language | None = None,
    ) -> list[ClaimRecord]:
        """The claims of ``text`` with their verdicts against the turn's evidence (no action)."""
        evidence, context, language = self._defaults(context, language)
        return self.bound.check(
            text, context=context, immutable=immutable, evidence=evidence, language=language,
            now=self._conversation.now(),
        )  # fmt: skip

    def guard_text(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        language: Language | None = None,
    ) -> Guarded:
        """``text`` as the contract's actions say, within the 300 ms budget."""
        evidence, context, language = self._defaults(context, language)
        guarded = self.bound.guard_text(
            text, context=context, immutable=immutable, evidence=evidence, language=language,
            now=self._conversation.now(),
        )  # fmt: skip
        frame = self._frame()
        if frame is not None:
            frame.guarded = guarded
        return guarded

    def guard(
        self,
        chunks: Iterable[str],
        *,
        context: str | None = None,
        language: Language | None = None,
    ) -> GuardStream:
        """Streamed chunks guarded sentence by sentence; ``.result`` once exhausted."""
        evidence, context, language = self._defaults(context, language)
        stream = self.bound.guard(
            chunks, context=context, evidence=evidence, language=language,
            now=self._conversation.now(),
        )  # fmt: skip
        frame = self._frame()
        if frame is not None:
            frame.stream = stream
        return stream


class TurnScope:
    """``conversation.turn()``: a context manager, sync (``with``) or async (``async with``)."""

    def __init__(self, conversation: Conversation, frame: TurnFrame) -> None:
        self.conversation = conversation
        self.frame = frame
        self._token: Any = None

    def _enter(self) -> TurnFrame:
        if self._token is not None:
            raise TurnstreamError("a turn is entered once")
        self._token = activate(self.frame)
        return self.frame

    def __enter__(self) -> TurnFrame:
        """A sync ``with``: refused at once (before the body collects anything) on the
        producer's own event loop, where waiting for the broker would block the loop that
        must deliver; nothing is ever collected and then dropped."""
        producer = self.conversation.producer
        loop = None if producer is None else producer.loop
        if producer is not None and (loop is None or loop.is_closed()):
            raise TurnstreamError(
                "the producer is not started: a sync agent starts it with "
                "`with SyncProducer(lambda: Producer(settings)) as producer:` "
                "(turnstream.sdk.SyncProducer) before its turns"
            )
        if loop is not None:
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is loop:
                raise TurnstreamError(
                    "a sync `with conversation.turn()` cannot wait for the producer on its "
                    "own event loop: use `async with conversation.turn()` in async code, or "
                    "turnstream.sdk.SyncProducer (its own loop thread) in sync code"
                )
        return self._enter()

    def _leave(self, exc_type: type[BaseException] | None) -> dict[str, Any] | None:
        """The turn's record, or None when it is not to be published: an interrupt or a
        cancelled task (``frame.record`` keeps it all the same). A turn with an invalid
        interaction is refused whole: nothing is published, and when the body went on
        (it caught the error) leaving the turn raises it again."""
        if self.frame.invalid:
            deactivate(self._token)
            if exc_type is None:
                raise TurnstreamError(
                    f"turn {self.frame.turn_id} refused whole, not published: "
                    + "; ".join(self.frame.invalid)
                )
            return None
        try:
            record = self.conversation._finish(self.frame)
        finally:
            deactivate(self._token)
        return record if exc_type is None or issubclass(exc_type, Exception) else None

    def _not_published(self, exc: BaseException | None) -> None:
        """Called while a publish's error is handled: it goes on when the body went well;
        when the body raised, the body's error goes on and this one is logged."""
        if exc is None:
            raise  # the publish's error, which the caller is handling
        _log.exception(
            "turn %s raised, and its record could not be published (frame.record keeps it)",
            self.frame.turn_id,
        )

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        record = self._leave(exc_type)
        if record is not None:
            try:
                self.conversation._deliver(record)
            except Exception:
                self._not_published(exc)

    async def __aenter__(self) -> TurnFrame:
        return self._enter()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        record = self._leave(exc_type)
        if record is not None:
            try:
                await self.conversation._deliver_async(record)
            except Exception:
                self._not_published(exc)


class Conversation:
    """An agent's conversation with one person; ``turn()`` records and publishes each turn.

    ``handle`` (``{"type": ..., "value": ...}``) or ``profile_id`` says who the person is.
    ``contract`` turns the claim check on (none: no claims, no ``contract_version``).
    ``producer`` (started, ``turnstream.adapters.kafka.producer.Producer``) and/or ``recorder``
    receive
    each record. ``exposure_key`` signs tokens; by default the first of the space's
    ``exposure_keys`` in ``settings`` (or the producer's settings). ``now`` is the clock of
    turn times and freshness, ``clock`` (monotonic seconds) the guard's budgets; both are
    injectable (the sample day and tests pass their own). ``prompt_fingerprints``
    (``turnstream.sdk.claims.fingerprints(prompt)``) and ``reader`` go to ``Claims``.
    ``types`` (``turnstream.models.object_types.load_types(path)``, the space's object
    types document) gives values recorded with ``type=`` their class and claim age.
    ``profile`` (``GET /v1/sdk/profile``'s answer, ``WorkerClient.sdk_profile``) is all
    an agent needs: its claim contract (unless ``contract=``), its object types (unless
    ``types=``) and its tool bindings (unless ``tool_bindings=``), which bind the tools that
    have no binding in code (``turnstream.sdk.tool``). With a contract, a bound tool whose
    results' type the object types do not declare is refused before it is called (its
    prices would be ``unsupported``), unless ``tool_evidence=False`` says the evidence is
    recorded by hand.
    """

    def __init__(
        self,
        *,
        space: str,
        source: str,
        agent: str,
        handle: Mapping[str, str] | None = None,
        profile_id: str | None = None,
        conversation_id: str | None = None,
        session_id: str | None = None,
        contract: Contract | None = None,
        producer: Publisher | None = None,
        recorder: Recorder | None = None,
        exposure_key: str | bytes | SecretStr | None = None,
        settings: Settings | None = None,
        context: str | None = None,
        language: Language | None = None,
        build: str | None = None,
        experiment: Mapping[str, str] | None = None,
        now: Callable[[], datetime] = _utc_now,
        prompt_fingerprints: Iterable[str] = (),
        reader: NumberReader | None = None,
        clock: Callable[[], float] = time.monotonic,
        types: ObjectTypes | None = None,
        profile: SdkProfile | Mapping[str, Any] | None = None,
        tool_bindings: BindingsDocument | Iterable[ToolBinding] | None = None,
        tool_evidence: bool = True,
    ) -> None:
        if (handle is None) == (profile_id is None):
            raise TurnstreamError("a conversation needs exactly one of handle and profile_id")
        self.space = space
        self.source = source
        self.agent_name = agent
        self.identity: dict[str, Any] = (
            {"handle": dict(handle)} if handle is not None else {"profile_id": profile_id}
        )
        self.conversation_id = conversation_id or uuid7()
        self.session_id = session_id
        self.profile = parse_profile(profile) if profile is not None else None
        if contract is None and self.profile is not None:
            contract = _served_contract(self.profile)
        if types is None and self.profile is not None and self.profile.types is not None:
            types = _served_types(self.profile)
        self.contract = contract
        self.producer = producer
        self.recorder = recorder
        self.context = context
        self.language = language
        self.build = build
        self.experiment = experiment
        self.now = now
        self.types = types
        #: Bound tools' results are the claims' evidence (their type must be declared);
        #: False when the turn's evidence is recorded by hand (``frame.record_call``).
        self.tool_evidence = tool_evidence
        #: The bindings tools without one in code use: ``tool_bindings`` if given, else
        #: the profile's (served for this conversation's source).
        self.tool_bindings = (
            BindingsDocument(bindings=tuple(tool_bindings))
            if tool_bindings is not None and not isinstance(tool_bindings, BindingsDocument)
            else tool_bindings
        )
        if self.tool_bindings is None and self.profile is not None:
            self.tool_bindings = self.profile.bindings
        self._exposure_key = self._key(exposure_key, settings)
        self._claims = (
            Claims(
                contract,
                agent,
                reader=reader,
                clock=clock,
                now=now,
                prompt_fingerprints=prompt_fingerprints,
            )
            if contract is not None
            else None
        )
        self.claims = ConversationClaims(self)
        self._turns = 0

    def _key(self, key: str | bytes | SecretStr | None, settings: Settings | None) -> bytes | None:
        if key is not None:
            return key_bytes(key)
        settings = settings or (self.producer.settings if self.producer is not None else None)
        space = settings.space(self.space) if settings is not None else None
        keys = space.token_keys() if space is not None else ()
        return keys[0] if keys else None

    # ----------------------------------------------------------------- the turn

    def turn(
        self,
        *,
        build: str | None = None,
        turn_id: str | None = None,
        at: datetime | None = None,
        language: Language | None = None,
        context: str | None = None,
        experiment: Mapping[str, str] | None = None,
    ) -> TurnScope:
        """A turn: ``with`` or ``async with`` it; the frame collects what happens in it.

        ``turn_id`` defaults to ``<conversation_id>-t<n>`` (n counts this conversation's
        turns from 1); ``at`` (the turn's time) to ``now()``.
        """
        self._turns += 1
        frame = TurnFrame(
            conversation=self,
            turn_id=turn_id or f"{self.conversation_id}-t{self._turns}",
            at=at or self.now(),
            build=build or self.build,
            language=language or self.language,
            context=context or self.context,
            experiment=experiment or self.experiment,
        )
        return TurnScope(self, frame)

    def agent(
        self,
        reply: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        language: Language | None = None,
    ) -> None:
        """The agent's output of the turn in progress (checked in count mode at its end)."""
        frame = current_frame()
        if frame is None or frame.conversation is not self:
            raise TurnstreamError("conversation.agent() is called inside conversation.turn()")
        frame.say(reply, context=context, immutable=immutable, language=language)

    def verify_claim(self, resolver: Resolver) -> Resolver:
        """Register the resolver that may re-read a value within 300 ms (usable as a
        decorator); it runs in ``claims.guard_text`` and ``claims.guard``."""
        if self._claims is None:
            raise TurnstreamError(_NO_CONTRACT)
        self._claims.verify_claim = resolver
        return resolver

    def exposure_token(self, exposure_id: str, pos: int) -> str:
        """The signed token of position ``pos`` of an exposure, for this space."""
        if self._exposure_key is None:
            raise TurnstreamError(
                f"no exposure key for space {self.space!r}: set [spaces.{self.space}] "
                "exposure_keys, or pass exposure_key="
            )
        return mint_token(self.space, exposure_id, pos, self._exposure_key)

    # ----------------------------------------------------------------- the record

    def _verdicts(self, frame: TurnFrame) -> tuple[list[ClaimRecord], bool, bool]:
        """The turn's claims and guard flags: the guard's when it let this output out,
        else a count-mode check (nothing was acted on: a block or rewrite is a warn, as
        when text goes out past the budget)."""
        if self._claims is None:
            return [], False, False
        guarded = frame.guarded
        if frame.stream is not None and frame.stream.result is not None:
            guarded = frame.stream.result
        out = frame.output
        if guarded is not None and (out is None or out.text == guarded.text):
            return list(guarded.claims), guarded.guard_acted, guarded.guard_budget_exceeded
        if out is None:
            return [], False, False
        records = self._claims.check(
            out.text, context=out.context, immutable=out.immutable, evidence=frame.evidence(),
            language=out.language, now=self.now(),
        )  # fmt: skip
        return unguarded(records), False, False

    def _language(self, frame: TurnFrame) -> Language | None:
        """The language the turn's output was read in: its own, the turn's, the
        conversation's, else the contract's first when there is an output to read."""
        out = frame.output
        language = (out.language if out is not None else None) or frame.language
        if language is None and out is not None and self._claims is not None:
            language = self._claims.language(None)
        return language

    def _finish(self, frame: TurnFrame) -> dict[str, Any]:
        claims, acted, over = self._verdicts(frame)
        record = build_turn_record(
            space_id=self.space,
            identity=self.identity,
            source=self.source,
            conversation_id=self.conversation_id,
            session_id=self.session_id,
            turn_id=frame.turn_id,
            agent=self.agent_name,
            at=frame.at,
            build=frame.build,
            contract_version=self.contract.version if self.contract is not None else None,
            claims=claims,
            guard_acted=acted,
            guard_budget_exceeded=over,
            interactions=frame.interactions,
            constraints=[m.model_dump(mode="json") for m in frame.measurements],
            experiment=frame.experiment,
            constraints_version=None if frame.block is None else frame.block["version"],
            language=self._language(frame),
        )
        parse_item(json.dumps(record).encode())  # a record the worker would refuse fails here
        frame.record = record
        return record

    def _deliver(self, record: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder(record)
        if self.producer is None:
            return
        loop = self.producer.loop
        if loop is None or loop.is_closed():
            raise TurnstreamError("the producer is not started: use `async with Producer(...)`")
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            raise TurnstreamError(
                "a sync `with conversation.turn()` cannot wait for the producer on its own "
                "event loop: use `async with conversation.turn()`"
            )
        future = asyncio.run_coroutine_threadsafe(self.producer.publish(record), loop)
        future.result(timeout=_PUBLISH_TIMEOUT_S)

    async def _deliver_async(self, record: dict[str, Any]) -> None:
        if self.recorder is not None:
            result = self.recorder(record)
            if inspect.isawaitable(result):
                await result
        if self.producer is not None:
            await self.producer.publish(record)
