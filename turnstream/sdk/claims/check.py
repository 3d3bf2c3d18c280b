"""The check: an output against the contract and the turn's evidence, as claim records.

``evaluate`` is the pure core (the text, its numbers, the evidence and the time in; records
and the edits the actions call for out). ``Claims`` binds it to a contract and an agent and
adds the guard (``turnstream.sdk.claims.guard``) with its time budgets.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from operator import attrgetter
from typing import TYPE_CHECKING

from turnstream.sdk.claims.actions import (
    apply_actions,
    decide,
    record_action,
    rewrite_text,
    unequivocal,
)
from turnstream.sdk.claims.contract import INTERNAL_TEXT, Contract, InternalText, Language
from turnstream.sdk.claims.detect import Candidate, Detector, NumberMention
from turnstream.sdk.claims.evidence import Evidence, StateRead
from turnstream.sdk.claims.internal_text import find_repeats
from turnstream.sdk.claims.invisible import Visible, bidi_around, visible
from turnstream.sdk.claims.normalize import reading
from turnstream.sdk.claims.quotes import quoted_spans
from turnstream.sdk.claims.records import STANDING, ClaimRecord
from turnstream.sdk.claims.results import Evaluation, Guarded
from turnstream.sdk.claims.sentences import sentence_spans
from turnstream.sdk.claims.verdicts import Judgement, TurnFacts, judge

if TYPE_CHECKING:
    from turnstream.sdk.claims.guard import GuardStream

__all__ = ["Claims", "Evaluation", "Guarded", "NumberReader", "Resolver", "evaluate"]

NumberReader = Callable[[str, Language], Sequence[NumberMention]]
#: Re-reads a value not safe to claim: the claim and the evidence in, a fresh read (or None).
Resolver = Callable[[ClaimRecord, Evidence], StateRead | None]


def _passage(cand: Candidate) -> tuple[int, int]:
    # A number or a citation gives way alone; a term of the trade or a section, with its
    # sentence (the sentence makes no sense without it).
    if cand.kind in ("number", "pattern"):
        return cand.start, cand.end
    return cand.sentence


def evaluate(
    contract: Contract,
    detector: Detector,
    text: str,
    lang: Language,
    mentions: Sequence[NumberMention],
    *,
    agent: str | None,
    context: str | None,
    immutable: bool,
    evidence: Evidence,
    now: datetime,
    internal: frozenset[str] = frozenset(),
    bidi: Sequence[int] = (),
) -> Evaluation:
    """Detect, judge and decide every claim of ``text`` (pure). ``bidi``: the offsets where
    a bidirectional control stood (``invisible``): no claim of their lines stands."""
    mutable = contract.is_mutable(context, immutable)
    sentences = sentence_spans(text, lang)
    # A reader's mentions come sorted, a custom reader's may not (the facts bisect them).
    ordered = sorted(mentions, key=attrgetter("start"))
    facts = TurnFacts(
        text, sentences, quoted_spans(text), evidence, evidence.values(), now, mentions=ordered
    )
    records: list[ClaimRecord] = []
    edits: list[tuple[int, int, str]] = []
    discarded: list[int] = []
    redacted: list[tuple[int, int]] = []
    if internal:
        section = contract.internal_text or InternalText()
        n = section.n
        for start, end in find_repeats(text, internal, n):
            redacted.append((start, end))
            records.append(
                ClaimRecord(
                    INTERNAL_TEXT,
                    None,
                    "model",
                    None,
                    (start, end),
                    None,  # never the redacted text
                    "internal_text_found",
                    "block",
                    {"kind": "internal_text", "n": n},
                )
            )
            edits.append((start, end, section.replace_with))
    for cand in detector.detect(text, sentences, mentions, agent):
        if any(s < cand.end and cand.start < e for s, e in redacted):
            continue  # the passage is redacted: what it claimed never leaves
        j = judge(facts, cand)
        if j.verdict in STANDING and bidi_around(text, bidi, cand.start, cand.end):
            j = Judgement(j.nature, "mismatch", {"kind": "bidi_control"})
        action = decide(cand.category, j.verdict, context)
        rewrite_to = None
        if action == "rewrite_if_unequivocal":
            in_sentence = facts.mentions_in(cand.sentence)
            if cand.mention is not None and unequivocal(cand, j, mutable, in_sentence):
                assert j.fresh is not None
                rewrite_to = rewrite_text(cand.mention, j.fresh.item.value, lang)
            action = "rewrite_if_unequivocal" if rewrite_to is not None else "warn"
        record = ClaimRecord(
            cand.category.id,
            cand.cls,
            j.nature,
            cand.role,
            (cand.start, cand.end),
            cand.value if cand.kind != "section" else None,
            j.verdict,
            record_action(action),
            j.evidence,
            rewrite_to,
        )
        records.append(record)
        if record.action == "rewrite" and rewrite_to is not None:
            edits.append((cand.start, cand.end, rewrite_to))
        elif record.action == "block" and mutable:
            start, end = _passage(cand)
            edits.append((start, end, cand.category.replace_with or ""))
        elif record.action == "discard_anchor" and j.anchor is not None:
            discarded.append(j.anchor)
    records.sort(key=lambda r: (r.span[0], r.span[1]))
    return Evaluation(records, edits if mutable else [], mutable, sorted(set(discarded)))


def _shown_anchors(evidence: Evidence, shown: Visible) -> Evidence:
    """The evidence with its anchors' offsets on the text as shown (invisible ones out)."""
    if shown.where is None or not evidence.anchors:
        return evidence
    anchors = [
        a.model_copy(update={"start": shown.offset(a.start), "end": shown.offset(a.end)})
        for a in evidence.anchors
    ]
    return evidence.model_copy(update={"anchors": anchors})


