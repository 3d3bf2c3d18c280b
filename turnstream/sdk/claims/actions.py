"""Actions: what happens to a claim that does not stand, and to the output.

``matched``, ``quoted_found`` and ``anchored`` take no action; ``not_checked`` is counted;
``internal_text_found`` blocks; every other verdict takes the category's action for the
output's context (``unsupported`` takes ``natures.model`` when set).

A rewrite is unequivocal only when all five hold (else the claim is marked ``warn``):
the output is mutable; the class is money, percent, date or duration; the number is one
value, not a range; the verdict is ``stale`` and the number copies one field of one object
whose fresh value in the turn is different; no other number of its class is in the sentence.
The fresh value is written the way the number was (its currency, separators, decimals).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from turnstream.sdk.claims.contract import Category
from turnstream.sdk.claims.detect import Candidate, NumberMention
from turnstream.sdk.claims.records import STANDING, ClaimRecord, RecordAction
from turnstream.sdk.claims.verdicts import Judgement

__all__ = [
    "REWRITABLE_CLASSES",
    "Applied",
    "apply_actions",
    "decide",
    "rewrite_text",
    "unequivocal",
]

#: Only these classes are ever rewritten (a dose, a size, an identifier never are).
REWRITABLE_CLASSES = frozenset({"money", "percent", "date", "duration"})
_DIGITS = re.compile(r"\d(?:[\d.,\s]*\d)?")
_DMY = re.compile(r"^(\d{1,2})([/.-])(\d{1,2})(?:\2(\d{2}|\d{4}))?\Z")


def _format_like(written: str, value: float) -> str | None:
    """``value`` with the separators and decimals of ``written`` (the digits of a mention)."""
    marks = [c for c in written if c in ".,"]
    decimal_mark, decimals = "", 0
    if marks:
        last = marks[-1]
        tail = written[written.rfind(last) + 1 :]
        # Both marks: the last is the decimal one. One mark once: decimals unless three digits
        # follow ("1.299" is a thousand in pt and es).
        if len(set(marks)) == 2 or (len(marks) == 1 and len(tail) != 3):
            decimal_mark, decimals = last, len(tail)
    thousands = next((c for c in marks if c != decimal_mark), "")
    if decimals == 0 and not float(value).is_integer():
        return None  # "R$ 199" cannot carry 189.90 unequivocally
    whole, _, frac = f"{value:,.{decimals}f}".partition(".")
    whole = whole.replace(",", thousands)
    return f"{whole}{decimal_mark}{frac}" if decimals else whole


def rewrite_text(mention: NumberMention, fresh: object, lang: str) -> str | None:
    """The mention's text with ``fresh`` written in its place, or None when that is not plain."""
    if mention.cls == "date":
        return _rewrite_date(mention.text, fresh, lang)
    if isinstance(fresh, bool) or not isinstance(fresh, int | float):
        return None
    found = list(_DIGITS.finditer(mention.text))
    if len(found) != 1:
        return None
    digits = found[0]
    new = _format_like(digits.group(), float(fresh))
    if new is None:
        return None
    return mention.text[: digits.start()] + new + mention.text[digits.end() :]


def _rewrite_date(written: str, fresh: object, lang: str) -> str | None:
    if not isinstance(fresh, str):
        return None
    try:
        day = date.fromisoformat(fresh[:10])
    except ValueError:
        return None
    m = _DMY.match(written.strip())
    if m is None:
        return None  # a date in words: not rewritten
    sep, year = m.group(2), m.group(4)
    first, second = (day.month, day.day) if lang == "en" else (day.day, day.month)
    width = len(m.group(1))
    out = f"{first:0{width}d}{sep}{second:0{len(m.group(3))}d}"
    if year:
        out += sep + (f"{day.year:04d}" if len(year) == 4 else f"{day.year % 100:02d}")
    return out


def unequivocal(
    cand: Candidate,
    judgement: Judgement,
    mutable: bool,
    numbers_in_sentence: Sequence[NumberMention],
) -> bool:
    """Whether all five conditions of a rewrite hold (a ``mismatch`` with one object and one
    value counts as the stale copy does when the category's ``rewrite_mismatch`` is on)."""
    m = cand.mention
    return (
        mutable
        and m is not None
        and m.cls in REWRITABLE_CLASSES
        and not m.is_range
        and not isinstance(m.value, tuple | list)
        and (
            judgement.verdict == "stale"
            or (judgement.verdict == "mismatch" and cand.category.actions.rewrite_mismatch)
        )
        and judgement.fresh is not None
        and not any(o.cls == m.cls and o.start != m.start for o in numbers_in_sentence)
    )


def decide(category: Category, verdict: str, context: str | None) -> str:
    """The contract's action for a verdict (before a rewrite is tested): the record's action."""
    if verdict in STANDING:
        return "none"
    if verdict == "not_checked":
        return "count"
    if verdict == "internal_text_found":
        return "block"
    if verdict == "unsupported" and category.natures.model is not None:
        return category.natures.model
    return category.actions.for_context(context)


_RECORDED: dict[str, RecordAction] = {
    "none": "none",
    "block": "block",
    "warn": "warn",
    "count": "count",
    "rewrite_if_unequivocal": "rewrite",
    "discard_anchor_and_count": "discard_anchor",
}


def record_action(action: str) -> RecordAction:
    """The action a claim record names for a contract action."""
    return _RECORDED[action]


@dataclass(frozen=True, slots=True)
class Applied:
    """The output after the actions."""

    text: str
    acted: bool
    held_for_review: bool


def apply_actions(
    text: str,
    records: Sequence[ClaimRecord],
    edits: Sequence[tuple[int, int, str]],
    mutable: bool,
) -> Applied:
    """The output with blocks and rewrites applied (``edits``: passage start, end, new text).

    In an immutable output, a block sends the whole output to a person, untouched; nothing
    is ever rewritten there. Overlapping passages: the outer one is replaced.
    """
    blocking = any(r.action == "block" for r in records)
    if not mutable:
        return Applied(text, blocking, blocking)
    if not edits:
        return Applied(text, False, False)
    kept: list[tuple[int, int, str]] = []
    for s, e, new in sorted(edits, key=lambda t: (t[0], -t[1])):
        if kept and s < kept[-1][1]:
            continue  # inside a passage already replaced
        kept.append((s, e, new))
    out = text
    for s, e, new in reversed(kept):
        out = out[:s] + new + out[e:]
    return Applied(out, True, False)
