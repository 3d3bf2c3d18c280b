"""Verdicts: a claim against the turn's evidence, by its nature and its category's evidence.

Order of the rules, for a claim found by a category:

1. inside quotation marks, the claim is ``quoted``: ``verbatim`` looks for the quoted passage
   in a document of the turn (``quoted_found`` / ``quoted_missing``); ``count``: not_checked;
2. a number whose roles tie: ``role_ambiguous`` (never approved);
3. by the category's evidence:
   - ``value``: the number is ``computed`` when the turn holds a value of its class with its
     role (any value of the class when it has none) or with its value; else ``model`` and
     ``unsupported``. A computed number (``check``) is ``matched`` by an equal value of its
     role (``same_role``) or class, ``mismatch`` when such values exist and none is equal,
     ``no_evidence`` when none exists, ``stale`` when every equal value is older than its
     claim age (``fresh_for: claim``), ``gap_not_stated`` when every equal value declares
     gaps the output does not state (``must_state_gaps``); ``count``: not_checked;
   - ``tool`` / ``tool_any``: ``no_evidence`` without a call of the tool; with one, the calls'
     values of the number's class (and role) must hold its value (``mismatch`` otherwise);
     a call without such values is the evidence (``matched``);
   - ``anchor``: the best anchor over the claim: ``anchored`` at the threshold or above (and
     ``mismatch`` when the quote's numbers are not the passage's), ``below_threshold``,
     ``source_missing`` (a document the turn does not hold), ``not_checked`` (no anchor).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from turnstream.sdk.claims.anchors import score_anchor
from turnstream.sdk.claims.binding import Named, ObjectNames
from turnstream.sdk.claims.bounds import failing, subject
from turnstream.sdk.claims.detect import Candidate, NumberMention
from turnstream.sdk.claims.evidence import Evidence, ProvenancedValue
from turnstream.sdk.claims.normalize import fold, normalize
from turnstream.sdk.claims.qualifiers import APPROXIMATE, THRESHOLD
from turnstream.sdk.claims.records import Nature, Verdict
from turnstream.sdk.claims.sameness import (
    CENT,
    approximately,
    mention_value_of,
    number_of,
    same_unit,
    same_value,
    same_value_items,
)
from turnstream.sdk.claims.unlisted import Unlisted

__all__ = ["Judgement", "TurnFacts", "judge"]


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What a verdict reads: the output, its sentences and quotations, the evidence, the time."""

    text: str
    sentences: Sequence[tuple[int, int]]
    quotes: Sequence[tuple[int, int]]
    evidence: Evidence
    values: Sequence[ProvenancedValue]
    now: datetime
    by_class: dict[str, list[ProvenancedValue]] = field(default_factory=dict)
    # Numeric values by (class, value to the cent): the equal ones of a number in one look-up
    # instead of a comparison with every value (12,300 comparisons for 60 outputs here).
    by_number: dict[tuple[str, float], list[tuple[int, ProvenancedValue]]] = field(
        default_factory=dict
    )
    #: The objects of the evidence by the words that name them (binding).
    objects: ObjectNames | None = None
    #: Every number the reader found in the text, by start (binding pairs a sentence's).
    mentions: Sequence[NumberMention] = ()
    _starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        object.__setattr__(self, "objects", ObjectNames.of(self.values))
        self._starts.extend(m.start for m in self.mentions)
        for i, v in enumerate(self.values):
            self.by_class.setdefault(v.item.class_, []).append(v)
            number = number_of(v.item.value)
            if number is not None:
                self.by_number.setdefault((v.item.class_, round(number, 2)), []).append((i, v))

    def mentions_in(self, sentence: tuple[int, int]) -> Sequence[NumberMention]:
        """The numbers of the sentence, in order (by bisection: a scan of all of them per
        price cost 0.1 ms an output)."""
        lo = bisect_left(self._starts, sentence[0])
        return self.mentions[lo : bisect_left(self._starts, sentence[1], lo)]

    def numbers_in(self, sentence: tuple[int, int], cls: str) -> list[tuple[int, int]]:
        """The spans of the sentence's numbers of class ``cls``, in order."""
        return [(m.start, m.end) for m in self.mentions_in(sentence) if m.cls == cls]

    def equal_values(self, m: NumberMention) -> list[ProvenancedValue]:
        """The values of the evidence equal to the number."""
        number = number_of(m.value) if not isinstance(m.value, str) else None
        if number is not None and m.cls == "money":
            keys = {round(number, 2), round(number + CENT, 2), round(number - CENT, 2)}
            near = sorted(
                {i: v for key in keys for i, v in self.by_number.get((m.cls, key), ())}.items()
            )
            return [v for _, v in near if same_value(m, v.item)]
        return [v for v in self.by_class.get(m.cls, ()) if same_value(m, v.item)]