def _as_written(evaluation: Evaluation, shown: Visible) -> Evaluation:
    """An evaluation of the text as shown, its spans and edits on the output as written."""
    if shown.where is None:
        return evaluation
    return Evaluation(
        [replace(r, span=shown.original(*r.span)) for r in evaluation.records],
        [(*shown.original(s, e), new) for s, e, new in evaluation.edits],
        evaluation.mutable,
        evaluation.discarded_anchors,
    )


def _default_reader() -> NumberReader:
    from turnstream.sdk.claims.numbers import read_numbers

    return read_numbers


class Claims:
    """A claim contract bound to an agent: ``check`` gives verdicts, ``guard*`` act on them.

    ``reader`` reads the numbers (default: the SDK's reader); ``clock`` (monotonic seconds)
    measures the guard's budgets; ``now`` gives the time of freshness when the call does
    not; ``verify_claim`` may re-read a value not safe to claim (within 300 ms).
    """

    def __init__(
        self,
        contract: Contract,
        agent: str | None = None,
        *,
        reader: NumberReader | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        verify_claim: Resolver | None = None,
        prompt_fingerprints: Iterable[str] = (),
    ) -> None:
        self.contract = contract
        self.agent = agent
        self.detector = Detector(contract)
        self.reader = reader or _default_reader()
        self.clock = clock
        self.now = now
        self.verify_claim = verify_claim
        known = set(prompt_fingerprints)
        if contract.internal_text is not None:
            known.update(contract.internal_text.fingerprints)
        self.internal = frozenset(known)

    def language(self, language: Language | None) -> Language:
        """The output's language: the given one, or the contract's first."""
        return language or self.contract.languages[0]

    def evaluate(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        evidence: Evidence | None = None,
        language: Language | None = None,
        now: datetime | None = None,
    ) -> Evaluation:
        """Every claim of ``text`` and what the actions would do (nothing is done). The
        text is read in its :func:`~turnstream.sdk.claims.normalize.reading` (digits of any
        script as ASCII, look-alike letters as Latin, offsets kept) without its invisible
        characters (``invisible``): the spans and edits apply to ``text`` as given."""
        lang = self.language(language)
        shown = visible(reading(text))
        evaluation = evaluate(
            self.contract,
            self.detector,
            shown.text,
            lang,
            self.reader(shown.text, lang),
            agent=self.agent,
            context=context,
            immutable=immutable or context in self.contract.outputs.immutable,
            evidence=_shown_anchors(evidence or Evidence(), shown),
            now=now or self.now(),
            internal=self.internal,
            bidi=shown.bidi,
        )
        return _as_written(evaluation, shown)

    def check(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        evidence: Evidence | None = None,
        language: Language | None = None,
        now: datetime | None = None,
    ) -> list[ClaimRecord]:
        """The claims of ``text`` with their verdicts; each names the action the contract
        calls for, and none is taken."""
        return self.evaluate(
            text,
            context=context,
            immutable=immutable,
            evidence=evidence,
            language=language,
            now=now,
        ).records

    def guard_text(
        self,
        text: str,
        *,
        context: str | None = None,
        immutable: bool = False,
        evidence: Evidence | None = None,
        language: Language | None = None,
        now: datetime | None = None,
    ) -> Guarded:
        """``text`` as the actions say (blocks, rewrites, redactions), within the budget."""
        from turnstream.sdk.claims.guard import guard_text

        return guard_text(
            self, text, context=context, immutable=immutable, evidence=evidence or Evidence(),
            language=language, now=now,
        )  # fmt: skip

    def guard(
        self,
        chunks: Iterable[str],
        *,
        context: str | None = None,
        evidence: Evidence | None = None,
        language: Language | None = None,
        now: datetime | None = None,
    ) -> GuardStream:
        """Streamed chunks, guarded sentence by sentence; ``.result`` once exhausted."""
        from turnstream.sdk.claims.guard import GuardStream

        return GuardStream(
            self, chunks, context=context, evidence=evidence or Evidence(), language=language,
            now=now,
        )  # fmt: skip

    def apply(self, text: str, evaluation: Evaluation) -> Guarded:
        """The output after an evaluation's actions (no budget)."""
        applied = apply_actions(text, evaluation.records, evaluation.edits, evaluation.mutable)
        return Guarded(
            applied.text,
            evaluation.records,
            applied.acted,
            False,
            applied.held_for_review,
            evaluation.discarded_anchors,
        )
