"""The guard that acts, within its time budgets.

- ``guard_text``: the whole output is one message, held at most 300 ms (the check and any
  re-reads by the resolver); past that it goes as it is, marked ``guard_budget_exceeded``.
- ``GuardStream``: streamed chunks go out sentence by sentence (roles, terms and quotes are
  read within a sentence, so a sentence is the unit a claim needs); the sentence being
  written is the candidate, held until the next one starts, at most 150 ms; the message's
  checks and re-reads together take at most 300 ms, after which the rest goes as it is. An
  immutable output is checked whole at the end (a block sends all of it to a person, so no
  part of it may leave before).
- The resolver (``verify_claim``) re-reads a value whose claim does not stand on value
  evidence, each call within 300 ms and within what is left of the message's budget; it runs
  on a worker thread so that a slow one is abandoned on time.

Budgets are measured with the ``Claims`` clock (injectable, so tests are deterministic).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import replace
from datetime import datetime

from turnstream.sdk.claims.contract import Language
from turnstream.sdk.claims.evidence import Evidence
from turnstream.sdk.claims.records import ClaimRecord

# What the guard needs of check.Claims, not check itself: check calls the guard.
from turnstream.sdk.claims.results import Checker as Claims
from turnstream.sdk.claims.results import Evaluation, Guarded
from turnstream.sdk.claims.sentences import sentence_spans

__all__ = [
    "CANDIDATE_BUDGET_S",
    "MESSAGE_BUDGET_S",
    "RESOLVER_BUDGET_S",
    "GuardStream",
    "guard_text",
]

CANDIDATE_BUDGET_S = 0.150
MESSAGE_BUDGET_S = 0.300
RESOLVER_BUDGET_S = 0.300
#: Verdicts of value evidence that a fresh read may change.
_RESOLVABLE = frozenset({"stale", "mismatch", "no_evidence", "unsupported", "gap_not_stated"})
_log = logging.getLogger(__name__)
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        # Two threads: one abandoned slow call does not stall the next turn's.
        _pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="verify_claim")
    return _pool


def unguarded(records: Iterable[ClaimRecord]) -> list[ClaimRecord]:
    """Records of text that went out as it was: a block or rewrite became a mark (warn)."""
    return [r.with_action("warn") if r.action in ("block", "rewrite") else r for r in records]


def _resolve(
    claims: Claims,
    records: list[ClaimRecord],
    evidence: Evidence,
    started: float,
) -> tuple[Evidence | None, bool]:
    """Fresh reads for the claims that may need them: (new evidence or None, over budget)."""
    verify = claims.verify_claim
    if verify is None:
        return None, False
    kinds = {c.id: c.evidence.kind for c in claims.contract.categories}
    wanted = [r for r in records if r.verdict in _RESOLVABLE and kinds.get(r.category) == "value"]
    changed = False
    for record in wanted:
        left = MESSAGE_BUDGET_S - (claims.clock() - started)
        if left <= 0:
            return None, True
        t0 = claims.clock()
        future = _executor().submit(verify, record, evidence)
        try:
            read = future.result(timeout=min(RESOLVER_BUDGET_S, left))
        except FutureTimeout:
            return None, True
        except Exception:  # the resolver is the producer's code: its failure keeps the verdict
            _log.warning("verify_claim failed for a %s claim", record.category, exc_info=True)
            continue
        took = claims.clock() - t0
        if took > RESOLVER_BUDGET_S or claims.clock() - started > MESSAGE_BUDGET_S:
            return None, True
        if read is not None:
            evidence = evidence.with_read(read)
            changed = True
    return (evidence if changed else None), False


def _evaluate_resolved(
    claims: Claims,
    text: str,
    *,
    context: str | None,
    immutable: bool,
    evidence: Evidence,
    language: Language | None,
    now: datetime,
    started: float,
) -> tuple[Evaluation, bool]:
    kw = {"context": context, "immutable": immutable, "language": language, "now": now}
    evaluation = claims.evaluate(text, evidence=evidence, **kw)  # type: ignore[arg-type]
    fresh, over = _resolve(claims, evaluation.records, evidence, started)
    if fresh is not None:
        evaluation = claims.evaluate(text, evidence=fresh, **kw)  # type: ignore[arg-type]
    over = over or claims.clock() - started > MESSAGE_BUDGET_S
    return evaluation, over


def guard_text(
    claims: Claims,
    text: str,
    *,
    context: str | None,
    immutable: bool,
    evidence: Evidence,
    language: Language | None,
    now: datetime | None,
) -> Guarded:
    """One whole output, guarded within the message budget."""
    started = claims.clock()
    evaluation, over = _evaluate_resolved(
        claims, text, context=context, immutable=immutable, evidence=evidence,
        language=language, now=now or claims.now(), started=started,
    )  # fmt: skip
    if over:
        return Guarded(text, unguarded(evaluation.records), False, True)
    return claims.apply(text, evaluation)


class GuardStream(Iterator[str]):
    """Iterate to get the guarded chunks; ``result`` holds the claims once exhausted."""

    def __init__(
        self,
        claims: Claims,
        chunks: Iterable[str],
        *,
        context: str | None,
        evidence: Evidence,
        language: Language | None,
        now: datetime | None,
    ) -> None:
        self.claims = claims
        self.context = context
        self.evidence = evidence
        self.language = claims.language(language)
        self.now = now or claims.now()
        self.result: Guarded | None = None
        self._out = self._run(iter(chunks))

    def __next__(self) -> str:
        return next(self._out)

    def _run(self, chunks: Iterator[str]) -> Iterator[str]:
        if not self.claims.contract.is_mutable(self.context):
            text = "".join(chunks)
            self.result = guard_text(
                self.claims, text, context=self.context, immutable=False,
                evidence=self.evidence, language=self.language, now=self.now,
            )  # fmt: skip
            if not self.result.held_for_review:
                yield self.result.text
            return
        clock = self.claims.clock
        text, released, spent = "", 0, 0.0
        held_since: float | None = None
        checked: list[ClaimRecord] = []
        loose: list[tuple[int, int]] = []  # released as they were, unchecked
        out: list[str] = []
        acted = over = spent_all = False
        for chunk in chunks:
            if held_since is None:
                held_since = clock()
            text += chunk
            if spent_all:
                loose.append((released, len(text)))
                out.append(text[released:])
                yield text[released:]
                released, held_since = len(text), None
                continue
            spans = sentence_spans(text[released:], self.language)
            cut = released + spans[-1][0] if len(spans) > 1 else released
            if cut > released:
                t0 = clock()
                piece, records, piece_acted, piece_over = self._check(text, released, cut, spent)
                spent += clock() - t0
                if piece_over or clock() - held_since > CANDIDATE_BUDGET_S:
                    over = True
                    piece, records, piece_acted = text[released:cut], [], False
                    loose.append((released, cut))
                checked.extend(records)
                acted = acted or piece_acted
                out.append(piece)
                yield piece
                released, held_since = cut, (clock() if cut < len(text) else None)
                spent_all = spent > MESSAGE_BUDGET_S
            elif clock() - held_since > CANDIDATE_BUDGET_S:
                over = True
                loose.append((released, len(text)))
                out.append(text[released:])
                yield text[released:]
                released, held_since = len(text), None
        if released < len(text):
            t0 = clock()
            piece, records, piece_acted, piece_over = self._check(text, released, len(text), spent)
            if piece_over or spent_all:
                over = True
                piece, records, piece_acted = text[released:], [], False
                loose.append((released, len(text)))
            spent += clock() - t0
            checked.extend(records)
            acted = acted or piece_acted
            out.append(piece)
            yield piece
        over = over or spent_all
        if loose:
            # The claims of what went out unchecked are still recorded (marked, not acted on).
            whole = self.claims.evaluate(
                text, context=self.context, evidence=self.evidence, language=self.language,
                now=self.now,
            )  # fmt: skip
            checked.extend(
                unguarded(r for r in whole.records if any(s <= r.span[0] < e for s, e in loose))
            )
        checked.sort(key=lambda r: (r.span[0], r.span[1]))
        self.result = Guarded("".join(out), checked, acted, over)

    def _check(
        self, text: str, start: int, end: int, spent: float
    ) -> tuple[str, list[ClaimRecord], bool, bool]:
        """The guarded text of ``text[start:end]`` and its claims.

        Only the piece and the sentence before it are read (claims live within a sentence;
        the sentence before lets a repeat of internal text that straddles them be found):
        reading the whole prefix again for each sentence made a 2 kB stream cost ~25 checks
        of up to 2 kB each, against a 300 ms budget for the message.
        """
        ctx = self._context_start(text, start)
        evidence = _shifted(self.evidence, ctx, end)
        started = self.claims.clock() - spent  # the message's budget is shared
        evaluation, over = _evaluate_resolved(
            self.claims, text[ctx:end], context=self.context, immutable=False,
            evidence=evidence, language=self.language, now=self.now, started=started,
        )  # fmt: skip
        records = [
            replace(r, span=(r.span[0] + ctx, r.span[1] + ctx))
            for r in evaluation.records
            if r.span[0] + ctx >= start
        ]
        edits = [(s + ctx - start, e + ctx - start, new) for s, e, new in evaluation.edits
                 if s + ctx >= start]  # fmt: skip
        piece = text[start:end]
        kept: list[tuple[int, int, str]] = []
        for s, e, new in sorted(edits, key=lambda t: (t[0], -t[1])):
            if not kept or s >= kept[-1][1]:
                kept.append((s, e, new))
        for s, e, new in reversed(kept):
            piece = piece[:s] + new + piece[e:]
        return piece, records, bool(kept), over

    def _context_start(self, text: str, start: int) -> int:
        if start == 0:
            return 0
        before = sentence_spans(text[max(0, start - 600) : start], self.language)
        return max(0, start - 600) + before[-1][0] if before else start


def _shifted(evidence: Evidence, start: int, end: int) -> Evidence:
    """The evidence with its anchors moved to ``text[start:end]`` (those over it only)."""
    if not evidence.anchors:
        return evidence
    anchors = [
        a.model_copy(update={"start": max(a.start, start) - start, "end": min(a.end, end) - start})
        for a in evidence.anchors
        if a.start < end and a.end > start
    ]
    return evidence.model_copy(update={"anchors": anchors})