@dataclass(frozen=True, slots=True)
class Judgement:
    """A claim's nature and verdict, with the evidence entry of its record."""

    nature: Nature
    verdict: Verdict
    evidence: dict[str, Any] | None = None
    #: For a stale copy of one field of one object: that field's fresh value in the turn.
    fresh: ProvenancedValue | None = None
    #: The anchor (index into the turn's anchors) the verdict is about.
    anchor: int | None = None


def _inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    return next((s for s in spans if s[0] <= start and end <= s[1]), None)


def _gaps_stated(facts: TurnFacts, cand: Candidate, gaps: Sequence[str]) -> bool:
    # Said with it: in the number's sentence or the one after.
    i = facts.sentences.index(cand.sentence) if cand.sentence in facts.sentences else -1
    end = facts.sentences[i + 1][1] if 0 <= i < len(facts.sentences) - 1 else cand.sentence[1]
    said = normalize(facts.text[cand.sentence[0] : end])
    return all(f" {normalize(g)} " in f" {said} " for g in gaps)


def _bare(text: str, quote: tuple[int, int], cand: Candidate) -> bool:
    """Whether the quotation holds the number alone (no letter besides it): "“$129.99”"
    of a City Flex is found in any document that prices something at $129.99."""
    rest = text[quote[0] : cand.start] + text[cand.end : quote[1]]
    return cand.mention is not None and not any(ch.isalpha() for ch in rest)


def _quoted(facts: TurnFacts, cand: Candidate, quote: tuple[int, int]) -> Judgement:
    passage = normalize(facts.text[quote[0] : quote[1]])
    for doc in facts.evidence.documents:
        if passage and passage in normalize(doc.text):
            return Judgement("quoted", "quoted_found", {"kind": "quote", "document": doc.id})
    return Judgement("quoted", "quoted_missing", {"kind": "quote"})


def _is_threshold_field(name: str) -> bool:
    return "threshold" in name or name.startswith(("min_", "minimum"))


def _threshold(facts: TurnFacts, cand: Candidate) -> Judgement:
    """A condition's bound. Said of a named object (its name right before the condition)
    that has no threshold field of its own, the object's values must satisfy it ("The Aero
    Runner is under $100."; ``bounds``); else it is compared with the evidence's threshold
    fields (``threshold``, ``*_threshold``, ``min_*``, ``minimum*``) for equality, never
    with a price; with none, ``not_checked``."""
    m = cand.mention
    assert m is not None
    of_class = facts.by_class.get(m.cls, [])
    limits = [v for v in of_class if _is_threshold_field(v.item.field)]
    obj = _subject(facts, cand)
    if obj is not None:  # (an unlisted object holds no value: no evidence)
        own = [v for v in limits if _of(v, obj)]
        if own:
            return _limit(m, own)
        return _satisfied(cand, [v for v in of_class if _of(v, obj) and v not in limits], obj)
    if not limits:
        return Judgement("model", "not_checked", {"kind": "threshold"})
    return _limit(m, limits)


def _subject(facts: TurnFacts, cand: Candidate) -> Named | None:
    """The object a condition's bound is said of: the one whose name (or the variants whose
    shared name) stands right before the condition's words (``bounds.subject``), if any."""
    names = facts.objects
    if names is None or names.empty or cand.qualified_at is None:
        return None
    tokens, owners = names.owners(facts.text, *cand.sentence)
    k = subject(tokens, cand.qualified_at - cand.sentence[0])
    if k is None:
        return None
    if owners[k] is not None:
        obj = owners[k]
    elif tokens[k].group() in names.shared:
        obj = names.group(facts.text, *cand.sentence)
    else:
        return None
    return obj if obj is not None and _held(facts, obj) else None


def _limit(m: NumberMention, limits: list[ProvenancedValue]) -> Judgement:
    equal = [v for v in limits if same_value(m, v.item)]
    if equal:
        return Judgement("computed", "matched", equal[0].ref())
    return Judgement("computed", "mismatch", limits[0].ref())


