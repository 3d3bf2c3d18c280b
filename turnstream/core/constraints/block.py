"""The constraints block of one person and one ``for``: what must hold, what is preferred,
what the person is, and which entries clash.

:func:`build_block` is pure: the HTTP layer reads the records from the store and passes
them in, with ``now``. The rules are those of the reference's "The constraints block".
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from turnstream.core.constraints.asked import family_field, resolve_asked
from turnstream.core.constraints.changes import (
    UnreadableState,
    changes_since_shown,
    read_state,
    state_shown,
)
from turnstream.core.constraints.conditions import clashes, holds, refusing, signs
from turnstream.core.constraints.inputs import (
    BlockRequest,
    CompanyRule,
    Disliked,
    InvalidViewInput,
    Presented,
    StatedAttribute,
    StatedPreference,
)
from turnstream.core.constraints.sensitive_reading import read_refusal, read_sensitive
from turnstream.core.constraints.text import (
    ValueWords,
    builtin_field_labels,
    builtin_field_notion,
    language_of,
    quoted,
    render_text,
)
from turnstream.core.derivation.events import format_time
from turnstream.core.derivation.inference import Inference
from turnstream.core.folding import normal
from turnstream.core.value_ids import ValueIds, canonical, value_ids
from turnstream.models.object_types import ObjectTypes

__all__ = [
    "PRECEDENCE",
    "SAID_SOURCES",
    "SESSION_LIFETIME",
    "breaks",
    "build_block",
    "read_current",
    "version_of",
]

#: What wins over what, first to last.
PRECEDENCE = ("current_utterance", "stated_persistent", "inferred")
#: How long a session constraint lasts at most.
SESSION_LIFETIME = timedelta(hours=24)
#: Sources of an attribute the person said; any other applies only when asked.
SAID_SOURCES = frozenset({"stated", "tool_args", "correction"})
_SOFT_KINDS = frozenset({"affinity", "implicit_negative", "interest"})
_ABOUT_OBJECTS = frozenset({"implicit_negative", "interest"})
#: The space's object types document, if it has one.
_Types = ObjectTypes | None
_HARD = ("must", "must_not")


@dataclass(frozen=True)
class _Entry:
    """What conflict judging needs of one entry of the block."""

    section: str  # hard, soft, attributes or rules
    id: str
    attr: str | None
    stated: bool  # a rule counts as stated: only two inferred entries are never judged
    op: str | None = None
    values: tuple[Any, ...] = ()
    leans: Mapping[str, int] = field(default_factory=dict)
    occurred_at: datetime | None = None
    rank: int = 0
    system: str | None = None
    #: The attribute family of the field (``size``), from the object types.
    family: str | None = None
    #: A stated soft entry's strength (``prefer`` or ``avoid``).
    strength: str | None = None


def _check_aware(now: datetime) -> None:
    if now.tzinfo is None or now.utcoffset() is None:
        raise InvalidViewInput("now has no zone")


def _current(
    request: BlockRequest, preferences: Iterable[StatedPreference], now: datetime
) -> list[StatedPreference]:
    """The preferences of the requested ``for`` that still hold at ``now``."""
    kept = []
    for pref in preferences:
        if pref.for_ != request.for_ or pref.scope == "turn":
            continue  # a turn constraint never reaches the server
        if pref.scope == "session":
            if pref.occurred_at <= now - SESSION_LIFETIME:
                continue
            if request.session is not None and pref.session != request.session:
                continue
        kept.append(pref)
    return kept


def _expires_at(pref: StatedPreference) -> str | None:
    if pref.scope == "session":
        return format_time(pref.occurred_at + SESSION_LIFETIME)
    return None


def _newest_first(prefs: Iterable[StatedPreference]) -> list[StatedPreference]:
    by_id = sorted(prefs, key=lambda p: p.id)
    return sorted(by_id, key=lambda p: p.occurred_at, reverse=True)


def _said_key(pref: StatedPreference, ids: ValueIds) -> tuple[Any, ...]:
    """What makes two statements the same constraint: field, strength, operator, values
    (the values they name, :class:`ValueIds`; in any order for ``in``/``not_in``)."""
    values = [ids.key(pref.attr, v) for v in pref.values]
    if pref.op in ("in", "not_in"):
        values = sorted(set(values))
    return (pref.attr, pref.strength, pref.op, tuple(values))


def _deduplicated(
    prefs: Iterable[StatedPreference], ids: ValueIds
) -> tuple[list[StatedPreference], dict[str, list[str]]]:
    """One statement per constraint, the newest; and its id -> the origins of every
    statement of it, newest first."""
    kept: dict[tuple[Any, ...], StatedPreference] = {}
    origins: dict[tuple[Any, ...], list[str]] = {}
    for pref in _newest_first(prefs):
        key = _said_key(pref, ids)
        kept.setdefault(key, pref)
        if pref.origin not in origins.setdefault(key, []):
            origins[key].append(pref.origin)
    return list(kept.values()), {kept[k].id: origins[k] for k in kept}


def breaks(
    ref: str,
    showed: Mapping[str, Any] | None,
    hard_rows: Sequence[Mapping[str, Any]],
    ids: ValueIds,
) -> bool:
    """Whether the object ``ref``, by the values it showed, fails a hard row of its type
    (a value it showed that the row's condition refuses, values compared by the values
    they name, :class:`ValueIds`: ``Black`` fails "not preto"; a value it did not show,
    or one the condition cannot judge, fails nothing)."""
    if not showed:
        return False
    type_name = ref.split(":", 1)[0]
    for row in hard_rows:
        owner, _, field_name = str(row["attr"]).partition(".")
        value = showed.get(field_name)
        if owner != type_name or not isinstance(value, str | int | float):
            continue
        attr = str(row["attr"])
        if holds(row["op"], ids.all(attr, row["values"]), ids.of(attr, value)) is False:
            return True
    return False


def _hard(
    prefs: Sequence[StatedPreference],
    origins: Mapping[str, list[str]],
    types: _Types,
    ids: ValueIds,
) -> tuple[list[dict[str, Any]], list[_Entry]]:
    rows, entries = [], []
    for pref in _newest_first(p for p in prefs if p.strength in _HARD):
        op = refusing(pref.op) if pref.strength == "must_not" else pref.op
        rows.append(
            {
                "id": pref.id,
                "attr": pref.attr,
                "op": op,
                "values": list(pref.values),
                "source": pref.source,
                "scope": pref.scope,
                "category": pref.category,
                "relax": "never" if pref.strength == "must_not" else "ask",
                "origin": pref.origin,
                "origins": origins.get(pref.id, [pref.origin]),
                "expires_at": _expires_at(pref),
            }
        )
        named = ids.all(pref.attr, pref.values)
        entries.append(
            _Entry(
                "hard",
                pref.id,
                pref.attr,
                True,
                op,
                named,
                signs(op, named, "prefer"),
                occurred_at=pref.occurred_at,
                family=_family(types, pref.attr),
            )
        )
    return rows, entries


# An avoid names the values avoided: ``avoid not_in [x]`` is read as ``avoid in [x]``.
_AVOIDED = {"not_in": "in", "ne": "eq"}


def _soft(
    prefs: Sequence[StatedPreference],
    origins: Mapping[str, list[str]],
    inferences: Iterable[Inference],
    cap: int | None,
    ids: ValueIds,
) -> tuple[list[dict[str, Any]], list[_Entry]]:
    """Stated ``prefer``/``avoid`` (weight 1), then inferences by weight, one per value
    (``Black`` and ``black``: the stronger); the first ``cap`` of them."""
    rows, entries = [], []
    for pref in _newest_first(p for p in prefs if p.strength not in _HARD):
        op = _AVOIDED.get(pref.op, pref.op) if pref.strength == "avoid" else pref.op
        rows.append(
            {
                "id": pref.id,
                "attr": pref.attr,
                "op": op,
                "values": list(pref.values),
                "polarity": pref.strength,
                "weight": 1.0,
                "confidence": 1.0,
                "kind": "preference",
                "source": pref.source,
                "scope": pref.scope,
                "category": pref.category,
                "origin": pref.origin,
                "origins": origins.get(pref.id, [pref.origin]),
                "expires_at": _expires_at(pref),
                "inferred": False,
            }
        )
        named = ids.all(pref.attr, pref.values)
        entries.append(
            _Entry(
                "soft",
                pref.id,
                pref.attr,
                True,
                op,
                named,
                signs(op, named, pref.strength),
                occurred_at=pref.occurred_at,
                strength=pref.strength,
            )
        )
    inferred: set[tuple[Any, ...]] = set()
    for inf in sorted(inferences, key=lambda i: (-i.weight, i.id)):
        assert inf.polarity is not None  # soft kinds always lean one way
        value = ids.of(inf.attr, inf.value)
        said = (inf.kind, inf.attr, inf.polarity, ids.key(inf.attr, inf.value))
        if said in inferred:
            continue  # the same value spelled otherwise: the stronger says it
        inferred.add(said)
        rows.append(
            {
                "id": inf.id,
                "attr": inf.attr,
                "op": "eq",
                "values": [inf.value],
                "polarity": inf.polarity,
                "weight": inf.weight,
                "confidence": inf.confidence,
                "kind": inf.kind,
                "source": "inferred",
                "scope": None,
                "category": None,
                "origin": None,
                "expires_at": None,
                "inferred": True,
            }
        )
        entries.append(
            _Entry(
                "soft",
                inf.id,
                inf.attr,
                False,
                "eq",
                (value,),
                signs("eq", (value,), inf.polarity),
            )
        )
    if cap is not None:
        rows, entries = rows[:cap], entries[:cap]
    return rows, entries


@dataclass
class _Acted:
    """What statements on sensitive fields mean to the agent (:func:`_acts`)."""

    hard_rows: list[dict[str, Any]] = field(default_factory=list)
    hard: list[_Entry] = field(default_factory=list)
    soft_rows: list[dict[str, Any]] = field(default_factory=list)
    #: The fields whose newest statement means nothing this block can act on.
    unread: list[str] = field(default_factory=list)


def _refuses(pref: StatedPreference) -> bool:
    """Whether ``pref`` refuses its values: an ``avoid``; a ``must_not`` of ``in``/``eq``;
    another strength of ``not_in``/``ne`` (``must_not not_in`` wants them)."""
    negated = pref.op in ("not_in", "ne")
    return pref.strength == "avoid" or (pref.strength == "must_not") != negated


def _acts(
    said: Sequence[StatedPreference | StatedAttribute], types: _Types, language: str
) -> _Acted:
    """What statements on sensitive fields mean to the agent (:func:`read_sensitive`):
    one hard entry per act their words affirm (the declared ones, "sem amendoim" for an
    allergy), one soft avoid per food they avoid, its label in the block's language;
    never the words; a preference that refuses (``must_not in``, ``must ne``, ``avoid``)
    does without the foods it names and says the conditions it names do not hold
    (:func:`read_refusal`). The newest statement of each act decides it: one that
    negates it ("não sou celíaco") leaves it out. A field whose newest statement is not understood
    (:func:`read_sensitive`: a clause nothing reads, or a "sem X" naming no food) is
    ``unread`` (asked, never echoed)."""
    acted = _Acted()
    seen: set[tuple[str, str]] = set()
    newest: set[str] = set()
    for fact in sorted(said, key=lambda f: (f.occurred_at, f.id), reverse=True):
        if isinstance(fact, StatedPreference) and _refuses(fact):
            hard = fact.strength in _HARD
            reading = read_refusal(types, fact.attr, fact.values, hard=hard)
        else:
            words = list(fact.values) if isinstance(fact, StatedPreference) else [fact.value]
            reading = read_sensitive(types, fact.attr, words)
        if fact.attr not in newest:
            newest.add(fact.attr)
            if not reading.understood:
                acted.unread.append(fact.attr)
        seen.update((fact.attr, name) for name in reading.negated)
        common = {
            "source": fact.source,
            "scope": "persistent",
            "category": None,
            "origin": fact.origin,
            "origins": [fact.origin],
            "expires_at": None,
        }
        for name, act in reading.acts:
            if (fact.attr, name) in seen:
                continue
            seen.add((fact.attr, name))
            op = act.op if act.attr is not None else None
            label = str(getattr(act.labels, language))
            row = {"id": f"{fact.id}:{name}", "attr": act.attr, "op": op}
            row |= {"values": list(act.values), **common, "relax": "never"}
            acted.hard_rows.append(row | {"act": name, "label": label})
            acted.hard.append(
                _Entry(
                    "hard",
                    row["id"],
                    act.attr,
                    True,
                    op,
                    tuple(act.values),
                    signs(op, tuple(act.values), "prefer") if op else {},
                    occurred_at=fact.occurred_at,
                )
            )
        for name, food in reading.avoided:
            if (fact.attr, name) in seen:
                continue
            seen.add((fact.attr, name))
            row = {"id": f"{fact.id}:{name}", "attr": None, "op": None, "values": []}
            row |= {"polarity": "avoid", "weight": 1.0, "confidence": 1.0}
            row |= {"kind": "preference", **common, "inferred": False}
            acted.soft_rows.append(row | {"act": name, "label": str(getattr(food, language))})
    return acted


def _asked(attr: str, asked: Sequence[str], types: _Types) -> bool:
    """Whether ``asked`` (the fields the agent's names mean, :func:`resolve_asked`) asks
    about ``attr``: by its notion (:func:`_notion`), so ``size`` and ``clothing_size``
    both let an inferred ``item_variant.size`` in; a field the types do not declare, by
    its name (:func:`normal`)."""
    field_part = attr.split(".", 1)[1] if "." in attr else attr
    names = {normal(name) for name in asked}
    if normal(attr) in names or normal(field_part) in names:
        return True
    notion = _notion(types, attr)
    return any(_notion(types, name) == notion for name in asked)


def _family(types: _Types, attr: str) -> str | None:
    return None if types is None else types.family(attr)


def _notion(types: _Types, attr: str) -> str:
    """What a field says of the person: its attribute family (``size`` for both
    ``item_variant.size`` and ``person.clothing_size``), else the field itself; without
    a types document, the notion its name names in the built-in field words
    (:func:`builtin_field_notion`: ``talla``, ``size`` and ``person.clothing_size``
    alike), else the field itself."""
    if types is None:
        return builtin_field_notion(attr) or attr
    return _family(types, attr) or attr


def _said_already(
    inf: Inference,
    system: str | None,
    said: Iterable[tuple[Any, ...]],
    required: Iterable[StatedPreference],
    types: _Types,
    ids: ValueIds,
) -> bool:
    """Whether the person said what ``inf`` infers, on its field or one of its family: an
    attribute of the same value (:class:`ValueIds`: ``m`` says ``M``; in a system that
    does not differ), or a requirement naming it (``size = M`` absorbs an inferred size
    M)."""
    notion, value = _notion(types, inf.attr), ids.key(inf.attr, inf.value)
    system = None if system is None else normal(system)
    for attr, said_value, said_system in said:
        same_system = said_system is None or system is None or said_system == system
        if _notion(types, attr) == notion and said_value == value and same_system:
            return True
    return any(
        _notion(types, p.attr) == notion
        and p.op in ("in", "eq")
        and value in {ids.key(p.attr, v) for v in p.values}
        for p in required
    )


def _systems(
    stated: Iterable[StatedAttribute], types: _Types, ids: ValueIds
) -> Callable[[str, Any, str | None], str | None]:
    """The measuring system of an attribute's value, :func:`normal` (``br``): the one
    given, else the only one known for that value of that field (said with it, or the
    field's declared system), else ``None``: ``M`` and ``M (BR)`` are one fact."""
    known: dict[tuple[str, str], set[str]] = {}
    for fact in stated:
        found = known.setdefault((fact.attr, ids.key(fact.attr, fact.value)), set())
        declared = None if types is None else types.field(fact.attr)
        found.update(normal(s) for s in (fact.system, declared and declared.system) if s)

    def system_of(attr: str, value: Any, system: str | None) -> str | None:
        if system:
            return normal(system)
        found = known.get((attr, ids.key(attr, value)), set())
        return next(iter(found)) if len(found) == 1 else None

    return system_of


def _attributes(
    request: BlockRequest,
    stated: Iterable[StatedAttribute],
    inferred: Iterable[Inference],
    types: _Types,
    required: Sequence[StatedPreference] = (),
    asked: Sequence[str] = (),
    ids: ValueIds | None = None,
) -> tuple[list[dict[str, Any]], list[_Entry]]:
    """The person's attributes: what they said (the newest of each value of a field or
    its family, by :class:`ValueIds` and :func:`_systems`: ``M``, `` m `` and ``M (BR)``
    are one, ``person.size`` M and ``person.clothing_size`` M too), then
    what was inferred, when asked, unless something said already says it
    (:func:`_said_already`)."""
    ids = ids or ValueIds()
    rows, entries = [], []
    said = sorted(stated, key=lambda a: (a.attr, a.id))
    system_of = _systems(said, types, ids)
    seen: set[tuple[Any, ...]] = set()
    seen_of_family: set[tuple[Any, ...]] = set()
    for fact in sorted(said, key=lambda a: a.occurred_at, reverse=True):
        applies = "always" if fact.source in SAID_SOURCES else "when_asked"
        if applies == "when_asked" and not _asked(fact.attr, asked, types):
            continue
        system = system_of(fact.attr, fact.value, fact.system)
        key = (fact.attr, ids.key(fact.attr, fact.value), system)
        # Said again, on this field or another of its family (``person.size`` M beside
        # ``person.clothing_size`` M): one entry, the newest.
        family = _family(types, fact.attr)
        of_family = (family or fact.attr, ids.key(fact.attr, fact.value), system)
        if of_family in seen_of_family:
            continue
        seen_of_family.add(of_family)
        seen.add(key)
        rows.append(
            {
                "id": fact.id,
                "attr": fact.attr,
                "value": fact.value,
                "system": fact.system,
                "source": fact.source,
                "applies": applies,
                "confidence": 1.0,
                "inferred": False,
                "origin": fact.origin,
            }
        )
        entries.append(
            _Entry(
                "attributes",
                fact.id,
                fact.attr,
                True,
                values=(ids.of(fact.attr, fact.value),),
                occurred_at=fact.occurred_at,
                system=system,
                family=_family(types, fact.attr),
            )
        )
    inferred_seen: set[tuple[Any, ...]] = set()
    for inf in sorted(inferred, key=lambda i: (i.attr, i.id)):
        if not _asked(inf.attr, asked, types):
            continue  # an attribute the person did not say applies only when asked
        declared = None if types is None else types.field(inf.attr)
        system = None if declared is None else declared.system
        if _said_already(inf, system, seen, required, types, ids):
            continue  # the person said it: the stated entry absorbs the inferred one
        key = (inf.attr, ids.key(inf.attr, inf.value), system)
        if key in inferred_seen:
            continue  # inferred again, spelled otherwise: one entry
        inferred_seen.add(key)
        rows.append(
            {
                "id": inf.id,
                "attr": inf.attr,
                "value": inf.value,
                "system": system,
                "source": "inferred",
                "applies": "when_asked",
                "confidence": inf.confidence,
                "inferred": True,
                "origin": None,
            }
        )
        entries.append(
            _Entry(
                "attributes",
                inf.id,
                inf.attr,
                False,
                values=(ids.of(inf.attr, inf.value),),
                system=None if system is None else normal(system),
                family=_family(types, inf.attr),
            )
        )
    rows_order = {row["id"]: i for i, row in enumerate(rows)}
    rows.sort(key=lambda row: (row["attr"], rows_order[row["id"]]))
    return rows, entries


def _rules(
    rules: Iterable[CompanyRule], ids: ValueIds
) -> tuple[list[dict[str, Any]], list[_Entry]]:
    ordered = sorted(rules, key=lambda r: (r.rank, r.id))
    rows = [{"id": r.id, "rank": r.rank, "origin": r.origin, "text": r.text} for r in ordered]
    entries = [
        _Entry(
            "rules",
            r.id,
            r.attr,
            True,
            r.op,
            r.values if r.attr is None else ids.all(r.attr, r.values),
            rank=r.rank,
        )
        for r in ordered
    ]
    return rows, entries


def _judge(a: _Entry, b: _Entry) -> tuple[_Entry, _Entry, str]:
    """The winner, the loser and why: rank for rules, else the newest stated, else stated."""
    if a.section == "rules":
        winner = min((a, b), key=lambda e: (e.rank, e.id))
        return winner, b if winner is a else a, "rule_rank"
    if a.stated and b.stated:
        # The newest wins; a tie goes to the hard entry, then to the greater id.
        winner = max((a, b), key=lambda e: (e.occurred_at, e.section == "hard", e.id))
        return winner, b if winner is a else a, "current_utterance"
    winner = a if a.stated else b
    return winner, b if winner is a else a, "stated_over_inferred"


def _inferred_against_said(a: _Entry, b: _Entry) -> bool:
    """An inferred attribute against a stated hard requirement on a field of its family
    (an inferred size L against ``size = M``)."""
    attribute, other = (a, b) if a.section == "attributes" else (b, a)
    if attribute.stated or other.section != "hard" or attribute.family is None:
        return False
    if attribute.family != other.family or other.op is None:
        return False
    return clashes(other.op, other.values, "eq", attribute.values)


def _same_field(a: _Entry, b: _Entry) -> bool:
    """The same field, or two attributes of one family (a stated ``person.clothing_size``,
    an inferred ``item_variant.size``)."""
    if a.attr == b.attr:
        return True
    both = a.section == b.section == "attributes"
    return both and a.family is not None and a.family == b.family


def _clash(a: _Entry, b: _Entry) -> bool:
    """Whether two entries of the block cannot both hold (both inferred: never judged)."""
    if a.attr is None or b.attr is None or not (a.stated or b.stated):
        return False
    if "attributes" in (a.section, b.section) and a.section != b.section:
        return "rules" not in (a.section, b.section) and _inferred_against_said(a, b)
    if not _same_field(a, b):
        return False
    if a.section == "rules" or b.section == "rules":
        if a.section != b.section or a.op is None or b.op is None:
            return False
        return clashes(a.op, a.values, b.op, b.values)
    if a.section == "attributes":
        same_system = a.system is None or b.system is None or a.system == b.system
        return same_system and canonical(a.values[0]) != canonical(b.values[0])
    if a.section == b.section == "hard":
        assert a.op is not None and b.op is not None
        return clashes(a.op, a.values, b.op, b.values)
    return any(b.leans.get(key) == -sign for key, sign in a.leans.items())


def _ruled_out(hard: _Entry, soft: _Entry) -> bool:
    """Whether the stated ``soft`` entry wants only what the ``hard`` one refuses
    ("Required: colour blue" and "Prefers: colour red"; "price up to 100" and "prefers
    from 200")."""
    if hard.section != "hard" or soft.strength is None or hard.attr != soft.attr:
        return False
    if hard.attr is None or hard.op is None or soft.op is None:
        return False
    op = refusing(soft.op) if soft.strength == "avoid" else soft.op
    return clashes(hard.op, hard.values, op, soft.values)


def _conflicts(entries: Sequence[_Entry]) -> tuple[list[dict[str, Any]], set[tuple[str, str]]]:
    """Every clashing pair, the one kept and why; and the losers as (section, id). A
    stated preference a standing requirement rules out (:func:`_ruled_out`) clashes with
    it too, once the requirements have been judged among themselves (a requirement said
    again otherwise no longer stands, and rules nothing out)."""
    found, lost = [], set()

    def judged(a: _Entry, b: _Entry) -> None:
        winner, loser, reason = _judge(a, b)
        found.append({"entries": sorted([a.id, b.id]), "kept": winner.id, "reason": reason})
        lost.add((loser.section, loser.id))

    ruled_out = []
    for i, a in enumerate(entries):
        for b in entries[i + 1 :]:
            if _clash(a, b):
                judged(a, b)
            elif _ruled_out(a, b) or _ruled_out(b, a):
                ruled_out.append((a, b))
    for a, b in ruled_out:
        if (a.section, a.id) not in lost and (b.section, b.id) not in lost:
            judged(a, b)
    found.sort(key=lambda c: (c["entries"], c["kept"]))
    return found, lost


def _mark_lost(rows: list[dict[str, Any]], section: str, lost: set[tuple[str, str]]) -> None:
    for row in rows:
        if (section, row["id"]) in lost:
            row["lost"] = True


def _presented(
    presented: Iterable[Presented],
    shown: Mapping[str, Mapping[str, Any]],
    current: Mapping[str, Mapping[str, Any]],
    types: _Types,
    silent: frozenset[str] = frozenset(),
    language: str = "en",
    broken: Mapping[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """Each object shown before: how many times, the state its latest presentation
    showed (``shown``: its state fields, when it showed any), the ids of the hard rows
    it ``breaks`` by what it showed (and ``current``: so an SDK read that lacks the
    field, the colour it was shown in, still knows), and, when ``current`` holds its
    state read now, what ``changed`` since; never for an object in ``silent`` (one the
    agent must not show again)."""
    times: dict[str, int] = {}
    for item in presented:
        times[item.ref] = times.get(item.ref, 0) + item.times
    rows = []
    for ref in sorted(times):
        row: dict[str, Any] = {"ref": ref, "times": times[ref]}
        state = state_shown(ref, shown.get(ref) or {}, types)
        if state:
            row["shown"] = state
        if (broken or {}).get(ref):
            row["breaks"] = list((broken or {})[ref])
        if ref in current and ref not in silent:
            changes = changes_since_shown(ref, state, current[ref], types, language)
            if changes:
                row["changed"] = [c.as_dict() for c in changes]
        rows.append(row)
    return rows


def read_current(
    current: Mapping[str, Mapping[str, Any]], types: _Types, language: str
) -> dict[str, dict[str, Any]]:
    """A request's ``current`` with each price read as a number (:func:`read_state`, in
    ``language``); raises :class:`UnreadableState` naming the value's path
    (``current.<ref>.<field>``)."""
    read = {}
    for ref, state in current.items():
        try:
            read[ref] = read_state(ref, state, types, language)
        except UnreadableState as exc:
            raise UnreadableState(f"current.{ref}.{exc.field}", exc.message) from None
    return read


def _absorbed(inf: Inference, prefs: Sequence[StatedPreference], ids: ValueIds) -> bool:
    """Whether a stated entry already says what ``inf`` infers (the same value, by
    :class:`ValueIds`, the same way): "prefers azul-marinho or beige" absorbs "seems to
    like navy". A stated refusal of a value an inferred liking names absorbs nothing:
    the pair is a conflict, asked."""
    if inf.kind != "affinity":
        return False
    value = ids.key(inf.attr, inf.value)
    for pref in prefs:
        if pref.attr != inf.attr or pref.op not in ("in", "eq", "not_in", "ne"):
            continue
        # ``must``/``prefer`` ``in`` wants the values; a ``not_in``, a ``must_not`` and an
        # ``avoid`` (of either operator) refuse them.
        wants = pref.strength in ("must", "prefer") and pref.op in ("in", "eq")
        if (inf.polarity == "prefer") == wants and value in {
            ids.key(pref.attr, v) for v in pref.values
        }:
            return True
    return False


#: What a field of ``shown`` that names an object is called, the first found winning: a
#: name, then a title, in any language (the built-in field words: ``nombre``, ``título``).
_NAME_NOTIONS = ("name", "title")
#: Values of an unnamed object its short description gives at most.
_DESCRIBED = 2


def value_words_of(types: _Types, language: str, ids: ValueIds | None = None) -> ValueWords:
    """How values read in ``language`` with ``types`` (its value labels, by the value
    each value names, :func:`value_ids`, and its units)."""
    if types is None:
        return ValueWords(language)
    ids = ids or value_ids(types)
    labels = types.value_labels(language)
    return ValueWords(language, labels, types.units(), types.money(), ids.of, types.flags())


def _described(types: ObjectTypes, values: ValueWords, attr: str, value: Any, language: str) -> str:
    """One value of an object's description: a number with its field's unit (``64 GB``),
    else after its field's label (``armazenamento 64``); other values alone."""
    words = values.word(attr, value)
    if isinstance(value, str) or attr in values.units:
        return words
    return f"{types.label(attr, language) or attr.split('.', 1)[1]} {words}"


def _rank(types: ObjectTypes, attr: str) -> int | None:
    """Where a field comes in telling objects apart and in describing one without tastes
    (:data:`_TELLING_ORDER`): tastes, then attributes (the size), then the rest of the
    object's state (stock), a price (class ``money``) last; ``None`` for a field that
    never names an object (an identifier, a sensitive field, a field of many values, one
    not declared)."""
    declared = types.field(attr)
    if declared is None or declared.role not in _TELLING_ORDER or types.is_sensitive(attr):
        return None
    if declared.many:
        return None  # a field of many values (sizes in stock) names nothing
    return _MONEY_RANK if declared.class_ == "money" else _TELLING_ORDER[declared.role]


def _declared(types: ObjectTypes, type_name: str) -> dict[str, int]:
    """Each field of ``type_name`` -> where the types document declares it."""
    declared = types.types.get(type_name)
    return {} if declared is None else {f: i for i, f in enumerate(declared.fields)}


def _name_rank(type_name: str, key: str, types: _Types) -> int | None:
    """Where a field of ``shown`` comes among those that name an object
    (:data:`_NAME_NOTIONS`), by its name or, when the types document declares it, its
    labels (``nombre``; ``nom`` labelled "name"); ``None`` for one that names none (a
    sensitive field never does, declared or of a sensitive type)."""
    if types is None:
        return _names_rank((key,))
    attr = f"{type_name}.{key}"
    if types.is_sensitive(attr):
        return None
    declared = types.field(attr)
    if declared is None:
        return _names_rank((key,))
    return _names_rank((key, declared.labels.pt, declared.labels.en, declared.labels.es))


@functools.lru_cache(maxsize=4096)
def _names_rank(words: tuple[str, ...]) -> int | None:
    """:func:`_name_rank` of a field called by ``words`` (its name, and its labels)."""
    notions = {builtin_field_notion(word) for word in words}
    return next((i for i, notion in enumerate(_NAME_NOTIONS) if notion in notions), None)


def _name_field(ref: str, shown: Mapping[str, Any], types: _Types) -> str | None:
    """The field of ``shown`` whose text names the object (:func:`_name_rank`; of two
    alike, the first by name), ``None`` when none holds words (the object's ref sent as
    its name is none: a raw ref never reads in ``text``)."""
    type_name = ref.split(":", 1)[0]
    ranked = [
        (rank, key)
        for key, value in shown.items()
        if isinstance(value, str)
        and (rank := _name_rank(type_name, key, types)) is not None
        and value.strip() != ref
        and quoted(value)
    ]
    return min(ranked)[1] if ranked else None


def _name_keys(
    ref: str, shown: Mapping[str, Any] | None, types: _Types, avoid: frozenset[str]
) -> list[str]:
    """The fields of ``shown`` an object's short name says (:func:`_object_name`): the
    name or title it showed (:func:`_name_field`); else up to two of its tastes; else,
    with no taste shown, up to two of its other fields in :func:`_rank`'s order (one in
    ``avoid`` only when no other names it); ``[]`` when nothing names it."""
    shown = shown or {}
    name = _name_field(ref, shown, types)
    if name is not None:
        return [name]
    type_name = ref.split(":", 1)[0]
    if types is None or types.type_label(type_name, "en") is None:
        return []
    order = _declared(types, type_name)
    tastes = [
        k
        for k, v in sorted(shown.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
        if types.is_taste(f"{type_name}.{k}") and not isinstance(v, bool) and v is not None
    ][:_DESCRIBED]
    if tastes:
        return tastes
    ranked = {
        k: rank
        for k, v in shown.items()
        if v is not None
        and not isinstance(v, bool | list | dict)
        and (rank := _rank(types, f"{type_name}.{k}")) is not None
    }
    # A field that changed names the object (by the value shown) only when nothing else
    # does: "variante (preço 1.299,90): preço caiu ...", never "1 item" and no change said.
    steady = [k for k in ranked if k not in avoid] or list(ranked)
    return sorted(steady, key=lambda k: (ranked[k], order.get(k, len(order)), k))[:_DESCRIBED]


def _object_name(
    ref: str,
    shown: Mapping[str, Any] | None,
    types: _Types,
    language: str,
    keys: Sequence[str],
    telling: Sequence[str] = (),
    values: ValueWords | None = None,
) -> str | None:
    """What a colleague calls an object, saying the values of ``keys``
    (:func:`_name_keys`) and then those of ``telling`` (fields that tell it from a
    look-alike, each after its label): the name or title it showed, quoted (words from
    outside: :func:`~turnstream.core.constraints.text.quoted`; ``“Nova” (preço
    99,90)``); else its type's label and a short description (``variante (azul-marinho,
    “aurora”)``, ``variante (tamanho M)``, ``variante (vermelho, tamanho M)``); else
    None (the text counts it). A taste is said alone, a number with its field's unit or
    after its label (``item (“nova”, 64 GB)``), never bare; another field after its
    label."""
    shown = shown or {}
    if not keys:
        return None
    type_name = ref.split(":", 1)[0]
    values = values or value_words_of(types, language)

    def labelled(key: str) -> str:
        assert types is not None
        attr = f"{type_name}.{key}"
        return f"{types.label(attr, language) or key} {values.word(attr, shown[key])}"

    extra = [labelled(k) for k in telling if types is not None]
    if _name_rank(type_name, keys[0], types) is not None:  # its name (``_name_keys``)
        name = quoted(shown[keys[0]])
        return f"{name} ({', '.join(extra)})" if extra else name
    label = None if types is None else types.type_label(type_name, language)
    if label is None or types is None:
        return None
    said = [
        _described(types, values, f"{type_name}.{k}", shown[k], language)
        if types.is_taste(f"{type_name}.{k}")
        else labelled(k)
        for k in keys
    ]
    return f"{label} ({', '.join([*said, *extra])})"


#: The order fields tell alike objects apart in: what the person chose by first.
_TELLING_ORDER = {"taste": 0, "attribute": 1, "state": 2}
#: A price (a state field of class money) comes after every other field.
_MONEY_RANK = 3


def _telling_fields(
    refs: Sequence[str],
    shown: Mapping[str, Mapping[str, Any]],
    types: ObjectTypes,
    last: frozenset[str] = frozenset(),
) -> list[str]:
    """The fewest fields whose shown values tell ``refs`` apart, in :func:`_rank`'s order
    (tastes, then attributes such as the size, then state such as the stock, a price
    last; never identifiers, sensitive fields or flags such as ``in_stock``), fields of
    one rank as the types document declares them (``price_sale`` before
    ``price_list``), and those in ``last`` (a field whose change the block says) after
    all others: each field is added only while it tells some object from another that
    no field before did (a field tells ``a`` from ``b`` when ``a`` showed it and ``b``
    did not show the same value)."""
    type_name = refs[0].split(":", 1)[0]
    keys = sorted(
        k
        for k in {k for ref in refs for k in shown.get(ref, {})}
        if _name_rank(type_name, k, types) is None
    )
    flags = {k for ref in refs for k, v in shown.get(ref, {}).items() if isinstance(v, bool)}
    ranks = {
        k: r for k in keys if k not in flags and (r := _rank(types, f"{type_name}.{k}")) is not None
    }
    order = _declared(types, type_name)
    readable = sorted(ranks, key=lambda k: (k in last, ranks[k], order.get(k, len(order)), k))
    # The name of refs[i] still fits refs[j] when j showed what i showed of every field
    # taken so far that i showed (``says[i]``): j is in i's bucket of the index of those
    # fields. Indexes, not pairs: a group of 2,000 look-alikes is 2,000 entries, not 4M.
    columns = {key: [_said(shown.get(ref, {}).get(key)) for ref in refs] for key in readable}
    says: list[tuple[str, ...]] = [()] * len(refs)
    indexes: dict[tuple[str, ...], dict[tuple[Any, ...], list[int]]] = {}

    def bucket(i: int) -> list[int]:
        """The objects refs[i]'s name still fits (i among them)."""
        fields = says[i]
        if fields not in indexes:
            index: dict[tuple[Any, ...], list[int]] = {}
            for j in range(len(refs)):
                index.setdefault(tuple(columns[k][j] for k in fields), []).append(j)
            indexes[fields] = index
        return indexes[fields][tuple(columns[k][i] for k in fields)]

    telling: list[str] = []
    for key in readable:
        if all(len(bucket(i)) == 1 for i in range(len(refs))):
            break  # every name fits its object alone
        column = columns[key]
        # ``key`` tells i from some j its name fits: i showed it, and not all of them alike
        # (one look at each bucket: the answer is the same for every i of it).
        told, looked = False, set()
        for i in range(len(refs)):
            members = bucket(i)
            if column[i] is None or id(members) in looked:
                continue
            looked.add(id(members))
            if len({column[j] for j in members}) > 1:
                told = True
                break
        if told:
            telling.append(key)
            says = [(*f, key) if column[i] is not None else f for i, f in enumerate(says)]
    return telling


def _said(value: Any) -> str | None:
    """A shown value as names compare it; ``None`` for one not shown."""
    return None if value is None else json.dumps(value, sort_keys=True)


#: Rounds of telling look-alikes apart at most (each may join objects the last set apart).
_ROUNDS = 4


def _alike(refs: Sequence[str], fitting: Callable[[str], Sequence[str]]) -> list[list[str]]:
    """``refs`` in groups of look-alikes: two are in one group when the name of one fits
    the other (``fitting(a)``: the objects ``a``'s name fits, ``a`` among them; the same
    list for objects that say the same values), and with every object either fits;
    groups of one left out."""
    group_of = {ref: ref for ref in refs}

    def root(ref: str) -> str:
        while group_of[ref] != ref:
            group_of[ref] = group_of[group_of[ref]]  # halve the path
            ref = group_of[ref]
        return ref

    joined: set[int] = set()  # the lists already in one group
    for a in refs:
        fits = fitting(a)
        for b in fits[:1] if id(fits) in joined else fits:
            group_of[root(b)] = root(a)
        joined.add(id(fits))
    groups: dict[str, list[str]] = {}
    for ref in refs:
        groups.setdefault(root(ref), []).append(ref)
    return [group for group in groups.values() if len(group) > 1]


def object_names(
    refs: Iterable[str],
    shown: Mapping[str, Mapping[str, Any]] | None,
    types: _Types,
    language: str,
    *,
    changed: Mapping[str, Iterable[str]] | None = None,
) -> dict[str, str]:
    """Each object's name in the block's text (ref -> words), told apart: an object
    whose name would fit another of ``refs`` (``variante (vermelho)`` beside two red
    variants, or beside ``variante (vermelho, tamanho M)``) gets, with every object it
    fits, the fields that tell them apart (:func:`_telling_fields`), so no name in the
    block is a shorter name of another object; an object whose name still fits another
    is left unnamed (the text counts it).

    Objects are told apart among ``refs`` alone (the objects one block names): an
    object reads as short as the block allows, and longer only beside a look-alike.
    ``changed``: ref -> the fields that changed since the person saw it, never in its
    short name and used to tell look-alikes apart only when nothing else does (the
    value as shown: ``variante (vermelho, preço 199,90)`` beside "preço subiu de 199,90
    para 219,90")."""
    shown = shown or {}
    ordered = sorted(set(refs))
    values = value_words_of(types, language)
    avoided = {ref: frozenset(fields) for ref, fields in (changed or {}).items()}
    keys = {
        ref: found
        for ref in ordered
        if (found := _name_keys(ref, shown.get(ref), types, avoided.get(ref, frozenset())))
    }
    base = dict(keys)
    telling_of: dict[str, list[str]] = {}

    # What each object showed, as names compare it, and what its name starts from: its
    # type, and its quoted name when it has one (computed once, for every index).
    said_of = {ref: {k: _said(v) for k, v in shown.get(ref, {}).items()} for ref in keys}
    head = {
        ref: (
            ref.split(":", 1)[0],
            quoted(shown[ref][k[0]])
            if _name_rank(ref.split(":", 1)[0], k[0], types) is not None
            else None,
        )
        for ref, k in keys.items()
    }

    def said_by(a: str) -> list[str]:
        """The fields ``a``'s name says (its quoted name is in its head)."""
        return keys[a][1:] if head[a][1] is not None else keys[a]

    # The objects by their head and the values they showed of some fields: the objects a
    # name fits are those that showed every value it says, found in one index per set of
    # fields names say, never by comparing every two objects (a person who disliked
    # 2,000 objects).
    by_fields: dict[tuple[str, ...], dict[tuple[Any, ...], list[str]]] = {}

    def fitting(a: str) -> Sequence[str]:
        """The objects ``a``'s name fits (``a`` among them): their head, and every value
        it says, alike (a name says nothing another object did not show the same way)."""
        fields = tuple(said_by(a))
        index = by_fields.get(fields)
        if index is None:
            index = by_fields[fields] = {}
            for ref in keys:
                index.setdefault((head[ref], *(said_of[ref].get(k) for k in fields)), []).append(
                    ref
                )
        return index.get((head[a], *(said_of[a].get(k) for k in fields)), [])

    named = list(keys)
    for _ in range(_ROUNDS):  # names only lengthen: look-alikes a round joins are next
        alike = _alike(named, fitting) if types is not None else []
        grew = False
        for group in alike:
            assert types is not None
            last = frozenset().union(*(avoided.get(ref, frozenset()) for ref in group))
            telling = _telling_fields(group, shown, types, last)
            for ref in group:
                mine, had = shown.get(ref, {}), telling_of.get(ref, [])
                more = [
                    k
                    for k in telling
                    if k not in base[ref] and k not in had and mine.get(k) is not None
                ]
                grew = grew or bool(more)
                telling_of[ref] = [*had, *more]
                keys[ref] = [*base[ref], *telling_of[ref]]
        if not grew:
            break
    names = {
        ref: name
        for ref in named
        if len(fitting(ref)) == 1
        and (
            name := _object_name(
                ref, shown.get(ref), types, language, base[ref], telling_of.get(ref, ()), values
            )
        )
    }
    return names


#: Operators that name the person's value (``size = M``, ``size in [M, L]``).
_NAMING = frozenset({"eq", "in"})
#: Operators that say what the person wants of a field: a value, some values or a range
#: (``storage from 128 GB``); a refusal (``not_in``, ``ne``, ``not_between``) says only
#: what they do not want.
_WANTING = frozenset({"eq", "in", "lt", "lte", "gt", "gte", "between"})


def _knows(row: Mapping[str, Any]) -> bool:
    """Whether a standing entry tells enough of its field to ask nothing: an attribute,
    a hard requirement or a stated preference with a wanting operator (:data:`_WANTING`:
    "storage from 128 GB" needs no "ask first: storage"), an inferred liking (an
    affinity: "seems to like navy" knows the colour)."""
    if row.get("lost") or row.get("attr") is None:
        return False
    if "value" in row:  # an attribute (stated, inferred and asked, or acted on)
        return True
    if row.get("op") not in _WANTING:
        return False
    if "relax" in row:
        return True
    said = not row.get("inferred") or row.get("kind") == "affinity"
    return row.get("polarity") == "prefer" and said


def _question(types: _Types, attr: str) -> str:
    """The field a question about ``attr``'s notion is worded by: the family's first
    attribute field (:func:`family_field`), whichever of its fields was asked or clashed;
    else ``attr``."""
    family = _family(types, attr)
    return (family_field(types, family) if types and family else None) or attr


def _ask(
    request: BlockRequest,
    asked: Sequence[str],
    known_rows: Sequence[Mapping[str, Any]],
    conflicts: Sequence[dict[str, Any]],
    by_id: Mapping[str, str | None],
    types: _Types,
) -> list[str]:
    """What to ask before assuming, one question per notion (:func:`_notion`), worded by
    :func:`_question`: for whom (a delivery elsewhere); each asked notion (``asked``: the
    fields the agent's names mean, :func:`resolve_asked`) no standing entry knows enough
    of (:func:`_knows`: a ``person.clothing_size`` M, or a hard ``size = M``, knows the
    ``size``); each notion of a conflict, which names its question as ``ask`` (the text
    says what each side said). A sensitive field is asked like any other, by its name,
    when the agent asks it and the person never spoke of it (what they said is known:
    the block acts on it)."""
    ask = ["for_whom"] if request.delivery_elsewhere else []
    known = {_notion(types, row["attr"]) for row in known_rows if _knows(row)}
    known_attrs = [row["attr"] for row in known_rows if _knows(row)]
    asked_notions: set[str] = set()
    for attr in asked:
        question, notion = _question(types, attr), _notion(types, attr)
        if question in ask or notion in known or notion in asked_notions:
            continue
        asked_notions.add(notion)
        if types is None and any(_asked(k, (attr,), types) for k in known_attrs):
            continue  # without types, ``size`` is known by ``item_variant.size``
        ask.append(question)
    for conflict in conflicts:
        attrs = [a for a in (by_id.get(i) for i in conflict["entries"]) if a]
        if not attrs:
            continue  # two company rules: not the person's to answer
        conflict["ask"] = _question(types, by_id.get(conflict["kept"]) or attrs[0])
        if conflict["ask"] not in ask:
            ask.append(conflict["ask"])
    return ask


def _said_by_hard(
    hard_rows: Sequence[Mapping[str, Any]],
    attr_rows: Sequence[Mapping[str, Any]],
    types: _Types,
    ids: ValueIds,
) -> frozenset[str]:
    """The attributes a standing hard entry already says: one of its family naming that
    value alone (``Obrigatório: tamanho M`` says "A pessoa: tamanho M"), in a measuring
    system that does not differ. Their lines are left out of ``text``; the JSON keeps
    them."""
    said = set()
    for attr in (a for a in attr_rows if not a.get("lost")):
        notion, value = _notion(types, attr["attr"]), ids.key(attr["attr"], attr["value"])
        for hard in hard_rows:
            if hard.get("lost") or hard.get("label") or hard.get("op") not in _NAMING:
                continue
            if hard["attr"] is None or _notion(types, hard["attr"]) != notion:
                continue
            declared = None if types is None else types.field(hard["attr"])
            system = None if declared is None else declared.system
            if attr.get("system") and system and normal(attr["system"]) != normal(system):
                continue
            if {ids.key(hard["attr"], v) for v in hard["values"]} == {value}:
                said.add(attr["id"])
    return frozenset(said)


def version_of(block: Mapping[str, Any]) -> str:
    """``cv_`` and 16 hex digits of SHA-256 over the block's canonical JSON, without
    ``text``, the ``language`` it is written in, and ``version``."""
    content = {k: v for k, v in block.items() if k not in ("text", "language", "version")}
    canonical_json = json.dumps(content, sort_keys=True, separators=(",", ":"))
    return "cv_" + hashlib.sha256(canonical_json.encode()).hexdigest()[:16]


def build_block(
    request: BlockRequest,
    preferences: Iterable[StatedPreference],
    attributes: Iterable[StatedAttribute],
    inferences: Iterable[Inference],
    presented: Iterable[Presented],
    disliked: Iterable[Disliked],
    rules: Iterable[CompanyRule],
    now: datetime,
    *,
    labels: Mapping[str, str] | None = None,
    types: ObjectTypes | None = None,
    soft_max: int | None = None,
    shown: Mapping[str, Mapping[str, Any]] | None = None,
    current: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The constraints block of ``request.profile_id`` for ``request.for_``, at ``now``.

    Only entries of the requested ``for`` enter; only active inferences (an affinity
    only on a field ``types`` declares a taste); a gift has no attributes. A constraint
    said several times is one entry, the newest, with every ``origins``. ``soft`` holds
    the ``soft_max`` strongest entries at most (stated ones first, then by weight).
    ``text`` names each field by ``labels[type.field]``, else by its label in ``types``
    in the request's language, else by its name in words; each object by its name or
    title in ``shown`` (ref -> the values it showed), else its type's label and a short
    description, a few at most (never a raw ref: refs stay in the JSON), two objects
    never in the same words (:func:`object_names`). An object the person
    disliked is excluded, and neither an interest nor a no-interest; an object is never
    both; an object that breaks a hard entry as it is now (its state in ``current`` over
    what it showed), or whose shown values are a value a stated avoid names, is no
    interest; a stated entry absorbs an inferred one on the same value, a hard entry
    naming one value the line of a stated attribute of that value. Values are compared,
    here and in conflicts, by the value they name (:mod:`value_ids`: ``Black``,
    ``negro`` and ``preto`` alike), a size without a system as the size in the only
    system known for it (:func:`_systems`). ``ask`` holds the
    asked notions no entry knows and those of each conflict, each judged alike whichever
    of its names was asked, and each sensitive field whose newest statement nothing reads
    (:func:`_acts`); ``asked_unknown`` the names that name no field
    (:func:`resolve_asked`). ``already_presented`` carries each object's state as it
    was shown; with ``current`` (ref -> its state read now, each price read by
    :func:`read_current`, which raises :class:`UnreadableState` for one that is no
    price) it says what changed since (never for an excluded object or one that breaks
    a hard entry now), and ``text`` says it too, on one line, the objects the person
    wants first.
    """
    _check_aware(now)
    language = language_of(request.language)
    asked = resolve_asked(request.asked, types)
    ids = value_ids(types)

    def sensitive(attr: str) -> bool:
        return types is not None and types.is_sensitive(attr)

    # What was said on a sensitive field serves its act, never its words.
    preferences = list(preferences)
    attributes = list(attributes)
    said_sensitive: list[StatedPreference | StatedAttribute] = [
        *(p for p in _current(request, preferences, now) if sensitive(p.attr)),
        *(a for a in attributes if a.for_ == request.for_ and sensitive(a.attr)),
    ]
    preferences = [p for p in preferences if not sensitive(p.attr)]
    attributes = [a for a in attributes if not sensitive(a.attr)]
    prefs, origins = _deduplicated(_current(request, preferences, now), ids)
    mine = [
        inf
        for inf in inferences
        if inf.status == "active"
        and inf.for_ == request.for_
        and inf.profile_id == request.profile_id
        and inf.space_id == request.space_id
        and (inf.kind != "affinity" or (types is not None and types.is_taste(inf.attr)))
    ]
    excluded = {item.ref for item in disliked}
    mine = [
        inf
        for inf in mine
        if not (inf.kind in _ABOUT_OBJECTS and inf.value in excluded)
        and not _absorbed(inf, prefs, ids)
    ]
    # One object is never both interesting and not: the interest stands (it rests on
    # what the person did, the implicit negative on what they did not).
    interesting = {inf.value for inf in mine if inf.kind == "interest"}
    mine = [i for i in mine if not (i.kind == "implicit_negative" and i.value in interesting)]
    hard_rows, hard = _hard(prefs, origins, types, ids)
    current = read_current(current or {}, types, language)

    def breaks_now(ref: str, rows: Sequence[Mapping[str, Any]] | None = None) -> bool:
        """Whether ``ref`` as it is now (its state in ``current`` over what it showed)
        breaks a hard entry (of ``rows``; all by default)."""
        state = {**((shown or {}).get(ref) or {}), **(current.get(ref) or {})}
        return breaks(ref, state, hard_rows if rows is None else rows, ids)

    # An object that breaks what the person requires, as it is now, is no interest to
    # offer again (clicked in black before saying "not black"; over the price limit now).
    mine = [i for i in mine if not (i.kind == "interest" and breaks_now(str(i.value)))]
    # Nor is one whose shown values are a value the person said they would rather avoid
    # ("would rather avoid Apple" beside an interest in an Apple phone): stated over
    # inferred, as above.
    avoided_rows = [
        {"attr": p.attr, "op": refusing(_AVOIDED.get(p.op, p.op)), "values": p.values}
        for p in prefs
        if p.strength == "avoid"
    ]
    mine = [
        i
        for i in mine
        if not (
            i.kind == "interest"
            and breaks(str(i.value), (shown or {}).get(str(i.value)), avoided_rows, ids)
        )
    ]
    # The hard entries each object shown breaks as it is now (its state in ``current``
    # over what it showed). What changed is never said of an object the agent must not
    # show: one excluded, or one that breaks a hard entry as it is now (one that broke
    # it when shown and fits now is said: its price came down under the limit).
    presented = list(presented)
    broken = {
        item.ref: [str(row["id"]) for row in hard_rows if breaks_now(item.ref, [row])]
        for item in presented
    }
    silent = frozenset(excluded) | {ref for ref in current if broken.get(ref)}
    acted = _acts(said_sensitive, types, language)
    hard_rows, hard = [*acted.hard_rows, *hard_rows], [*acted.hard, *hard]
    soft_rows, soft = _soft(
        prefs, origins, [i for i in mine if i.kind in _SOFT_KINDS], soft_max, ids
    )
    soft_rows = [*acted.soft_rows, *soft_rows]
    if request.for_ == "gift":  # a gift never becomes an attribute of anyone
        attr_rows, attrs = [], []
    else:
        said = [a for a in attributes if a.for_ == request.for_]
        inferred = [i for i in mine if i.kind == "attribute"]
        required = [p for p in prefs if p.strength in ("must", "prefer")]
        attr_rows, attrs = _attributes(
            request, said, inferred, types, required, (*asked.fields, *asked.unknown), ids
        )
    rule_rows, rule_entries = _rules(rules, ids)
    conflicts, lost = _conflicts([*hard, *soft, *attrs, *rule_entries])
    for rows, section in (
        (hard_rows, "hard"),
        (soft_rows, "soft"),
        (attr_rows, "attributes"),
        (rule_rows, "rules"),
    ):
        _mark_lost(rows, section, lost)
    relaxable = [row["id"] for row in hard_rows if row["relax"] == "ask" and not row.get("lost")]
    block: dict[str, Any] = {
        "subject": {"profile_id": request.profile_id, "for": request.for_},
        "hard": hard_rows,
        "soft": soft_rows,
        "attributes": attr_rows,
        "exclude": sorted(excluded),
        "already_presented": _presented(
            presented, shown or {}, current, types, silent, language, broken
        ),
        "relaxation_order": ["soft", *relaxable],
        "precedence": list(PRECEDENCE),
        "rules": rule_rows,
        "conflicts": conflicts,
        "ask": [],
    }
    # An asked name no field is known by, declared or in this person's entries: said
    # back, so that no question is never read as "already known" (absent when none).
    unknown = [
        n for n in asked.unknown if not any(_asked(r["attr"], (n,), None) for r in attr_rows)
    ]
    if unknown:
        block["asked_unknown"] = unknown
    by_id = {row["id"]: row.get("attr") for row in [*hard_rows, *soft_rows, *attr_rows]}
    # A sensitive field the person spoke of is known: the block acts on it, never asks
    # it (also when they said there is nothing to act on, "sem restrições"); unless what
    # they said last is not understood: then it asks (by the field's name, never the
    # words). One they never spoke of is asked only when the agent asks it.
    spoken = [{"attr": fact.attr, "value": None} for fact in said_sensitive]
    known_rows = [*attr_rows, *spoken, *hard_rows, *soft_rows]
    block["ask"] = _ask(request, asked.fields, known_rows, conflicts, by_id, types)
    for question in (_question(types, attr) for attr in acted.unread):
        if question not in block["ask"]:
            block["ask"].append(question)
    # A field by the types document's words, else the built-in words of its name.
    said_of = [
        str(r["attr"]) for r in [*hard_rows, *soft_rows, *attr_rows, *rule_rows] if "attr" in r
    ]
    words = {
        **builtin_field_labels([*said_of, *block["ask"]], language),
        **(types.labels(language) if types else {}),
        **(labels or {}),
    }
    refs = {*excluded, *(r["values"][0] for r in soft_rows if r["kind"] in _ABOUT_OBJECTS)}
    refs |= {row["ref"] for row in block["already_presented"] if row.get("changed")}
    # A statement on an object field (``item_variant.ref``) names objects too.
    refs |= {
        v for r in [*hard_rows, *soft_rows] if str(r["attr"]).endswith(".ref") for v in r["values"]
    }
    if types is not None:  # the object field by its type's words (``variante``)
        for type_name in {str(r["attr"]).split(".", 1)[0] for r in [*hard_rows, *soft_rows]}:
            label = types.type_label(type_name, language)
            if label is not None:
                words.setdefault(f"{type_name}.ref", label)
    changed = {
        row["ref"]: [c["field"] for c in row["changed"]]
        for row in block["already_presented"]
        if row.get("changed")
    }
    names = object_names((str(r) for r in refs), shown, types, language, changed=changed)
    values = value_words_of(types, language, ids)
    block["language"] = language  # what ``text`` is written in: the SDK's reads say it too
    block["text"] = render_text(
        block,
        request.language,
        words,
        names=names,
        values=values,
        said_by_hard=_said_by_hard(hard_rows, attr_rows, types, ids),
    )
    block["version"] = version_of(block)
    return block