def _satisfied(cand: Candidate, values: list[ProvenancedValue], obj: Named) -> Judgement:
    """Whether the bound holds for the object's values: those of the role the number
    would have without its condition ("now under $100": the sale price), else those of
    one of the category's roles when it has any (a bound that says no role is said of
    the price the object sells at, either one, as a plain number matches either: "under
    $100" of a $129.90 list and $99.90 sale price holds), else every value of its class."""
    m = cand.mention
    assert m is not None and cand.comparison is not None
    roles = cand.category.detect.roles
    if cand.plain_role is not None:
        values = [v for v in values if v.item.field == cand.plain_role]
    elif roles and any(v.item.field in roles for v in values):
        values = [v for v in values if v.item.field in roles]
    if not values:
        ref = {"kind": "value", "bound": True} | _named_ref(obj)
        return Judgement("computed", "no_evidence", ref)
    by_role: dict[str, list[ProvenancedValue]] = {}
    for v in values:
        by_role.setdefault(v.item.field if roles else "", []).append(v)
    bound = {"bound": True, "comparison": cand.comparison}
    misses = [(group, _bound_miss(cand, m, group)) for group in by_role.values()]
    for group, miss in misses:
        if miss is None:
            return Judgement("computed", "matched", group[0].ref() | bound)
    miss = misses[0][1]
    assert miss is not None
    return Judgement(
        "computed", "mismatch", miss.ref() | bound | {"actual": mention_value_of(miss.item)}
    )


def _bound_miss(
    cand: Candidate, m: NumberMention, values: list[ProvenancedValue]
) -> ProvenancedValue | None:
    """The first of ``values`` the bound does not hold for (one of another unit, or not a
    number, counts as not holding), or None."""
    assert cand.comparison is not None
    bound = number_of(m.value)
    numbers = [(n, v) for v in values if (n := number_of(v.item.value)) is not None]
    wrong_unit = next((v for v in values if not same_unit(m, v.item)), None)
    if bound is None or len(numbers) != len(values) or wrong_unit is not None:
        return wrong_unit or values[0]
    return failing(cand.comparison, bound, numbers, m.cls == "money")


def _of(v: ProvenancedValue, obj: Named) -> bool:
    """Whether the value is of the named object (or of one of the named variants)."""
    return v.object in obj if isinstance(obj, frozenset) else v.object == obj


def _named_ref(obj: Named) -> dict[str, Any]:
    """How a claim record's evidence names what the number is about."""
    if isinstance(obj, frozenset):
        return {"objects": sorted(obj)}
    if isinstance(obj, Unlisted):
        return {"unlisted": obj.name}
    return {"object": obj}


def _bound(facts: TurnFacts, cand: Candidate, values: list[ProvenancedValue]) -> Named | None:
    """The object the number's sentence names (one the evidence holds values of, or one it
    does not hold: :class:`Unlisted`)."""
    if facts.objects is None or cand.mention is None or facts.objects.empty:
        return None
    names, m = facts.objects, cand.mention
    # A role term right before the number is part of its phrase: a name is as near to
    # "sai por R$ 99,90" as to "R$ 99,90" after a verb ("na Loja ..." after it is no nearer).
    start = cand.start if cand.introduced_at is None else cand.introduced_at
    obj = names.bind(facts.text, cand.sentence, start, cand.end, facts.sentences)
    numbers = facts.numbers_in(cand.sentence, m.cls)
    paired = names.paired(facts.text, cand.sentence, cand.start, numbers)
    if obj is not None and paired is not None and paired != obj:
        # The nearest named and the pairing in order disagree ("The City Flex is $129.99,
        # the Aero Runner $99.90": the Aero Runner's word stands nearer): the number must
        # be right for both, so it is held to the one whose value it is not.
        right_for = {v.object for v in values if same_value(m, v.item)}
        if obj in right_for and paired not in right_for:
            obj = paired
    return obj if obj is not None and _held(facts, obj) else None


def _held(facts: TurnFacts, obj: Named) -> bool:
    """Whether a number about ``obj`` is judged as about it: an object the evidence holds
    values of, the variants a shared name leaves, or an object it does not hold."""
    return not isinstance(obj, str) or any(v.object == obj for v in facts.values)


def _right(m: NumberMention, candidates: list[ProvenancedValue]) -> ProvenancedValue | None:
    """The one value a mismatch should have said: every candidate of one object and one
    value (None when there are several)."""
    if not candidates or len({v.object for v in candidates}) != 1 or candidates[0].object is None:
        return None
    first = candidates[0]
    if all(same_value_items(first.item, v.item) for v in candidates[1:]):
        return first
    return None


def _value(facts: TurnFacts, cand: Candidate) -> Judgement:
    m = cand.mention
    assert m is not None
    spec = cand.category.evidence.value
    assert spec is not None
    if cand.qualifier == THRESHOLD:
        return _threshold(facts, cand)
    of_class = facts.by_class.get(m.cls, [])
    equal_any = facts.equal_values(m)
    of_role = of_class if cand.role is None else [v for v in of_class if v.item.field == cand.role]
    if not of_role and not equal_any:
        return Judgement("model", "unsupported")
    if cand.category.natures.computed == "count":
        return Judgement("computed", "not_checked")
    if spec.same_role and cand.role is not None:
        candidates = of_role
        equal = [v for v in equal_any if v.item.field == cand.role]
    else:
        candidates, equal = of_class, equal_any
    obj = _bound(facts, cand, candidates)
    if obj is not None:  # the sentence names an object (or variants, or one not held)
        candidates = [v for v in candidates if _of(v, obj)]
        equal = [v for v in equal if _of(v, obj)]
    if not candidates:  # (the object named holds no value of the number's class or role)
        ref = None if obj is None else {"kind": "value", "bound": True} | _named_ref(obj)
        return Judgement("computed", "no_evidence", ref)
    if cand.qualifier == APPROXIMATE or m.is_range or isinstance(m.value, tuple | list):
        approx = _approximate(m, spec.approximate_tolerance, candidates, equal)
        if approx is not None:
            if obj is not None and approx.verdict == "mismatch" and approx.evidence is not None:
                approx.evidence["bound"] = True
            return approx
    if not equal:
        right = _right(m, candidates)
        ref = (right or candidates[0]).ref()
        if obj is not None:
            ref["bound"] = True
        if right is not None:
            ref["expected"] = mention_value_of(right.item)
        return Judgement("computed", "mismatch", ref, right)
    fresh = [v for v in equal if v.fresh(facts.now)] if spec.fresh_for == "claim" else equal
    if not fresh:
        return Judgement("computed", "stale", equal[0].ref(), _fresh_other(facts, equal))
    if spec.must_state_gaps:
        stated = [v for v in fresh if _gaps_stated(facts, cand, v.item.gaps)]
        if not stated:
            ref = fresh[0].ref() | {"gaps": list(fresh[0].item.gaps)}
            return Judgement("computed", "gap_not_stated", ref)
        fresh = stated
    return Judgement("computed", "matched", fresh[0].ref())


def _approximate(
    m: NumberMention,
    tolerance: float | None,
    candidates: list[ProvenancedValue],
    equal: list[ProvenancedValue],
) -> Judgement | None:
    """A hedged number ("about $40") or a range against single values: not compared
    without a tolerance (``not_checked``); within ``approximate_tolerance`` of a candidate,
    ``matched``; else ``mismatch``. A range that holds none of the candidates' values is a
    ``mismatch`` ("$500 to $900" of a $99.90 product); one that holds one is not compared.
    A range equal bound by bound to a range value goes on to the plain comparison (None)."""
    if equal:
        return None
    if isinstance(m.value, tuple | list):
        return _range(m, candidates)
    if tolerance is None:
        return Judgement("computed", "not_checked", {"kind": "approximate"})
    near = [v for v in candidates if approximately(m, v.item, tolerance)]
    if near:
        return Judgement("computed", "matched", near[0].ref() | {"approximate": True})
    return Judgement("computed", "mismatch", candidates[0].ref() | {"approximate": True})


def _range(m: NumberMention, candidates: list[ProvenancedValue]) -> Judgement:
    """A range against the candidates: ``mismatch`` when every candidate is one number of
    the range's class and unit outside it (to the cent for money), else ``not_checked``."""
    bounds = [number_of(b) for b in m.value] if len(m.value) == 2 else []
    singles = [(v, number_of(v.item.value)) for v in candidates]
    comparable = all(
        n is not None and v.item.class_ == m.cls and same_unit(m, v.item) for v, n in singles
    )
    if len(bounds) != 2 or None in bounds or not singles or not comparable:
        return Judgement("computed", "not_checked", {"kind": "approximate"})
    slack = CENT if m.cls == "money" else 1e-9
    low, high = sorted(b for b in bounds if b is not None)
    if any(n is not None and low - slack <= n <= high + slack for _, n in singles):
        return Judgement("computed", "not_checked", {"kind": "approximate"})
    right = _right(m, candidates)
    ref = (right or candidates[0]).ref() | {"range": True}
    if right is not None:
        ref["expected"] = mention_value_of(right.item)
    return Judgement("computed", "mismatch", ref)


def _fresh_other(facts: TurnFacts, equal: list[ProvenancedValue]) -> ProvenancedValue | None:
    """The fresh, different value of the one field of one object the number copied."""
    sources = {(v.object, v.item.field) for v in equal}
    if len(sources) != 1:
        return None
    obj, field = next(iter(sources))
    if obj is None:
        return None
    newer = [
        v
        for v in facts.values
        if v.object == obj and v.item.field == field and v.fresh(facts.now) and v not in equal
    ]
    newer.sort(key=lambda v: v.at or facts.now)
    return newer[-1] if newer else None


def _tool(facts: TurnFacts, cand: Candidate) -> Judgement:
    tools = cand.category.evidence.tools
    calls = facts.evidence.called(tools)
    nature: Nature = "model" if cand.mention is None else "computed"
    if not calls:
        return Judgement(nature, "no_evidence", {"kind": "tool", "tools": list(tools)})
    ref = {"kind": "tool", "call": calls[0].id, "tool": calls[0].tool}
    m = cand.mention
    if m is None:
        return Judgement(nature, "matched", ref)
    if cand.category.natures.computed == "count":
        return Judgement(nature, "not_checked", ref)
    if cand.qualifier is not None:  # a hedge or a condition's bound: not compared
        return Judgement(nature, "not_checked", ref | {"qualifier": cand.qualifier})
    ids = {c.id for c in calls}
    values = [
        v
        for v in facts.values
        if v.call in ids
        and v.item.class_ == m.cls
        and (cand.role is None or v.item.field == cand.role)
    ]
    if not values:
        return Judgement(nature, "matched", ref)
    obj = _bound(facts, cand, values) if any(v.object for v in values) else None
    if obj is not None:  # the sentence names an object: the calls' values of it alone
        values = [v for v in values if _of(v, obj)]
        if not values:
            return Judgement(nature, "no_evidence", ref | {"bound": True} | _named_ref(obj))
    for v in values:
        if same_value(m, v.item):
            return Judgement(nature, "matched", _tool_ref(v))
    bound = {} if obj is None else {"bound": True}
    return Judgement(nature, "mismatch", _tool_ref(values[0]) | bound)


def _tool_ref(v: ProvenancedValue) -> dict[str, Any]:
    ref = {"kind": "tool", "call": v.call, "tool": v.tool, "field": v.item.field}
    return ref | ({"object": v.object} if v.object is not None else {})


def _anchor(facts: TurnFacts, cand: Candidate) -> Judgement:
    spec = cand.category.evidence.anchor
    assert spec is not None
    nature: Nature = "model" if cand.mention is None else "computed"
    best: Judgement | None = None
    best_score = -1.0
    for i, a in enumerate(facts.evidence.anchors):
        if a.end <= cand.start or a.start >= cand.end:
            continue  # the anchor does not cover the claim
        doc = facts.evidence.document(a.document)
        if doc is None:
            if best is None:
                best = Judgement(
                    nature, "source_missing", {"kind": "anchor", "document": a.document}, anchor=i
                )
            continue
        quote = a.quote if a.quote is not None else facts.text[a.start : a.end]
        got = score_anchor(quote, doc.text)
        if got.score <= best_score:
            continue
        best_score = got.score
        ref = {"kind": "anchor", "document": a.document, "score": round(got.score, 4)}
        # A hair of floating-point slack, so that a score equal to the threshold holds.
        if got.score < spec.threshold - 1e-9:
            best = Judgement(nature, "below_threshold", ref, anchor=i)
        elif not got.numbers_match:
            best = Judgement(nature, "mismatch", ref, anchor=i)
        else:
            best = Judgement(nature, "anchored", ref, anchor=i)
    return best or Judgement(nature, "not_checked")


def judge(facts: TurnFacts, cand: Candidate) -> Judgement:
    """The nature and verdict of one claim (pure: everything it reads is in ``facts``)."""
    cat = cand.category
    quote = _inside(facts.quotes, cand.start, cand.end)
    if quote is not None and _bare(facts.text, quote, cand):
        quote = None  # "“$129.99”" quotes no passage: the number is judged as said
    if quote is not None:
        if cat.natures.quoted == "count":
            return Judgement("quoted", "not_checked")
        return _quoted(facts, cand, quote)
    if cand.role_tied:
        nature: Nature = "computed" if cand.cls in facts.by_class else "model"
        tied = {"kind": "roles", "tied": list(cand.role_tied)}
        return Judgement(nature, "role_ambiguous", tied)
    kind = cat.evidence.kind
    if kind == "anchor":
        return _anchor(facts, cand)
    if kind in ("tool", "tool_any"):
        return _tool(facts, cand)
    if cand.mention is None:
        # A claim that is not a number, with value evidence: a value must name what it says.
        said = fold(cand.value or "")
        hit = next((v for v in facts.values if fold(str(v.item.value)) == said), None)
        if hit is None:
            return Judgement("model", "unsupported")
        return Judgement("computed", "matched", hit.ref())
    return _value(facts, cand)
